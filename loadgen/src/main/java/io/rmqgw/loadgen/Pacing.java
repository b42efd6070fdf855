package io.rmqgw.loadgen;

/**
 * The schedule of one paced sending thread: slots {@code interval} apart, thread {@code index} of
 * {@code threads} offset by {@code index/threads} of an interval so that the threads interleave. A thread
 * that falls behind by whole slots (it was waiting for a slow answer) skips them rather than catching up in
 * a burst, which would push the rate above the target; skipped slots are counted. Not thread-safe: one per
 * thread.
 */
final class Pacing {

    private final long interval;
    private long next;
    private long missed;

    /**
     * @param startNanos    when the first slots are
     * @param intervalNanos time between two slots of this thread (threads / rate)
     */
    Pacing(long startNanos, long intervalNanos, int index, int threads) {
        if (intervalNanos < 1 || threads < 1 || index < 0 || index >= threads) {
            throw new IllegalArgumentException("interval " + intervalNanos + ", thread " + index + " of " + threads);
        }
        this.interval = intervalNanos;
        this.next = startNanos + intervalNanos * index / threads;
    }

    /** For a send about to happen at {@code now}: how long to wait first (0: send now), moving to the next slot. */
    long delay(long now) {
        long wait = next - now;
        if (wait > 0) {
            next += interval;
            return wait;
        }
        long skip = -wait / interval;
        missed += skip;
        next += (skip + 1) * interval;
        return 0;
    }

    /** Slots skipped so far (read it and reset with {@link #takeMissed}). */
    long takeMissed() {
        long m = missed;
        missed = 0;
        return m;
    }
}
