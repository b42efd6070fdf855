package io.rmqgw.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.probe.ProbeTally.Counts;
import io.rmqgw.probe.ProbeTally.Receipt;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The accounting alone: no broker, no clients. */
@Timeout(20)
class ProbeTallyTest {

    private static final String RUN = "run1";

    private static ProbeTally sentAll(int n) {
        ProbeTally t = new ProbeTally(RUN, n);
        for (int i = 0; i < n; i++) {
            t.attempted(i);
            t.sent(i);
        }
        return t;
    }

    @Test
    void everythingArrivesOnce() {
        ProbeTally t = sentAll(3);
        assertEquals(Receipt.FIRST, t.received(RUN, "0", 1_000, 1_004));
        assertEquals(Receipt.FIRST, t.received(RUN, "2", 1_000, 1_010));
        assertFalse(t.allDelivered());
        assertEquals(Receipt.FIRST, t.received(RUN, "1", 1_000, 1_002));
        assertTrue(t.allDelivered());
        Counts c = t.counts();
        assertEquals(3, c.attempted());
        assertEquals(3, c.sent());
        assertEquals(0, c.sendErrors());
        assertEquals(3, c.received());
        assertEquals(0, c.lost());
        assertEquals(0, c.duplicates());
        assertEquals(0, c.foreign());
        assertEquals(3, c.latencies().count());
        assertEquals(4, c.latencies().valueAt(50));
        assertEquals(10, c.latencies().max());
        assertEquals(2, c.latencies().min());
    }

    @Test
    void lossIsSentButNotReceived() {
        ProbeTally t = sentAll(5);
        t.received(RUN, "0", 0, 1);
        t.received(RUN, "3", 0, 1);
        Counts c = t.counts();
        assertEquals(5, c.sent());
        assertEquals(2, c.received());
        assertEquals(3, c.lost());
        assertEquals(2, c.latencies().count());
    }

    @Test
    void duplicatesCountEveryExtraDeliveryAndKeepTheFirstLatency() {
        ProbeTally t = sentAll(2);
        assertEquals(Receipt.FIRST, t.received(RUN, "0", 100, 105));
        assertEquals(Receipt.DUPLICATE, t.received(RUN, "0", 100, 900));
        assertEquals(Receipt.DUPLICATE, t.received(RUN, "0", 100, 950));
        assertEquals(Receipt.FIRST, t.received(RUN, "1", 100, 107));
        Counts c = t.counts();
        assertEquals(2, c.received());
        assertEquals(2, c.duplicates());
        assertEquals(0, c.lost());
        assertEquals(7, c.latencies().max(), "latency of first deliveries only");
    }

    @Test
    void foreignAndControlMessagesAreIgnored() {
        ProbeTally t = sentAll(2);
        assertEquals(Receipt.FOREIGN, t.received("other-run", "0", 0, 1));
        assertEquals(Receipt.FOREIGN, t.received(null, "0", 0, 1));
        assertEquals(Receipt.FOREIGN, t.received(RUN, null, 0, 1));
        assertEquals(Receipt.FOREIGN, t.received(RUN, "x", 0, 1));
        assertEquals(Receipt.FOREIGN, t.received(RUN, "2", 0, 1)); // beyond what this run sends
        assertEquals(Receipt.OWN_CONTROL, t.received(RUN, "-1", 0, 1)); // the warm-up message
        Counts c = t.counts();
        assertEquals(5, c.foreign());
        assertEquals(0, c.received());
        assertEquals(2, c.lost());
        assertEquals(0, c.duplicates());
    }

    @Test
    void sendFailuresAreErrorsNotLoss() {
        ProbeTally t = new ProbeTally(RUN, 4);
        for (int i = 0; i < 4; i++) {
            t.attempted(i);
        }
        t.sent(0);
        t.failed(1, "timeout");
        t.failed(2, "timeout");
        t.failed(3, "broker busy");
        t.received(RUN, "0", 0, 3);
        t.received(RUN, "2", 0, 3); // the send timed out but the broker had stored it
        Counts c = t.counts();
        assertEquals(4, c.attempted());
        assertEquals(1, c.sent());
        assertEquals(3, c.sendErrors());
        assertEquals(0, c.lost());
        assertEquals(2, c.received());
        assertEquals(1, c.receivedAfterSendError());
        assertEquals(List.of("2x timeout", "broker busy"), c.errorSamples());
    }

    @Test
    void aSecondOutcomeForTheSameSendIsIgnored() {
        ProbeTally t = new ProbeTally(RUN, 1);
        t.attempted(0);
        t.sent(0);
        t.failed(0, "late failure");
        t.sent(0);
        Counts c = t.counts();
        assertEquals(1, c.sent());
        assertEquals(0, c.sendErrors());
        assertThrows(IllegalStateException.class, () -> t.attempted(0));
        assertThrows(IndexOutOfBoundsException.class, () -> t.attempted(1));
    }

    @Test
    void aMessageReceivedBeforeItsAcknowledgementIsNotLost() {
        ProbeTally t = new ProbeTally(RUN, 1);
        t.attempted(0);
        t.received(RUN, "0", 0, 2);
        t.sent(0);
        assertTrue(t.allDelivered());
        assertEquals(0, t.counts().lost());
    }

    @Test
    void errorSamplesAreCapped() {
        ProbeTally t = new ProbeTally(RUN, 10);
        for (int i = 0; i < 10; i++) {
            t.attempted(i);
            t.failed(i, "error " + i);
        }
        Counts c = t.counts();
        assertEquals(10, c.sendErrors());
        assertEquals(5, c.errorSamples().size());
    }

    @Test
    void pendingSendsBecomeErrorsAtTheSettleDeadline() throws InterruptedException {
        ProbeTally t = new ProbeTally(RUN, 3);
        t.attempted(0);
        t.attempted(1);
        t.attempted(2);
        t.sent(0);
        long start = System.nanoTime();
        assertFalse(t.awaitSendsSettled(start + TimeUnit.MILLISECONDS.toNanos(100), "no send result within 100ms"));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(100));
        Counts c = t.counts();
        assertEquals(1, c.sent());
        assertEquals(2, c.sendErrors());
        assertEquals(List.of("2x no send result within 100ms"), c.errorSamples());
    }

    @Test
    void waitsWakeUpOnReportsAndStopAtTheDeadline() throws Exception {
        ProbeTally t = new ProbeTally(RUN, 2);
        t.attempted(0);
        t.attempted(1);
        CountDownLatch go = new CountDownLatch(1);
        Thread reporter = new Thread(() -> {
            try {
                go.await();
                t.sent(0);
                t.sent(1);
                Thread.sleep(50);
                t.received(RUN, "0", 0, 1);
                t.received(RUN, "1", 0, 1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        reporter.start();
        go.countDown();
        assertTrue(t.awaitSendsSettled(System.nanoTime() + TimeUnit.SECONDS.toNanos(10), "x"));
        long start = System.nanoTime();
        assertTrue(t.awaitDelivered(System.nanoTime() + TimeUnit.SECONDS.toNanos(10)));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "woken by the receipts, not the deadline");
        reporter.join();

        ProbeTally lossy = sentAll(1);
        long before = System.nanoTime();
        assertFalse(lossy.awaitDelivered(before + TimeUnit.MILLISECONDS.toNanos(80)));
        assertTrue(System.nanoTime() - before >= TimeUnit.MILLISECONDS.toNanos(80));
        assertEquals(1, lossy.counts().lost());
    }
}
