package io.rmqgw.gateway.runtime;

import io.rmqgw.gateway.config.EmbeddedConfig;
import java.nio.file.Path;

/**
 * An in-process RocketMQ name server and broker that the gateway relays to ({@code embedded.enabled}). The
 * gateway module does not carry RocketMQ's servers: whoever packages them (the {@code rmqgw} command, with the
 * rmqgw-embedded module) supplies a {@link Starter}.
 */
public interface EmbeddedUpstream extends AutoCloseable {

    /** {@code 127.0.0.1:port} of the name server. */
    String namesrvAddress();

    /** {@code 127.0.0.1:port} of the broker, as registered with the name server. */
    String brokerAddress();

    /** Stops the broker, then the name server; idempotent. */
    @Override
    void close();

    /** Starts an embedded cluster as {@code config} describes, storing under {@code storeDir}. */
    @FunctionalInterface
    interface Starter {

        /** For builds without the embedded servers: embedded mode fails to start with a clear reason. */
        Starter UNAVAILABLE = (config, storeDir) -> {
            throw new IllegalStateException("embedded mode is not available in this build (no rmqgw-embedded)");
        };

        /** Returns once the broker is registered with the name server; throws when it does not start. */
        EmbeddedUpstream start(EmbeddedConfig config, Path storeDir) throws Exception;
    }
}
