package io.rmqgw.gateway.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.coalesce.QueueBatcher.Offer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * "Nagle off, batch while busy": up to max-in-flight requests per queue, a free slot asks for a drain, the
 * waiting sends go next, in arrival order.
 */
class QueueBatcherTest {

    /** A waiting send: who sent it, its sequence on that sender, its bytes. */
    record Send(int sender, int seq, int bytes) {
    }

    /** max 3 messages, 1000 bytes, no linger, 5 waiting, 1 in flight. */
    private static final QueueBatcher.Limits ONE = new QueueBatcher.Limits(3, 1000, 0, 5, 1);
    private static final QueueBatcher.Limits TWO = new QueueBatcher.Limits(3, 1000, 0, 5, 2);

    private static QueueBatcher<Send> batcher() {
        return new QueueBatcher<>(Send::bytes);
    }

    private static Send send(int sender) {
        return new Send(sender, 0, 10);
    }

    @Test
    void anIdleQueueAsksForADrainWhichTakesTheSendAlone() {
        QueueBatcher<Send> q = batcher();
        Send s = send(0);
        assertEquals(Offer.DRAIN, q.offer(s, ONE), "no added delay when nothing is in flight");
        assertEquals(List.of(s), q.take(ONE));
        assertEquals(1, q.inFlight());
        assertEquals(List.of(), q.take(ONE), "the one slot is taken");
        q.answered();
        assertEquals(List.of(), q.take(ONE), "nothing waited");
        assertEquals(0, q.inFlight(), "idle again");
        assertEquals(Offer.DRAIN, q.offer(send(1), ONE));
    }

    @Test
    void sendsArrivingWhileTheDrainIsOnItsWayGoWithItInArrivalOrder() {
        QueueBatcher<Send> q = batcher();
        Send a = send(0);
        Send b = send(1);
        Send c = send(2);
        assertEquals(Offer.DRAIN, q.offer(a, TWO));
        assertEquals(Offer.WAITS, q.offer(b, TWO), "one drain is enough");
        assertEquals(Offer.WAITS, q.offer(c, TWO));
        assertEquals(List.of(a, b, c), q.take(TWO));
        assertEquals(List.of(), q.take(TWO));
    }

    @Test
    void upToMaxInFlightBatchesAtOnceTheRestWaitForAnAnswer() {
        QueueBatcher<Send> q = batcher();
        Send a = send(0);
        Send b = send(1);
        assertEquals(Offer.DRAIN, q.offer(a, TWO));
        assertEquals(List.of(a), q.take(TWO));
        assertEquals(Offer.DRAIN, q.offer(b, TWO), "a slot is free: b need not wait for a's answer");
        assertEquals(List.of(b), q.take(TWO));
        assertEquals(2, q.inFlight());
        Send c = send(2);
        Send d = send(3);
        assertEquals(Offer.WAITS, q.offer(c, TWO), "both slots taken");
        assertEquals(Offer.WAITS, q.offer(d, TWO));
        assertEquals(List.of(), q.take(TWO), "a drain finds no slot");
        q.answered();
        assertEquals(List.of(c, d), q.take(TWO), "an answer frees a slot: the waiting go together");
        assertEquals(List.of(), q.take(TWO));
        q.answered();
        q.answered();
        assertEquals(0, q.inFlight());
    }

    @Test
    void withMaxInFlightOneTheNextBatchWaitsForTheAnswerToThePrevious() {
        QueueBatcher<Send> q = batcher();
        q.offer(send(0), ONE);
        q.take(ONE);
        Send b = send(1);
        assertEquals(Offer.WAITS, q.offer(b, ONE));
        assertEquals(List.of(), q.take(ONE));
        q.answered();
        assertEquals(List.of(b), q.take(ONE));
    }

    @Test
    void aLowerMaxInFlightAfterAReloadHoldsNewBatchesUntilTheRequestsInFlightFallBelowIt() {
        QueueBatcher<Send> q = batcher();
        q.offer(send(0), TWO);
        q.take(TWO);
        q.offer(send(1), TWO);
        q.take(TWO);
        Send c = send(2);
        assertEquals(Offer.WAITS, q.offer(c, ONE));
        q.answered();
        assertEquals(List.of(), q.take(ONE), "one still in flight: the limit is one");
        q.answered();
        assertEquals(List.of(c), q.take(ONE));
    }

    @Test
    void aBatchStopsAtMaxMessagesAndMaxBytesTheRestGoNext() {
        QueueBatcher<Send> q = batcher();
        List<Send> waiting = List.of(new Send(1, 0, 10), new Send(2, 0, 10), new Send(3, 0, 10), new Send(4, 0, 10));
        QueueBatcher.Limits limits = new QueueBatcher.Limits(3, 1000, 0, 100, 1);
        waiting.forEach(s -> q.offer(s, limits));
        assertEquals(waiting.subList(0, 3), q.take(limits), "max-messages 3");
        q.answered();
        assertEquals(waiting.subList(3, 4), q.take(limits));
        q.answered();

        QueueBatcher.Limits bytes = new QueueBatcher.Limits(64, 25, 0, 100, 1);
        List<Send> more = List.of(new Send(5, 0, 10), new Send(6, 0, 10), new Send(7, 0, 10));
        more.forEach(s -> q.offer(s, bytes));
        assertEquals(more.subList(0, 2), q.take(bytes), "max-bytes 25");
        q.answered();
        assertEquals(more.subList(2, 3), q.take(bytes));
        q.answered();
        assertEquals(List.of(), q.take(bytes));
        assertEquals(0, q.inFlight());
    }

    @Test
    void withALingerAnIdleQueueLingersOnlyWhileBusyAndItsSendGoesWithItsCompanyWhenTheLingerEnds() {
        QueueBatcher<Send> q = batcher();
        QueueBatcher.Limits linger = new QueueBatcher.Limits(64, 1000, 1_000_000, 100, 1);
        Send lone = send(0);
        assertEquals(Offer.DRAIN, q.offer(lone, linger), "low load (no batch of several yet): no linger, no delay");
        assertEquals(List.of(lone), q.take(linger));
        Send second = send(1);
        Send third = send(2);
        assertEquals(Offer.WAITS, q.offer(second, linger));
        assertEquals(Offer.WAITS, q.offer(third, linger));
        q.answered();
        assertEquals(List.of(second, third), q.take(linger), "the sends that waited go as one batch");
        q.answered();

        Send first = send(3);
        assertEquals(Offer.LINGER, q.offer(first, linger), "idle after a batch of two: busy, so it waits for company");
        Send company = send(4);
        assertEquals(Offer.WAITS, q.offer(company, linger), "one linger per idle period");
        assertEquals(List.of(), q.take(linger), "nothing goes during the linger");
        q.lingerEnded();
        assertEquals(List.of(first, company), q.take(linger), "the linger ended: both go");
        q.answered();

        Send alone = send(5);
        assertEquals(Offer.LINGER, q.offer(alone, linger));
        q.lingerEnded();
        assertEquals(List.of(alone), q.take(linger), "a linger that found no company");
        q.answered();
        assertEquals(Offer.DRAIN, q.offer(send(6), linger), "the load is gone: the next send to the idle queue goes at once");
    }

    @Test
    void aMessageLargerThanMaxBytesStillGoesAloneAndAFullQueueRefuses() {
        QueueBatcher<Send> q = batcher();
        q.offer(new Send(0, 0, 1), ONE);
        q.take(ONE);
        Send big = new Send(1, 0, 5000);
        q.offer(big, ONE);
        for (int i = 0; i < ONE.maxWaiting() - 1; i++) {
            assertEquals(Offer.WAITS, q.offer(new Send(2, i, 1), ONE));
        }
        assertEquals(Offer.REFUSED, q.offer(new Send(3, 0, 1), ONE), "max-waiting reached: refused, not taken");
        assertEquals(ONE.maxWaiting(), q.waiting());
        q.answered();
        assertEquals(List.of(big), q.take(ONE), "a batch always takes its first");
    }

    @Test
    void anAnswerWithoutARequestInFlightOrALingerEndWithoutALingerIsABug() {
        assertThrows(IllegalStateException.class, () -> batcher().answered());
        assertThrows(IllegalStateException.class, () -> batcher().lingerEnded());
    }

    /**
     * Many sync senders on many threads; one "event loop" thread runs every drain and every answer, as the
     * pooled connection's loop does, and writes each batch to a "broker" thread that answers them (in the order
     * written). At most max-in-flight requests at any time, every send written exactly once, all of them in the
     * order they were offered per sender, and each sender's sends stored in its order.
     */
    @Test
    void concurrentSendersNothingLostNothingTwiceEachSendersOrderKept() throws Exception {
        QueueBatcher<Send> q = batcher();
        QueueBatcher.Limits limits = new QueueBatcher.Limits(8, 1 << 20, 0, 1000, 3);
        int senders = 16;
        int perSender = 200;
        ExecutorService loop = Executors.newSingleThreadExecutor();
        LinkedBlockingQueue<List<Send>> wire = new LinkedBlockingQueue<>();
        List<Send> stored = new ArrayList<>();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger maxInFlight = new AtomicInteger();
        Map<Send, CountDownLatch> answered = new ConcurrentHashMap<>();
        Runnable drain = () -> {
            for (List<Send> batch = q.take(limits); !batch.isEmpty(); batch = q.take(limits)) {
                maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                wire.add(batch);
            }
        };
        Thread broker = new Thread(() -> {
            int done = 0;
            try {
                while (done < senders * perSender) {
                    List<Send> batch = wire.poll(30, TimeUnit.SECONDS);
                    if (batch == null) {
                        return;
                    }
                    stored.addAll(batch);
                    done += batch.size();
                    loop.execute(() -> {
                        inFlight.decrementAndGet();
                        q.answered();
                        drain.run();
                        batch.forEach(s -> answered.get(s).countDown());
                    });
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        broker.start();
        List<Thread> threads = new ArrayList<>();
        for (int sender = 0; sender < senders; sender++) {
            int id = sender;
            Thread t = new Thread(() -> {
                for (int seq = 0; seq < perSender; seq++) {
                    Send s = new Send(id, seq, 10);
                    CountDownLatch latch = new CountDownLatch(1);
                    answered.put(s, latch);
                    Offer offer = q.offer(s, limits);
                    if (offer == Offer.REFUSED || offer == Offer.LINGER) {
                        throw new AssertionError(offer.toString());
                    }
                    if (offer == Offer.DRAIN) {
                        loop.execute(drain);
                    }
                    try {
                        if (!latch.await(30, TimeUnit.SECONDS)) {
                            throw new AssertionError("no answer for " + s);
                        }
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(60_000);
        }
        broker.join(60_000);
        loop.shutdown();
        assertTrue(loop.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(senders * perSender, stored.size());
        assertEquals(senders * perSender, new HashSet<>(stored).size(), "nothing twice");
        assertTrue(maxInFlight.get() <= limits.maxInFlight(), "at most max-in-flight: " + maxInFlight.get());
        int[] next = new int[senders];
        for (Send s : stored) {
            assertEquals(next[s.sender()]++, s.seq(), "sender " + s.sender() + " in its order");
        }
        assertEquals(0, q.inFlight());
        assertFalse(q.waiting() > 0);
    }
}
