package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a session writes to its client: answers relayed from upstream (their reading stops with the client's write
 * buffer, see {@link ReadGate}) and the gateway's own answers, bounded by {@code downstream.max-pending-writes} and
 * {@code max-pending-write-bytes} (a client that takes none of them is closed); the flushes, and the clocks of the
 * idle and unwritable timeouts. On the session's event loop.
 */
final class ClientWrites {

    private static final Logger log = LoggerFactory.getLogger(ClientWrites.class);
    private static final long SLOW_READER_WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final AtomicLong lastSlowReaderWarnNanos =
        new AtomicLong(System.nanoTime() - SLOW_READER_WARN_INTERVAL_NANOS);

    private final Channel client;
    private final RelayContext context;
    private final GatewayMetrics metrics;
    private final String role;
    private boolean needsFlush;
    /** The gateway's own answers written to the client and not yet taken by its socket. */
    private int composedQueued;
    private long composedQueuedBytes;
    /** Closed for a write backlog or a full write buffer: later answers are released unwritten. */
    private boolean closed;
    /** When the client's write buffer passed its high water mark; 0 while writable. */
    private long unwritableSinceNanos;
    /** The client was read or written to since the last idle check ({@link #idleTooLong}). */
    private boolean active;
    /** When an idle check last saw the client active ({@code System.nanoTime()}). */
    private long activeNanos = System.nanoTime();

    ClientWrites(Channel client, RelayContext context, GatewayMetrics metrics, String role) {
        this.client = client;
        this.context = context;
        this.metrics = metrics;
        this.role = role;
    }

    /** An answer relayed from upstream; flushed with the burst. Takes ownership. */
    void relayed(ByteBuf answer) {
        client.write(answer, client.voidPromise());
        needsFlush = true;
    }

    /**
     * An answer the gateway composed: written within the bound of such answers not yet taken by the client's socket,
     * else the connection is closed. Takes ownership; flushed with the read burst or by the caller.
     */
    void composed(ByteBuf answer) {
        if (closed || !client.isOpen()) {
            answer.release();
            return;
        }
        int bytes = answer.readableBytes();
        if (!fits(bytes)) {
            // what the socket takes now completes and leaves the backlog; a reading client never gets further
            client.flush();
            needsFlush = false;
            if (!fits(bytes)) {
                answer.release();
                closeForBacklog();
                return;
            }
        }
        composedQueued++;
        composedQueuedBytes += bytes;
        client.write(answer).addListener(f -> {
            composedQueued--;
            composedQueuedBytes -= bytes;
        });
        needsFlush = true;
    }

    void flush() {
        if (needsFlush) {
            needsFlush = false;
            active = true;
            client.flush();
        }
    }

    /** The client was read. */
    void active() {
        active = true;
    }

    /** Bytes queued to the client and not yet taken by its socket; readable from any thread. */
    long queuedBytes() {
        ChannelOutboundBuffer out = client.unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    /** The client's write buffer crossed a water mark: the unwritable clock starts or stops. */
    void writabilityChanged() {
        if (client.isWritable()) {
            unwritableSinceNanos = 0;
        } else if (unwritableSinceNanos == 0) {
            unwritableSinceNanos = System.nanoTime();
        }
    }

    /** A client whose write buffer stays full reads nothing, and holds what is queued to it: closed past the limit. */
    void closeIfUnwritableTooLong() {
        Duration limit = context.downstream().unwritableTimeout();
        long since = unwritableSinceNanos;
        if (since == 0 || limit.isZero() || !client.isActive() || System.nanoTime() - since < limit.toNanos()) {
            return;
        }
        warnSlowReader("closing client {}: it has taken nothing from its write buffer ({} bytes queued) for {} ms"
                + " (downstream.unwritable-timeout {})", Addresses.of(client.remoteAddress()), queuedBytes(),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since), limit);
        metrics.connectionClosed(role, CloseReason.UNWRITABLE);
        closed = true;
        client.close();
    }

    /**
     * Whether the client was neither read from nor written to for {@code downstream.idle-timeout} (asked by the
     * session's scan): told from a flag the read bursts and flushes set, since an IdleStateHandler per connection put
     * a listener on every write (about 1.5% of the gateway's CPU under load).
     */
    boolean idleTooLong() {
        long now = System.nanoTime();
        Duration timeout = context.downstream().idleTimeout();
        if (active || timeout.isZero()) {
            active = false;
            activeNanos = now;
            return false;
        }
        return now - activeNanos >= timeout.toNanos();
    }

    private boolean fits(int bytes) {
        DownstreamConfig limits = context.downstream();
        return composedQueued < limits.maxPendingWrites() && composedQueuedBytes + bytes <= limits.maxPendingWriteBytes();
    }

    private void closeForBacklog() {
        closed = true;
        DownstreamConfig limits = context.downstream();
        warnSlowReader("closing client {}: {} answers of the gateway's own ({} bytes) wait unread, the bound is {} answers"
                + " or {} bytes (downstream.max-pending-writes, max-pending-write-bytes)",
            Addresses.of(client.remoteAddress()), composedQueued, composedQueuedBytes, limits.maxPendingWrites(),
            limits.maxPendingWriteBytes());
        metrics.connectionClosed(role, CloseReason.WRITE_BACKLOG);
        client.close();
    }

    /** A client that reads nothing: WARN at most every 10 s across connections (the metric has the exact count). */
    private static void warnSlowReader(String format, Object... args) {
        long now = System.nanoTime();
        long last = lastSlowReaderWarnNanos.get();
        if (now - last >= SLOW_READER_WARN_INTERVAL_NANOS && lastSlowReaderWarnNanos.compareAndSet(last, now)) {
            log.warn(format + " (more within 10 s at DEBUG)", args);
        } else {
            log.debug(format, args);
        }
    }
}
