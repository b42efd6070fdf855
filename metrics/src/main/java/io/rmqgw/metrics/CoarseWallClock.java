package io.rmqgw.metrics;

import io.micrometer.core.instrument.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The registry's clock: wall time read from a field a daemon thread refreshes every {@link #TICK_MILLIS} ms, and
 * {@link System#nanoTime()} as monotonic time. Every timer record reads the wall time twice (to rotate the decaying
 * max and the histogram, windows of minutes and years), which on the request path costs more than the record's
 * own arithmetic; a clock a tenth of a second coarse serves those windows just as well.
 */
final class CoarseWallClock implements Clock, AutoCloseable {

    /** Ten wake-ups a second: at 10 ms the ticker itself cost about what the clock reads it spared (1% of CPU). */
    static final long TICK_MILLIS = 100;

    private volatile long wallMillis = System.currentTimeMillis();
    private volatile boolean closed;
    private final Thread ticker;

    CoarseWallClock() {
        ticker = new Thread(this::tick, "rmqgw-metrics-clock");
        ticker.setDaemon(true);
        ticker.start();
    }

    private void tick() {
        while (!closed) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS));
            wallMillis = System.currentTimeMillis();
        }
    }

    @Override
    public long wallTime() {
        return wallMillis;
    }

    @Override
    public long monotonicTime() {
        return System.nanoTime();
    }

    /** The thread that refreshes the wall time. */
    Thread ticker() {
        return ticker;
    }

    /** Stops the ticker; the wall time stays where it was. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(ticker);
    }
}
