package io.rmqgw.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class TallyTest {

    private static final long S = 1_000_000_000L;

    @Test
    void warmupIsLeftOutAndTheMeasurementEndsAfterTheDuration() {
        long t0 = 1_000 * S;
        Tally t = new Tally(t0, 5 * S, 20 * S, 0);
        assertEquals(Tally.Phase.WARMUP, t.begin(t0));
        assertEquals(Tally.Phase.WARMUP, t.begin(t0 + 5 * S - 1));
        assertEquals(Tally.Phase.MEASURE, t.begin(t0 + 5 * S));
        assertEquals(Tally.Phase.MEASURE, t.begin(t0 + 25 * S - 1));
        assertEquals(Tally.Phase.DONE, t.begin(t0 + 25 * S));

        // warm-up sends, one completing inside the measurement: still warm-up (phase of the beginning)
        t.success(Tally.Phase.WARMUP, t0 + 1 * S, 100_000);
        t.success(Tally.Phase.WARMUP, t0 + 6 * S, 900_000);
        t.failure(Tally.Phase.WARMUP, t0 + 2 * S, "x");
        // 1000 measured successes of 2 ms, 10 of 10 ms, 3 failures; the last completes at 25.5 s
        for (int i = 0; i < 1000; i++) {
            t.success(Tally.Phase.MEASURE, t0 + 10 * S, 2_000);
        }
        for (int i = 0; i < 10; i++) {
            t.success(Tally.Phase.MEASURE, t0 + 20 * S, 10_000);
        }
        t.failure(Tally.Phase.MEASURE, t0 + 21 * S, "MQBrokerException:2");
        t.failure(Tally.Phase.MEASURE, t0 + 22 * S, "RemotingTimeoutException");
        t.failure(Tally.Phase.MEASURE, t0 + 25 * S + S / 2, "MQBrokerException:2");
        // a send begun after the end is ignored entirely
        t.success(Tally.Phase.DONE, t0 + 26 * S, 1);

        Tally.Summary s = t.summary();
        assertEquals(2, s.okWarmup());
        assertEquals(1, s.errorsWarmup());
        assertEquals(1010, s.ok());
        assertEquals(3, s.errors());
        assertEquals(20.5, s.measuredSeconds(), 1e-9);
        assertEquals(1010 / 20.5, s.tps(), 1e-9);
        assertEquals(List.of("MQBrokerException:2", "RemotingTimeoutException"), List.copyOf(s.errorsByReason().keySet()));
        assertEquals(Map.of("MQBrokerException:2", 2L, "RemotingTimeoutException", 1L), s.errorsByReason());
        assertEquals(1010, s.latencyMicros().count());
        assertEquals(2_000, s.latencyMicros().valueAt(50));
        assertEquals(10_000, s.latencyMicros().valueAt(99.5), 10);
        assertEquals(10_000, s.latencyMicros().max());
        // progress counters see every phase
        assertEquals(1013, t.okSoFar());
        assertEquals(4, t.errorsSoFar());
    }

    @Test
    void aStallAtTheEndCountsWhenTheRunEndsByItsDuration() {
        Tally t = new Tally(0, S, 20 * S, 0);
        // everything completed 12 s into the measurement, then nothing until the duration ends
        for (int i = 0; i < 100; i++) {
            t.success(Tally.Phase.MEASURE, 13 * S, 1_000);
        }
        assertEquals(12.0, t.summary().measuredSeconds(), 1e-9);
        assertEquals(20.0, t.summary(t.measureEndNanos()).measuredSeconds(), 1e-9);
        assertEquals(5.0, t.summary(t.measureEndNanos()).tps(), 1e-9);
        // an end before the last completion changes nothing
        assertEquals(12.0, t.summary(5 * S).measuredSeconds(), 1e-9);
    }

    @Test
    void countModeHandsOutExactlyCountTickets() {
        Tally t = new Tally(0, 0, Long.MAX_VALUE, 3);
        assertEquals(Tally.Phase.MEASURE, t.phaseAt(S));
        assertEquals(Tally.Phase.MEASURE, t.begin(S));
        assertEquals(Tally.Phase.MEASURE, t.begin(S));
        assertEquals(Tally.Phase.MEASURE, t.begin(S));
        assertEquals(Tally.Phase.DONE, t.begin(S));
        assertEquals(Tally.Phase.DONE, t.phaseAt(S));
        // 100 years later still counting (no overflow of the unbounded end)
        assertEquals(Tally.Phase.DONE, t.begin(Long.MAX_VALUE - 1));
    }

    @Test
    void warmupDoesNotTakeTickets() {
        Tally t = new Tally(0, 2 * S, Long.MAX_VALUE, 1);
        for (int i = 0; i < 5; i++) {
            assertEquals(Tally.Phase.WARMUP, t.begin(S));
        }
        assertEquals(Tally.Phase.MEASURE, t.begin(2 * S));
        assertEquals(Tally.Phase.DONE, t.begin(2 * S));
    }

    @Test
    void nothingMeasuredMeansZeroThroughput() {
        Tally.Summary s = new Tally(0, S, S, 0).summary();
        assertEquals(0, s.ok());
        assertEquals(0.0, s.tps());
        assertEquals(0.0, s.measuredSeconds());
        assertEquals(0, s.latencyMicros().count());
    }

    @Test
    void recordingThreadsAreMergedAfterwards() throws InterruptedException {
        Tally t = new Tally(0, 0, 100 * S, 0);
        int threads = 8;
        CountDownLatch done = new CountDownLatch(threads);
        for (int i = 0; i < threads; i++) {
            long latency = (i + 1) * 1_000L;
            Thread th = new Thread(() -> {
                for (int k = 0; k < 10_000; k++) {
                    t.success(Tally.Phase.MEASURE, 10 * S, latency);
                }
                done.countDown();
            });
            th.start();
        }
        done.await();
        Tally.Summary s = t.summary();
        assertEquals(80_000, s.ok());
        assertEquals(80_000, s.latencyMicros().count());
        assertEquals(1_000, s.latencyMicros().min());
        assertEquals(8_000, s.latencyMicros().max());
        assertEquals(4_500, s.latencyMicros().mean(), 1e-6);
        assertEquals(8_000.0, s.tps(), 1e-6);
    }
}
