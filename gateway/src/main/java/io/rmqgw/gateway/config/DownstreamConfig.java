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
 * @param maxIncompleteFrameBytes the largest client frame stored whole before it is forwarded, in bytes (the lower of
 *                                this and {@code max-frame-length}). A larger frame, up to {@code max-frame-length},
 *                                may stream through instead when its handler allows it (a request of at least
 *                                {@link io.rmqgw.codec.frame.FrameDecoder#LARGE_FRAME_LENGTH} bytes with an answer,
 *                                to a connected upstream, whose body is relayed as it is); one that cannot stream is
 *                                refused once it holds this many bytes. Default 8 MiB: twice RocketMQ's default
 *                                message size limit (4 MiB), room for headers and properties
 * @param incompleteFrameBudget   bytes all client connections together may pin in frames not yet whole, counted as
 *                                the capacity of the buffers holding them and at least
 *                                {@link io.rmqgw.codec.frame.FrameDecoder#PARTIAL_FRAME_FLOOR} (2 KiB) a connection
 *                                holding one (a frame streaming through holds none of its body); a read that would
 *                                pass it closes its connection. Default: a quarter of the JVM's direct memory limit,
 *                                so half-sent frames cannot exhaust it; 0: no limit
 * @param maxPendingWriteBytes    bytes of the gateway's own answers (errors, timeouts, local answers) queued to one
 *                                client and not yet taken by its socket; one more closes the connection
 * @param maxPendingWrites        the same bound as a count of answers (each queued write costs memory of its own)
 * @param unwritableTimeout       a client connection whose write buffer stays past its high water mark (the client
 *                                reads nothing) for this long is closed; 0 turns it off
 */
public record DownstreamConfig(ResponseEncoding responseEncoding, Duration idleTimeout, Duration frameTimeout,
                               Integer maxConnections, Integer maxConnectionsPerAddress,
                               Integer maxIncompleteFrameBytes, Long incompleteFrameBudget, Integer maxPendingWriteBytes,
                               Integer maxPendingWrites, Duration unwritableTimeout) {

    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(120);
    public static final Duration DEFAULT_FRAME_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_CONNECTIONS = 100_000;
    public static final int DEFAULT_MAX_INCOMPLETE_FRAME_BYTES = 8 * 1024 * 1024;
    public static final int DEFAULT_MAX_PENDING_WRITE_BYTES = 4 * 1024 * 1024;
    public static final int DEFAULT_MAX_PENDING_WRITES = 10_000;
    public static final Duration DEFAULT_UNWRITABLE_TIMEOUT = Duration.ofSeconds(30);
    /** Below this a burst of ordinary error answers to a reading client could pass the bound. */
    public static final int MIN_MAX_PENDING_WRITE_BYTES = 64 * 1024;

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
        maxPendingWriteBytes = Objects.requireNonNullElse(maxPendingWriteBytes, DEFAULT_MAX_PENDING_WRITE_BYTES);
        if (maxPendingWriteBytes < MIN_MAX_PENDING_WRITE_BYTES) {
            throw new ConfigException("downstream.max-pending-write-bytes", "must be at least "
                + MIN_MAX_PENDING_WRITE_BYTES + " (64 KiB), was " + maxPendingWriteBytes);
        }
        maxPendingWrites = Objects.requireNonNullElse(maxPendingWrites, DEFAULT_MAX_PENDING_WRITES);
        if (maxPendingWrites < 1) {
            throw new ConfigException("downstream.max-pending-writes", "must be at least 1, was " + maxPendingWrites);
        }
        unwritableTimeout = nonNegative("downstream.unwritable-timeout",
            Objects.requireNonNullElse(unwritableTimeout, DEFAULT_UNWRITABLE_TIMEOUT));
    }

    /** The defaults with another response encoding. */
    public DownstreamConfig(ResponseEncoding responseEncoding) {
        this(responseEncoding, null, null, null, null);
    }

    /** Without the incomplete-frame and write bounds (their defaults). */
    public DownstreamConfig(ResponseEncoding responseEncoding, Duration idleTimeout, Duration frameTimeout,
                            Integer maxConnections, Integer maxConnectionsPerAddress) {
        this(responseEncoding, idleTimeout, frameTimeout, maxConnections, maxConnectionsPerAddress, null, null);
    }

    /** Timeouts, connection limits and incomplete-frame bounds as given, the write bounds at their defaults. */
    public DownstreamConfig(ResponseEncoding responseEncoding, Duration idleTimeout, Duration frameTimeout,
                            Integer maxConnections, Integer maxConnectionsPerAddress, Integer maxIncompleteFrameBytes,
                            Long incompleteFrameBudget) {
        this(responseEncoding, idleTimeout, frameTimeout, maxConnections, maxConnectionsPerAddress,
            maxIncompleteFrameBytes, incompleteFrameBudget, null, null, null);
    }

    /** Timeouts, connection limits and write bounds as given, the incomplete-frame bounds at their defaults. */
    public DownstreamConfig(ResponseEncoding responseEncoding, Duration idleTimeout, Duration frameTimeout,
                            Integer maxConnections, Integer maxConnectionsPerAddress, Integer maxPendingWriteBytes,
                            Integer maxPendingWrites, Duration unwritableTimeout) {
        this(responseEncoding, idleTimeout, frameTimeout, maxConnections, maxConnectionsPerAddress, null, null,
            maxPendingWriteBytes, maxPendingWrites, unwritableTimeout);
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
