package io.rmqgw.gateway.config;

import java.time.Duration;
import java.util.Objects;

/**
 * How the gateway treats client connections.
 *
 * @param responseEncoding        the header encoding of answers and broker requests sent to clients
 * @param idleTimeout             a client connection with no traffic either way and nothing in flight for this
 *                                long is closed (as brokers close idle channels after 120 s); 0 turns it off
 * @param frameTimeout            a frame that began to arrive must be complete within this (a peer that never
 *                                finishes a frame is closed); 0 turns it off
 * @param maxConnections          client connections the gateway holds at most, all listeners together; 0: no limit
 * @param maxConnectionsPerAddress client connections from one source address at most; 0: no limit
 */
public record DownstreamConfig(ResponseEncoding responseEncoding, Duration idleTimeout, Duration frameTimeout,
                               Integer maxConnections, Integer maxConnectionsPerAddress) {

    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(120);
    public static final Duration DEFAULT_FRAME_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_CONNECTIONS = 100_000;

    public static final DownstreamConfig DEFAULT = new DownstreamConfig(null);

    public DownstreamConfig {
        responseEncoding = Objects.requireNonNullElse(responseEncoding, ResponseEncoding.MIRROR);
        idleTimeout = nonNegative("downstream.idle-timeout", Objects.requireNonNullElse(idleTimeout, DEFAULT_IDLE_TIMEOUT));
        frameTimeout = nonNegative("downstream.frame-timeout",
            Objects.requireNonNullElse(frameTimeout, DEFAULT_FRAME_TIMEOUT));
        maxConnections = nonNegative("downstream.max-connections",
            Objects.requireNonNullElse(maxConnections, DEFAULT_MAX_CONNECTIONS));
        maxConnectionsPerAddress = nonNegative("downstream.max-connections-per-address",
            Objects.requireNonNullElse(maxConnectionsPerAddress, 0));
    }

    /** The defaults with another response encoding. */
    public DownstreamConfig(ResponseEncoding responseEncoding) {
        this(responseEncoding, null, null, null, null);
    }

    private static Duration nonNegative(String path, Duration d) {
        if (d.isNegative()) {
            throw new ConfigException(path, "must not be negative, was " + d);
        }
        return d;
    }

    private static int nonNegative(String path, int n) {
        if (n < 0) {
            throw new ConfigException(path, "must be 0 (no limit) or more, was " + n);
        }
        return n;
    }
}
