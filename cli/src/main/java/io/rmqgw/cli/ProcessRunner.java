package io.rmqgw.cli;

import io.rmqgw.cli.embedded.EmbeddedCluster;
import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.metrics.GatewayMetrics;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The real runner: the embedded cluster (when enabled) and the gateway in this JVM, stopped by a
 * shutdown hook. A stop that arrives during start-up waits for the start-up to finish (the embedded
 * broker cannot be interrupted half-way), then stops everything.
 */
final class ProcessRunner implements GatewayRunner {

    static final String CLUSTER_NAME = "DefaultCluster";
    static final String BROKER_NAME = "broker-a";

    /** A stop during start-up waits at most this long for it (the embedded broker's registration is bounded). */
    private static final Duration STARTUP_WAIT = EmbeddedCluster.REGISTRATION_TIMEOUT.plusSeconds(30);

    private final Object lock = new Object();
    private final CountDownLatch startupDone = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean stopRequested;
    private EmbeddedCluster cluster;
    private Gateway gateway;
    private Duration drain = Duration.ZERO;
    private PrintWriter out;

    private final GatewayMetrics metrics = GatewayMetrics.prometheus();

    @Override
    public Started start(GatewayConfig config, PrintWriter out) throws Exception {
        this.out = out;
        this.drain = config.drainTimeout();
        Thread hook = new Thread(this::onShutdown, "rmqgw-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            GatewayConfig effective = config;
            String embeddedBroker = null;
            if (config.embedded().enabled()) {
                Path storeDir = Path.of(config.embedded().storeDir()).toAbsolutePath().normalize();
                out.println("starting the embedded RocketMQ name server (127.0.0.1:" + config.embedded().namesrvPort()
                    + ") and broker (127.0.0.1:" + config.embedded().brokerPort() + ") in " + storeDir
                    + "; this takes about half a minute");
                out.flush();
                EmbeddedCluster c;
                try {
                    c = EmbeddedCluster.start(storeDir, config.embedded().namesrvPort(), config.embedded().brokerPort(),
                        CLUSTER_NAME, BROKER_NAME);
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
            Gateway g = Gateway.start(effective, metrics);
            synchronized (lock) {
                gateway = g;
            }
            return new Started(effective, g.listenAddress(), g.brokerListeners(), embeddedBroker);
        } catch (Exception | Error e) {
            stopAll();
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

    @Override
    public void runUntilStopped(Started started) throws InterruptedException {
        stopped.await();
    }

    private void onShutdown() {
        stopRequested = true;
        try {
            if (!startupDone.await(STARTUP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                println("rmqgw: start-up did not finish in " + STARTUP_WAIT.toSeconds() + "s; exiting without stopping it");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stopAll();
        stopped.countDown();
    }

    /** Stops the gateway (draining), then the embedded cluster; idempotent. */
    private void stopAll() {
        Gateway g;
        EmbeddedCluster c;
        synchronized (lock) {
            g = gateway;
            c = cluster;
            gateway = null;
            cluster = null;
        }
        if (g != null) {
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
            println("stopping the embedded RocketMQ broker and name server");
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
    static final class StartException extends Exception {
        StartException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
