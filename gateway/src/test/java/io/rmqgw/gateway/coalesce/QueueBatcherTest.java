package io.rmqgw.gateway.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** "Nagle off, batch while busy": one request per queue in flight, the waiting ones go next, in arrival order. */
class QueueBatcherTest {

    /** A waiting send: who sent it, its sequence on that sender, its bytes and when it arrived. */
    record Send(int sender, int seq, int bytes, long arrival) {
    }

    private static final QueueBatcher.Limits LIMITS = new QueueBatcher.Limits(3, 1000, 0, 5);

    private static QueueBatcher<Send> batcher() {
        return new QueueBatcher<>(Send::bytes);
    }

    /** What the caller must send now ({@link QueueBatcher#offer} not refused, no linger). */
    private static List<Send> offer(QueueBatcher<Send> q, Send s, QueueBatcher.Limits limits) {
        QueueBatcher.Offered<Send> o = q.offer(s, limits);
        assertFalse(o.linger());
        return o.now();
    }

    @Test
    void anIdleQueueSendsAtOnceAlone() {
        QueueBatcher<Send> q = batcher();
        Send s = new Send(0, 0, 10, 0);
        assertEquals(List.of(s), offer(q, s, LIMITS), "no added delay when nothing is in flight");
        assertTrue(q.inFlight());
        assertEquals(List.of(), q.answered(LIMITS), "nothing waited");
        assertFalse(q.inFlight(), "idle again");
        Send t = new Send(0, 1, 10, 5);
        assertEquals(List.of(t), offer(q, t, LIMITS));
    }

    @Test
    void sendsArrivingWhileOneIsInFlightGoTogetherInArrivalOrderWhenItIsAnswered() {
        QueueBatcher<Send> q = batcher();
        q.offer(new Send(0, 0, 10, 0), LIMITS);
        Send a = new Send(1, 0, 10, 1);
        Send b = new Send(2, 0, 10, 2);
        assertEquals(List.of(), offer(q, a, LIMITS));
        assertEquals(List.of(), offer(q, b, LIMITS));
        assertEquals(2, q.waiting());
        assertEquals(List.of(a, b), q.answered(LIMITS));
        assertTrue(q.inFlight(), "the batch is in flight now");
        assertEquals(List.of(), q.answered(LIMITS));
    }

    @Test
    void aBatchStopsAtMaxMessagesAndMaxBytesTheRestGoNext() {
        QueueBatcher<Send> q = batcher();
        q.offer(new Send(0, 0, 1, 0), LIMITS);
        List<Send> waiting = List.of(new Send(1, 0, 10, 10), new Send(2, 0, 10, 11), new Send(3, 0, 10, 12),
            new Send(4, 0, 10, 13));
        waiting.forEach(s -> q.offer(s, LIMITS));
        assertEquals(waiting.subList(0, 3), q.answered(LIMITS), "max-messages 3");
        assertEquals(waiting.subList(3, 4), q.answered(LIMITS));

        QueueBatcher.Limits bytes = new QueueBatcher.Limits(64, 25, 0, 100);
        q.offer(new Send(5, 0, 10, 20), bytes);
        q.offer(new Send(6, 0, 10, 21), bytes);
        q.offer(new Send(7, 0, 10, 22), bytes);
        assertEquals(List.of(new Send(5, 0, 10, 20), new Send(6, 0, 10, 21)), q.answered(bytes), "max-bytes 25");
        assertEquals(List.of(new Send(7, 0, 10, 22)), q.answered(bytes));
        assertEquals(List.of(), q.answered(bytes));
        assertFalse(q.inFlight());
    }

    @Test
    void withALingerAnIdleQueuesFirstSendWaitsForCompanyAndGoesWithItWhenTheLingerEnds() {
        QueueBatcher<Send> q = batcher();
        QueueBatcher.Limits linger = new QueueBatcher.Limits(64, 1000, 1_000_000, 100);
        Send first = new Send(0, 0, 10, 0);
        QueueBatcher.Offered<Send> o = q.offer(first, linger);
        assertTrue(o.linger(), "the caller calls answered() after the linger");
        assertEquals(List.of(), o.now());
        assertTrue(q.inFlight(), "the linger holds the queue as a request would");
        Send second = new Send(1, 0, 10, 1);
        QueueBatcher.Offered<Send> o2 = q.offer(second, linger);
        assertFalse(o2.linger(), "one linger per idle period");
        assertEquals(List.of(first, second), q.answered(linger), "the linger ended: both go");
        assertEquals(List.of(), q.answered(linger));
        assertFalse(q.inFlight());
    }

    @Test
    void aMessageLargerThanMaxBytesStillGoesAloneAndAFullQueueRefuses() {
        QueueBatcher<Send> q = batcher();
        q.offer(new Send(0, 0, 1, 0), LIMITS);
        Send big = new Send(1, 0, 5000, 1);
        q.offer(big, LIMITS);
        for (int i = 0; i < LIMITS.maxWaiting() - 1; i++) {
            assertEquals(List.of(), offer(q, new Send(2, i, 1, 2), LIMITS));
        }
        assertNull(q.offer(new Send(3, 0, 1, 3), LIMITS), "max-waiting reached: refused, not taken");
        assertEquals(LIMITS.maxWaiting(), q.waiting());
        assertEquals(List.of(big), q.answered(LIMITS), "a batch always takes its first");
    }

    @Test
    void answeredWithoutARequestInFlightIsABug() {
        assertThrows(IllegalStateException.class, () -> batcher().answered(LIMITS));
    }

    /**
     * Many senders on many threads, each sync (its next send after the answer to its previous), a "broker" that
     * answers on its own thread: at most one request in flight at any time, every send sent exactly once, and
     * the sends of each sender in its order.
     */
    @Test
    void concurrentSendersOneInFlightNothingLostNothingTwiceEachSendersOrderKept() throws Exception {
        QueueBatcher<Send> q = batcher();
        QueueBatcher.Limits limits = new QueueBatcher.Limits(8, 1 << 20, 0, 1000);
        int senders = 16;
        int perSender = 200;
        ConcurrentLinkedQueue<List<Send>> requests = new ConcurrentLinkedQueue<>();
        List<Send> stored = new ArrayList<>();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger maxInFlight = new AtomicInteger();
        java.util.concurrent.ConcurrentHashMap<Send, CountDownLatch> answered = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.function.Consumer<List<Send>> send = batch -> {
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            requests.add(batch);
        };
        Thread broker = new Thread(() -> {
            int done = 0;
            while (done < senders * perSender) {
                List<Send> batch = requests.poll();
                if (batch == null) {
                    Thread.onSpinWait();
                    continue;
                }
                stored.addAll(batch);
                done += batch.size();
                inFlight.decrementAndGet();
                List<Send> next = q.answered(limits);
                if (!next.isEmpty()) {
                    maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                    requests.add(next);
                }
                batch.forEach(s -> answered.get(s).countDown());
            }
        });
        broker.start();
        List<Thread> threads = new ArrayList<>();
        for (int sender = 0; sender < senders; sender++) {
            int id = sender;
            Thread t = new Thread(() -> {
                for (int seq = 0; seq < perSender; seq++) {
                    Send s = new Send(id, seq, 10, System.nanoTime());
                    CountDownLatch latch = new CountDownLatch(1);
                    answered.put(s, latch);
                    QueueBatcher.Offered<Send> offered = q.offer(s, limits);
                    if (offered == null) {
                        throw new AssertionError("refused");
                    }
                    List<Send> now = offered.now();
                    if (!now.isEmpty()) {
                        send.accept(now);
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
        assertEquals(senders * perSender, stored.size());
        assertEquals(senders * perSender, new java.util.HashSet<>(stored).size(), "nothing twice");
        assertEquals(1, maxInFlight.get(), "one request in flight per queue");
        int[] next = new int[senders];
        for (Send s : stored) {
            assertEquals(next[s.sender()]++, s.seq(), "sender " + s.sender() + " in its order");
        }
        assertFalse(q.inFlight());
    }
}
