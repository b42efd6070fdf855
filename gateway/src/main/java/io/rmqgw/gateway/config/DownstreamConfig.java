package io.rmqgw.gateway.config;

import io.netty.util.internal.PlatformDependent;
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
 * @param maxIncompleteFrameBytes the largest frame a client connection may buffer, in bytes: a frame is stored
 *                                whole before it is forwarded (no cut-through), so this bounds a client frame like
 *                                {@code max-frame-length}, and the lower of the two applies. Default 8 MiB: twice
 *                                RocketMQ's default message size limit (4 MiB), room for headers and properties
 * @param incompleteFrameBudget   bytes all client connections together may hold in frames not yet whole; a read that
 *                                would pass it closes its connection. Default: a quarter of the JVM's direct memory
 *                                limit, so half-sent frames cannot exhaust it; 0: no limit
 */
public record DownstreamConfig(ResponseEncoding responseEncoding, Duration idleTimeout, Duration frameTimeout,
                               Integer maxConnections, Integer maxConnectionsPerAddress,
                               Integer maxIncompleteFrameBytes, Long incompleteFrameBudget) {

    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(120);
    public static final Duration DEFAULT_FRAME_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_CONNECTIONS = 100_000;
    public static final int DEFAULT_MAX_INCOMPLETE_FRAME_BYTES = 8 * 1024 * 1024;

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
        maxIncompleteFrameBytes = Objects.requireNonNullElse(maxIncompleteFrameBytes, DEFAULT_MAX_INCOMPLETE_FRAME_BYTES);
        if (maxIncompleteFrameBytes < 1024) {
            throw new ConfigException("downstream.max-incomplete-frame-bytes",
                "must be at least 1024 bytes, was " + maxIncompleteFrameBytes);
        }
        incompleteFrameBudget = Objects.requireNonNullElse(incompleteFrameBudget, defaultIncompleteFrameBudget());
        if (incompleteFrameBudget < 0) {
            throw new ConfigException("downstream.incomplete-frame-budget",
                "must be 0 (no limit) or more bytes, was " + incompleteFrameBudget);
        }
    }

    /** The defaults with another response encoding. */
    public DownstreamConfig(ResponseEncoding responseEncoding) {
        this(responseEncoding, null, null, null, null);
    }

    /** Without the incomplete-frame bounds (their defaults). */
    public DownstreamConfig(ResponseEncoding responseEncoding, Duration idleTimeout, Duration frameTimeout,
                            Integer maxConnections, Integer maxConnectionsPerAddress) {
        this(responseEncoding, idleTimeout, frameTimeout, maxConnections, maxConnectionsPerAddress, null, null);
    }

    /**
     * A quarter of the JVM's direct memory limit ({@code -XX:MaxDirectMemorySize}, by default the heap's
     * maximum): the rest stays for frames being relayed, answers and the allocator's own slack.
     */
    public static long defaultIncompleteFrameBudget() {
        return PlatformDependent.maxDirectMemory() / 4;
    }

    /** The bytes the budget allows, for {@link io.rmqgw.codec.frame.IncompleteFrameBudget} (0 means no limit). */
    public long incompleteFrameLimit() {
        return incompleteFrameBudget == 0 ? Long.MAX_VALUE : incompleteFrameBudget;
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
