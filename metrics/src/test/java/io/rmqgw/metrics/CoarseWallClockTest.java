package io.rmqgw.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CoarseWallClockTest {

    @Test
    void wallTimeFollowsTheSystemClockAndTheTickerStopsOnClose() throws Exception {
        CoarseWallClock clock = new CoarseWallClock();
        Thread ticker = clock.ticker();
        try {
            long first = clock.wallTime();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (clock.wallTime() == first && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertTrue(clock.wallTime() > first, "the ticker moves the wall time on");
            // behind the system clock by at most a tick and a scheduling delay, never ahead of it
            long lag = System.currentTimeMillis() - clock.wallTime();
            assertTrue(lag >= 0 && lag < 5_000, "lag " + lag + " ms");
        } finally {
            clock.close();
        }
        ticker.join(10_000);
        assertFalse(ticker.isAlive(), "the ticker stops on close");
    }

    @Test
    void timersOfThePrometheusRegistryStillRecordAndClosingStopsTheClock() throws Exception {
        GatewayMetrics metrics = GatewayMetrics.prometheus();
        Thread ticker = metrics.clock().ticker();
        try {
            Timer t = Timer.builder("rmqgw.test.timer").register(metrics.registry());
            t.record(Duration.ofMillis(7));
            assertEquals(1, t.count());
            assertEquals(7.0, t.max(TimeUnit.MILLISECONDS), 1e-9);
        } finally {
            metrics.close();
        }
        ticker.join(10_000);
        assertFalse(ticker.isAlive(), "closing the metrics stops the registry's clock");
    }
}
