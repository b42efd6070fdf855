package io.rmqgw.codec.frame;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes held in frames not yet whole, shared by every connection's {@link FrameDecoder}: a peer that
 * starts large frames and never finishes them pins memory until the frame timeout, so the sum is
 * bounded. A decoder takes from the budget as its partial frame grows and gives back when the frame
 * completes or the connection goes; a read that does not fit is refused before anything more is
 * buffered. Counted in what the frames pin (the capacity of the buffers holding them, and at least
 * {@link FrameDecoder#PARTIAL_FRAME_FLOOR} per connection), not in the bytes the reads brought: a few
 * bytes kept in a large buffer hold all of it. Thread-safe.
 */
public final class IncompleteFrameBudget {

    private final AtomicLong held = new AtomicLong();
    private volatile long limit;

    public IncompleteFrameBudget(long limit) {
        limit(limit);
    }

    /** No limit, but still counted. */
    public static IncompleteFrameBudget unlimited() {
        return new IncompleteFrameBudget(Long.MAX_VALUE);
    }

    /** Takes {@code bytes} more; false (nothing taken) when the total would pass the limit. */
    public boolean tryTake(long bytes) {
        for (;;) {
            long now = held.get();
            long next = now + bytes;
            if (next > limit) {
                return false;
            }
            if (held.compareAndSet(now, next)) {
                return true;
            }
        }
    }

    /** Gives back {@code bytes} taken before. */
    public void giveBack(long bytes) {
        held.addAndGet(-bytes);
    }

    /** Bytes held in incomplete frames now, all connections together. */
    public long held() {
        return held.get();
    }

    public long limit() {
        return limit;
    }

    /** A new limit (a reload): bytes already held stay; later reads are refused until the total fits again. */
    public void limit(long limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("budget must not be negative, was " + limit);
        }
        this.limit = limit;
    }
}
