package io.rmqgw.gateway.config;

import java.util.Objects;

/**
 * An in-process Apache RocketMQ name server and broker behind the gateway, for a first run.
 *
 * @param enabled      start them
 * @param storeDir     where the broker stores messages (and RocketMQ writes its logs)
 * @param namesrvPort  the embedded name server's port (bound to 127.0.0.1)
 * @param brokerPort   the embedded broker's port (bound to 127.0.0.1; its VIP port is this minus 2)
 */
public record EmbeddedConfig(boolean enabled, String storeDir, Integer namesrvPort, Integer brokerPort) {

    public static final EmbeddedConfig DISABLED = new EmbeddedConfig(false, null, null, null);

    public EmbeddedConfig {
        storeDir = Objects.requireNonNullElse(storeDir, "./data/embedded");
        namesrvPort = Objects.requireNonNullElse(namesrvPort, 19876);
        brokerPort = Objects.requireNonNullElse(brokerPort, 20911);
        if (namesrvPort < 1 || namesrvPort > 65535) {
            throw new ConfigException("embedded.namesrv-port", "must be between 1 and 65535");
        }
        if (brokerPort < 3 || brokerPort > 65535) {
            throw new ConfigException("embedded.broker-port", "must be between 3 and 65535");
        }
    }
}
