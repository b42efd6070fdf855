package io.rmqgw.gateway.runtime;

import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.ReloadResult;
import io.rmqgw.gateway.admin.ReloadOutcome;
import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.LoggingConfig;
import io.rmqgw.gateway.discovery.NamesrvDiscovery;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reloads a running gateway's configuration, whatever asked for it (the file changed, SIGHUP,
 * {@code POST /reload}, {@code rmqgw reload}): reads the configuration again from its source (the file plus
 * the command-line overrides the process started with), and applies it with {@link Gateway#reload}. An
 * invalid configuration is refused with its path and reason and the running one stays in force. Every
 * reload is logged and counted ({@code rmqgw.config.reloads{result}}); one reload runs at a time, on a
 * thread of its own.
 *
 * <p>On top of {@link Gateway#reload}: log levels go to the logging backend ({@code logging.levels}), and
 * with name-server discovery the discovered list stays in force (the URL wins over {@code upstream.namesrv}
 * once it answered) while a new URL or interval takes effect.
 */
public final class ConfigReloader implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConfigReloader.class);

    /** The applied-list entry for changed log levels. */
    public static final String LOGGING = "logging.levels";

    private final Gateway gateway;
    private final GatewayMetrics metrics;
    private final Supplier<GatewayConfig> source;
    private final String sourceName;
    private final UnaryOperator<GatewayConfig> prepare;
    private final NamesrvDiscovery discovery;
    private final Consumer<LoggingConfig> logLevels;
    private final ExecutorService executor;
    private LoggingConfig levelsInForce;
    private volatile boolean closed;

    private ConfigReloader(Builder b) {
        this.gateway = b.gateway;
        this.metrics = b.metrics;
        this.source = b.source;
        this.sourceName = b.sourceName;
        this.prepare = b.prepare;
        this.discovery = b.discovery;
        this.logLevels = b.logLevels;
        this.levelsInForce = b.gateway.config().logging();
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "rmqgw-reload");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * @param source reads the configuration again (throws {@link ConfigException} for an invalid one)
     */
    public static Builder builder(Gateway gateway, GatewayMetrics metrics, Supplier<GatewayConfig> source) {
        return new Builder(gateway, metrics, source);
    }

    /** Reloads on the reload thread; the future never completes exceptionally. */
    public CompletableFuture<ReloadOutcome> reloadAsync(String trigger) {
        if (closed) {
            return CompletableFuture.completedFuture(ReloadOutcome.refused("the gateway is stopping"));
        }
        try {
            return CompletableFuture.supplyAsync(() -> reload(trigger), executor);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.completedFuture(ReloadOutcome.refused("the gateway is stopping"));
        }
    }

    /** Reloads on the calling thread (one reload at a time). */
    public synchronized ReloadOutcome reload(String trigger) {
        ReloadOutcome outcome;
        try {
            outcome = apply(source.get(), trigger);
        } catch (ConfigException e) {
            outcome = ReloadOutcome.refused(e.getMessage());
            log.warn("reload ({}) refused: {}: {}; the running configuration stays in force", trigger, sourceName,
                e.getMessage());
        } catch (RuntimeException e) {
            outcome = ReloadOutcome.refused("cannot apply: " + e);
            log.error("reload ({}) failed; the running configuration stays in force", trigger, e);
        }
        metrics.configReloads().reload(outcome.result().label());
        return outcome;
    }

    private ReloadOutcome apply(GatewayConfig loaded, String trigger) {
        GatewayConfig next = prepare.apply(loaded);
        if (discovery != null) {
            List<HostPort> namesrv = discovery.configure(next.upstream());
            if (!namesrv.equals(next.upstream().namesrv())) {
                if (!next.upstream().namesrv().isEmpty()) {
                    log.debug("upstream.namesrv {} stays unused: {} answered {}", next.upstream().namesrv(),
                        next.upstream().namesrvAddressUrl(), namesrv);
                }
                next = next.withNamesrv(namesrv);
            }
        }
        ReloadResult result = gateway.reload(next);
        List<String> applied = new ArrayList<>(result.applied());
        if (!next.logging().equals(levelsInForce)) {
            if (logLevels != null) {
                logLevels.accept(next.logging());
            }
            levelsInForce = next.logging();
            applied.add(LOGGING);
        }
        gateway.loggingApplied(next.logging());
        if (discovery != null) {
            discovery.reapply(); // a poll may have found a newer list while this reload ran
        }
        // "applied" only when something was: a file whose only change needs a restart applies nothing
        ReloadOutcome.Result r = applied.isEmpty() ? ReloadOutcome.Result.UNCHANGED : ReloadOutcome.Result.APPLIED;
        ReloadOutcome outcome = new ReloadOutcome(r, applied, result.needsRestart(), result.pendingRestart(), null);
        if (!result.needsRestart().isEmpty()) {
            // said once per new value; later reloads list it under pendingRestart only
            log.warn("reload ({}): {} changed in {} but only take effect on a restart; the running values stay",
                trigger, String.join(", ", result.needsRestart()), sourceName);
        }
        if (!applied.isEmpty()) {
            log.info("reload ({}): applied {} from {}", trigger, String.join(", ", applied), sourceName);
        } else {
            log.info("reload ({}): nothing applied from {}{}", trigger, sourceName, result.pendingRestart().isEmpty()
                ? " (unchanged)" : "; pending a restart: " + String.join(", ", result.pendingRestart()));
        }
        return outcome;
    }

    /** Stops taking reloads; {@code POST /reload} answers 503 from now on. */
    @Override
    public void close() {
        closed = true;
        gateway.reloadHandler(null);
        executor.shutdown();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static final class Builder {
        private final Gateway gateway;
        private final GatewayMetrics metrics;
        private final Supplier<GatewayConfig> source;
        private String sourceName = "the configuration";
        private UnaryOperator<GatewayConfig> prepare = UnaryOperator.identity();
        private NamesrvDiscovery discovery;
        private Consumer<LoggingConfig> logLevels;

        private Builder(Gateway gateway, GatewayMetrics metrics, Supplier<GatewayConfig> source) {
            this.gateway = Objects.requireNonNull(gateway);
            this.metrics = Objects.requireNonNull(metrics);
            this.source = Objects.requireNonNull(source);
        }

        /** How logs name the source (the file's path). */
        public Builder describedAs(String name) {
            this.sourceName = Objects.requireNonNull(name);
            return this;
        }

        /** Turns a loaded configuration into the one to run (for example: the embedded name server's address). */
        public Builder prepare(UnaryOperator<GatewayConfig> operator) {
            this.prepare = Objects.requireNonNull(operator);
            return this;
        }

        /** Name-server discovery to reconfigure on each reload, whose list stays in force. */
        public Builder discovery(NamesrvDiscovery d) {
            this.discovery = d;
            return this;
        }

        /** Applies {@code logging.levels} to the logging backend when they change. */
        public Builder logLevels(Consumer<LoggingConfig> applier) {
            this.logLevels = applier;
            return this;
        }

        /** The reloader, also answering {@code POST /reload} on the gateway's admin port. */
        public ConfigReloader build() {
            ConfigReloader reloader = new ConfigReloader(this);
            gateway.reloadHandler(() -> reloader.reloadAsync("POST /reload"));
            return reloader;
        }
    }
}
