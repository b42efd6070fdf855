package io.rmqgw.gateway.config;

import java.util.Objects;

/**
 * An in-process Apache RocketMQ name server and broker behind the gateway, for a first run.
 *
 * @param enabled      start them (the gateway's upstream name servers are then replaced by the embedded one)
 * @param storeDir     where the broker stores messages (and RocketMQ writes its logs); relative to the
 *                     working directory
 * @param namesrvPort  the embedded name server's port (bound to 127.0.0.1)
 * @param brokerPort   the embedded broker's port (bound to 127.0.0.1; its VIP port is this minus 2)
 */
public record EmbeddedConfig(boolean enabled, String storeDir, Integer namesrvPort, Integer brokerPort) {

    public static final String DEFAULT_STORE_DIR = "./data/embedded";
    public static final int DEFAULT_NAMESRV_PORT = 19876;
    /** RocketMQ's usual broker port; outside the default {@code broker-ports} range of the gateway. */
    public static final int DEFAULT_BROKER_PORT = 10911;

    public static final EmbeddedConfig DISABLED = new EmbeddedConfig(false, null, null, null);

    public EmbeddedConfig {
        storeDir = Objects.requireNonNullElse(storeDir, DEFAULT_STORE_DIR);
        if (storeDir.isBlank()) {
            throw new ConfigException("embedded.store-dir", "must not be empty");
        }
        namesrvPort = Objects.requireNonNullElse(namesrvPort, DEFAULT_NAMESRV_PORT);
        brokerPort = Objects.requireNonNullElse(brokerPort, DEFAULT_BROKER_PORT);
        if (namesrvPort < 1 || namesrvPort > 65535) {
            throw new ConfigException("embedded.namesrv-port", "must be between 1 and 65535, was " + namesrvPort);
        }
        if (brokerPort < 3 || brokerPort > 65535) {
            throw new ConfigException("embedded.broker-port", "must be between 3 and 65535 (the broker also uses"
                + " port-2), was " + brokerPort);
        }
        if (brokerPortsOf(brokerPort).contains(namesrvPort)) {
            throw new ConfigException("embedded.namesrv-port", namesrvPort + " collides with the embedded broker's"
                + " ports " + brokerPortsOf(brokerPort) + " (VIP, main)");
        }
    }

    /** The ports the embedded broker binds: VIP (port-2) and main (its HA port is not opened). */
    public java.util.List<Integer> brokerPortsUsed() {
        return brokerPortsOf(brokerPort);
    }

    private static java.util.List<Integer> brokerPortsOf(int brokerPort) {
        return java.util.List.of(brokerPort - 2, brokerPort);
    }
}
