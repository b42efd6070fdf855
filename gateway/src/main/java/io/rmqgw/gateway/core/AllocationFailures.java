package io.rmqgw.gateway.core;

import io.rmqgw.metrics.GatewayMetrics;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Buffers the gateway could not allocate on its event loops (direct memory exhausted): each one closes the connection
 * it was for, the other connections go on. While they keep happening, and for {@link #RECENT_NANOS} after the last,
 * the gateway reports itself unable to serve ({@link #recentReason}), so a load balancer sends new clients elsewhere
 * until the memory is back. Thread-safe; called from any event loop.
 */
public final class AllocationFailures {

    /** How long after the last failure the gateway still says it cannot serve. */
    static final long RECENT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final GatewayMetrics metrics;
    private final LongSupplier clock;
    private final AtomicLong count = new AtomicLong();
    private volatile long lastNanos;

    public AllocationFailures(GatewayMetrics metrics) {
        this(metrics, System::nanoTime);
    }

    AllocationFailures(GatewayMetrics metrics, LongSupplier clock) {
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Whether {@code cause} is a failed allocation (of direct or heap memory), which closes only its connection. */
    public static boolean isAllocationFailure(Throwable cause) {
        return cause instanceof OutOfMemoryError;
    }

    /** One allocation failed. */
    public void record() {
        count.incrementAndGet();
        lastNanos = clock.getAsLong() | 1; // never 0: 0 means none yet
        metrics.allocationFailed();
    }

    /** Failures since start. */
    public long count() {
        return count.get();
    }

    /** Why the gateway cannot serve now, or null: failures within the last {@link #RECENT_NANOS}. */
    public String recentReason() {
        long last = lastNanos;
        if (last == 0) {
            return null;
        }
        long ago = clock.getAsLong() - last;
        if (ago >= RECENT_NANOS) {
            return null;
        }
        return "buffers could not be allocated (direct memory exhausted; " + count.get() + " failures since start, the"
            + " last " + TimeUnit.NANOSECONDS.toMillis(ago) + " ms ago)";
    }
}
