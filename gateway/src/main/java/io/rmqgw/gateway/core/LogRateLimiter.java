package io.rmqgw.gateway.core;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * At most {@code lines} log lines per {@code interval} for one kind of event (a peer can trigger the
 * event at will: each malformed connection used to log a WARN, so a fuzzer or a scanner flooded the
 * log). The lines over the budget are counted; the next line let through says how many were held
 * back, and {@link #takeSuppressed} hands the count to a periodic summary once a window has ended,
 * so a flood that stops is still reported. Metrics keep the exact event counts; this only bounds
 * the log. Thread-safe (sessions on every event loop share one).
 */
public final class LogRateLimiter {

    /** What {@link #tryAcquire} returns when the line must not be written. */
    public static final long SUPPRESS = -1;

    private final int lines;
    private final long intervalNanos;
    private final LongSupplier nanoClock;

    private long windowStartNanos;
    private int used;
    private long suppressed;
    /** A read without the lock for the summary's fast path: most calls find nothing to report. */
    private volatile boolean anySuppressed;

    public LogRateLimiter(int lines, Duration interval, LongSupplier nanoClock) {
        if (lines < 1 || interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("at least one line per positive interval, was " + lines + " per " + interval);
        }
        this.lines = lines;
        this.intervalNanos = interval.toNanos();
        this.nanoClock = nanoClock;
        this.windowStartNanos = nanoClock.getAsLong();
    }

    /** {@code lines} per {@code interval} on the system's nano clock. */
    public LogRateLimiter(int lines, Duration interval) {
        this(lines, interval, System::nanoTime);
    }

    /**
     * Whether a line may be written now: {@link #SUPPRESS}, or the number of lines suppressed since the
     * last one written (and not yet reported), which the line written now should mention.
     */
    public synchronized long tryAcquire() {
        rollWindow(nanoClock.getAsLong());
        if (used >= lines) {
            suppressed++;
            anySuppressed = true;
            return SUPPRESS;
        }
        used++;
        return takeCount();
    }

    /**
     * The lines suppressed in a window that has ended, for one summary line; 0 while the current window
     * still runs (its next line may report them) or when nothing was suppressed. The count is reported once.
     */
    public long takeSuppressed() {
        if (!anySuppressed) {
            return 0;
        }
        synchronized (this) {
            long now = nanoClock.getAsLong();
            if (now - windowStartNanos < intervalNanos) {
                return 0;
            }
            rollWindow(now);
            return takeCount();
        }
    }

    public int linesPerInterval() {
        return lines;
    }

    public Duration interval() {
        return Duration.ofNanos(intervalNanos);
    }

    private void rollWindow(long now) {
        if (now - windowStartNanos >= intervalNanos) {
            windowStartNanos = now;
            used = 0;
        }
    }

    private long takeCount() {
        long count = suppressed;
        suppressed = 0;
        anySuppressed = false;
        return count;
    }
}
