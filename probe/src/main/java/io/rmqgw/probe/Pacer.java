package io.rmqgw.probe;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Paces sends at a fixed rate by sleeping until each one's slot: message {@code i} is due at
 * {@code start + i / rate}. No busy waiting: the caller sleeps for the whole gap. A sender that fell
 * behind (a slow send) is not made to wait again until it is back on schedule, so the average rate
 * holds over the run.
 */
final class Pacer {

    /** Sleeps; tests substitute a fake clock. */
    interface Sleeper {
        void sleepNanos(long nanos) throws InterruptedException;
    }

    static final Sleeper THREAD_SLEEP = TimeUnit.NANOSECONDS::sleep;

    private final double periodNanos;
    private final LongSupplier clock;
    private final Sleeper sleeper;
    private long start;
    private boolean started;

    Pacer(double perSecond, LongSupplier clock, Sleeper sleeper) {
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("rate must be positive and finite, was " + perSecond);
        }
        this.periodNanos = 1e9 / perSecond;
        this.clock = Objects.requireNonNull(clock);
        this.sleeper = Objects.requireNonNull(sleeper);
    }

    /** Real time. */
    static Pacer of(double perSecond) {
        return new Pacer(perSecond, System::nanoTime, THREAD_SLEEP);
    }

    /** When message {@code i} is due, in {@link #clock} nanos; the first call starts the schedule. */
    long due(long i) {
        if (!started) {
            start = clock.getAsLong();
            started = true;
        }
        return start + (long) (i * periodNanos);
    }

    /**
     * Returns when message {@code i} may go (at once when it is already due); {@code i} counts from 0
     * and the first call starts the schedule.
     */
    void awaitTurn(long i) throws InterruptedException {
        long due = due(i);
        // a sleep lasts at least as long as asked, so this runs once or twice; bounded all the same
        for (int pass = 0; pass < 1_000; pass++) {
            long wait = due - clock.getAsLong();
            if (wait <= 0) {
                return;
            }
            sleeper.sleepNanos(wait);
        }
    }
}
