package io.rmqgw.gateway.runtime;

import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.admin.AdminServer;
import io.rmqgw.gateway.config.ConfigFileWatcher;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.discovery.NamesrvDiscovery;
import io.rmqgw.metrics.GatewayMetrics;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The gateway process: the embedded cluster (when enabled) and the gateway in this JVM, stopped by a
 * shutdown hook (SIGTERM, SIGINT) in order: reload triggers, discovery, the gateway (draining), the
 * embedded cluster. A stop that arrives during start-up waits for the start-up to finish (the embedded
 * broker cannot be interrupted half-way), then stops everything.
 *
 * <p>Around the gateway: {@code logging.levels} applied to logback, name-server discovery over HTTP
 * ({@code upstream.namesrv-address-url}), and configuration reloads when the file changes, on SIGHUP and on
 * {@code POST /reload}, each reading the file again with the options the process started with.
 */
public final class GatewayProcess implements GatewayRunner {

    /**
     * A stop during start-up waits at most this long for it: the embedded broker's registration is bounded (90 s),
     * plus the rest of the start-up.
     */
    private static final Duration STARTUP_WAIT = Duration.ofMinutes(2);
    /**
     * A stop asked for by a signal ends the process within {@code drain-timeout} plus this, whatever holds it up (an
     * event loop stuck in a system call, a broker that does not let go); the embedded cluster gets {@link #EMBEDDED_STOP}
     * more.
     */
    static final Duration STOP_BOUND = Duration.ofSeconds(10);
    static final Duration EMBEDDED_STOP = Duration.ofSeconds(20);

    private final Object lock = new Object();
    private final CountDownLatch startupDone = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    /** Counted down by a stop signal, the shutdown hook or {@link #stop()}: wakes {@link #runUntilStopped}. */
    private final CountDownLatch wake = new CountDownLatch(1);
    private volatile StopSignals stopSignals;
    private volatile boolean stopRequested;
    private EmbeddedUpstream cluster;
    private Gateway gateway;
    private NamesrvDiscovery discovery;
    private ConfigReloader reloader;
    private ConfigFileWatcher watcher;
    private Sighup sighup;
    private Thread hook;
    private boolean stopDeadlineArmed;
    private PrintWriter out;
    private final LogLevels logLevels;
    private final EmbeddedUpstream.Starter embedded;

    private final GatewayMetrics metrics = GatewayMetrics.prometheus();

    /**
     * @param logLevels applies {@code logging.levels} to the logging backend
     * @param embedded  starts the embedded cluster when {@code embedded.enabled}
     */
    public GatewayProcess(LogLevels logLevels, EmbeddedUpstream.Starter embedded) {
        this.logLevels = Objects.requireNonNull(logLevels);
        this.embedded = Objects.requireNonNull(embedded);
    }

    @Override
    public Started start(GatewayConfig config, PrintWriter out) throws Exception {
        return start(config, null, out);
    }

    @Override
    public Started start(GatewayConfig config, ConfigSource source, PrintWriter out) throws Exception {
        this.out = out;
        Thread hook = new Thread(this::onShutdown, "rmqgw-shutdown");
        this.hook = hook;
        Runtime.getRuntime().addShutdownHook(hook);
        stopSignals = StopSignals.install(this::requestStop);
        try {
            logLevels.apply(config.logging());
            GatewayConfig effective = config;
            String embeddedBroker = null;
            if (config.embedded().enabled()) {
                Path storeDir = Path.of(config.embedded().storeDir()).toAbsolutePath().normalize();
                out.println("starting the embedded RocketMQ name server (127.0.0.1:" + config.embedded().namesrvPort()
                    + ") and broker (127.0.0.1:" + config.embedded().brokerPort() + ") in " + storeDir
                    + "; this takes a few seconds");
                out.flush();
                EmbeddedUpstream c;
                try {
                    c = embedded.start(config.embedded(), storeDir);
                } catch (Exception e) {
                    throw new StartException("the embedded RocketMQ cluster did not start", e);
                }
                synchronized (lock) {
                    cluster = c;
                }
                embeddedBroker = c.brokerAddress();
                effective = config.withNamesrv(List.of(HostPort.parse("embedded name server", c.namesrvAddress())));
            }
            if (stopRequested) {
                throw new StartException("stopped during start-up", null);
            }
            NamesrvDiscovery d = new NamesrvDiscovery(metrics);
            synchronized (lock) {
                discovery = d;
            }
            if (effective.upstream().namesrvAddressUrl() != null) {
                out.println("asking " + effective.upstream().namesrvAddressUrl() + " for the name servers");
                out.flush();
            }
            effective = effective.withNamesrv(d.configure(effective.upstream()));
            Gateway g = Gateway.start(effective, metrics);
            synchronized (lock) {
                gateway = g;
            }
            d.start(g.namesrvUpdater());
            List<String> notes = reloadable(g, source);
            return new Started(effective, g.listenAddress(), g.brokerListeners(), embeddedBroker, notes);
        } catch (Exception | Error e) {
            stopAll();
            closeStopSignals();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it finds everything stopped
            }
            throw e;
        } finally {
            startupDone.countDown();
        }
    }

    /** Sets up reloads: the reloader behind POST /reload, the file watch and SIGHUP. Returns summary lines. */
    private List<String> reloadable(Gateway g, ConfigSource source) {
        List<String> notes = new ArrayList<>();
        String embeddedNamesrv;
        synchronized (lock) {
            embeddedNamesrv = cluster == null ? null : cluster.namesrvAddress();
        }
        GatewayConfig startConfig = g.config();
        ConfigReloader r = ConfigReloader.builder(g, metrics, source == null ? () -> startConfig : source::load)
            .describedAs(source == null ? "the start-up configuration" : source.display())
            .prepare(next -> embeddedNamesrv != null && next.embedded().enabled()
                ? next.withNamesrv(List.of(HostPort.parse("embedded name server", embeddedNamesrv))) : next)
            .discovery(discovery)
            .logLevels(logLevels::apply)
            .build();
        ConfigFileWatcher w = null;
        if (source != null && source.file() != null) {
            try {
                w = ConfigFileWatcher.start(source.file(), ConfigFileWatcher.DEFAULT_DEBOUNCE,
                    () -> r.reloadAsync("file change"));
            } catch (IOException | RuntimeException e) {
                notes.add("cannot watch " + source.display() + " for changes (" + Errors.oneLine(e) + ")");
            }
        }
        Sighup h = Sighup.install(() -> r.reloadAsync("SIGHUP"));
        synchronized (lock) {
            reloader = r;
            watcher = w;
            sighup = h;
        }
        InetSocketAddress admin = g.adminAddress();
        List<String> triggers = new ArrayList<>();
        if (w != null) {
            triggers.add("when " + source.display() + " changes");
        }
        if (h != null) {
            triggers.add("on SIGHUP");
        }
        if (admin != null) {
            String base = "http://" + admin.getHostString() + ":" + admin.getPort();
            notes.add(0, "admin             " + base + AdminServer.METRICS_PATH + ", " + AdminServer.READY_PATH + ", "
                + AdminServer.NSADDR_PATH + ", POST " + AdminServer.RELOAD_PATH);
            triggers.add("on POST " + AdminServer.RELOAD_PATH + " ('rmqgw reload')");
        }
        notes.add("reloads           " + (triggers.isEmpty() ? "none" : String.join(", ", triggers)));
        return notes;
    }

    /**
     * Returns once everything has stopped: after SIGTERM or SIGINT, having stopped it on this thread (the caller
     * then exits 0); after the shutdown hook stopped it (another exit); or after {@link #stop()}.
     */
    @Override
    public void runUntilStopped(Started started) throws InterruptedException {
        wake.await();
        if (stopped.getCount() > 0) {
            stop();
        }
        stopped.await();
    }

    /** A stop signal: the main thread stops everything ({@link #runUntilStopped}); start-up gives up. */
    private void requestStop() {
        stopRequested = true;
        armStopDeadline();
        wake.countDown();
    }

    /**
     * From a signal or the shutdown hook on, the process ends within its bound: a daemon thread halts it (exit code
     * {@link StopDeadline#STOP_OVERRAN}) if the stop has not finished by then. Not armed by {@link #stop()} (tests stop in their JVM).
     */
    private void armStopDeadline() {
        Duration bound;
        synchronized (lock) {
            if (stopDeadlineArmed) {
                return;
            }
            stopDeadlineArmed = true;
            bound = (gateway == null ? Duration.ofSeconds(10) : gateway.config().drainTimeout()).plus(STOP_BOUND)
                .plus(cluster == null ? Duration.ZERO : EMBEDDED_STOP);
        }
        StopDeadline.arm(bound, stopped, code -> {
            System.err.println("rmqgw: the stop did not finish within " + ConfigLoader.formatDuration(bound)
                + " (drain-timeout + " + ConfigLoader.formatDuration(STOP_BOUND) + "); exiting now");
            System.err.flush();
            Runtime.getRuntime().halt(code);
        });
    }

    /** Stops everything as SIGTERM does, without exiting (tests, and the main thread after a stop signal). */
    public void stop() {
        stopRequested = true;
        Thread h = hook;
        if (h != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(h);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
        }
        stopAll();
        closeStopSignals();
        stopped.countDown();
        wake.countDown();
    }

    private void closeStopSignals() {
        StopSignals s = stopSignals;
        stopSignals = null;
        if (s != null) {
            s.close();
        }
    }

    /** The running gateway, or null (tests). */
    public Gateway gateway() {
        synchronized (lock) {
            return gateway;
        }
    }

    /** The reloader, or null before the gateway runs (tests). */
    public ConfigReloader reloader() {
        synchronized (lock) {
            return reloader;
        }
    }

    /** The SIGHUP handler, or null where it cannot be installed (tests). */
    public Sighup sighup() {
        synchronized (lock) {
            return sighup;
        }
    }

    public GatewayMetrics metrics() {
        return metrics;
    }

    private void onShutdown() {
        stopRequested = true;
        armStopDeadline();
        try {
            if (!startupDone.await(STARTUP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                println("rmqgw: start-up did not finish in " + STARTUP_WAIT.toSeconds() + "s; exiting without stopping it");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stopAll();
        stopped.countDown();
        wake.countDown();
    }

    /** Stops the gateway (draining), then the embedded cluster; idempotent. */
    private void stopAll() {
        Gateway g;
        EmbeddedUpstream c;
        ConfigFileWatcher w;
        ConfigReloader r;
        NamesrvDiscovery d;
        Sighup h;
        synchronized (lock) {
            g = gateway;
            c = cluster;
            w = watcher;
            r = reloader;
            d = discovery;
            h = sighup;
            gateway = null;
            cluster = null;
            watcher = null;
            reloader = null;
            discovery = null;
            sighup = null;
        }
        if (w != null) {
            w.close();
        }
        if (h != null) {
            h.close();
        }
        if (r != null) {
            r.close();
        }
        if (d != null) {
            d.close();
        }
        if (g != null) {
            Duration drain = g.config().drainTimeout(); // a reload may have changed it
            println("stopping: no new clients, in-flight requests get up to "
                + ConfigLoader.formatDuration(drain));
            try {
                g.close(drain);
            } catch (RuntimeException e) {
                println("rmqgw: stopping the gateway failed: " + Errors.oneLine(e));
            }
        }
        if (g != null) {
            metrics.close();
        }
        if (c != null) {
            // RocketMQ's store alone waits 3 s for in-flight writes; the whole stop takes 5 to 10 s
            println("stopping the embedded RocketMQ broker and name server (a few seconds)");
            try {
                c.close();
            } catch (RuntimeException e) {
                println("rmqgw: stopping the embedded cluster failed: " + Errors.oneLine(e));
            }
        }
        if (g != null || c != null) {
            println("stopped");
        }
    }

    private void println(String line) {
        PrintWriter w = out;
        if (w != null) {
            w.println(line);
            w.flush();
        }
    }

    /** A start-up step failed; the message says which. */
    public static final class StartException extends Exception {
        StartException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
