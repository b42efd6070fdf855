package io.rmqgw.gateway.runtime;

import io.rmqgw.gateway.config.GatewayConfig;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * What {@code rmqgw start} does once the configuration is settled: start the embedded cluster (when
 * enabled) and the gateway, then run until the process is asked to stop. Tests substitute their own.
 */
public interface GatewayRunner {

    /**
     * Starts everything {@code config} asks for and returns once the gateway accepts clients. On failure,
     * whatever was started is stopped again before this throws.
     *
     * @param out where progress lines go
     */
    Started start(GatewayConfig config, PrintWriter out) throws Exception;

    /**
     * {@link #start(GatewayConfig, PrintWriter)}, knowing where {@code config} came from so that it can be
     * reloaded (file watch, SIGHUP, {@code POST /reload}). Runners that do not reload ignore {@code source}.
     */
    default Started start(GatewayConfig config, ConfigSource source, PrintWriter out) throws Exception {
        return start(config, out);
    }

    /** Blocks until the process is asked to stop (SIGTERM, SIGINT) and everything has been stopped. */
    void runUntilStopped(Started started) throws InterruptedException;

    /**
     * A running gateway.
     *
     * @param config          the configuration it runs with (upstream name servers replaced by the embedded one)
     * @param listenAddress   the bound name-server listener
     * @param brokerListeners real broker address to the gateway address advertised for it
     * @param embeddedBroker  the embedded broker's address, or {@code null} without embedded mode
     * @param notes           further lines for the start-up summary (reload triggers, admin endpoints)
     */
    record Started(GatewayConfig config, InetSocketAddress listenAddress, Map<String, String> brokerListeners,
                   String embeddedBroker, java.util.List<String> notes) {

        public Started {
            notes = notes == null ? java.util.List.of() : java.util.List.copyOf(notes);
        }

        public Started(GatewayConfig config, InetSocketAddress listenAddress, Map<String, String> brokerListeners,
                       String embeddedBroker) {
            this(config, listenAddress, brokerListeners, embeddedBroker, null);
        }
    }
}
