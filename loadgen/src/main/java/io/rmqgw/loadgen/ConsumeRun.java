package io.rmqgw.loadgen;

import io.rmqgw.tools.Durations;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Drains a backlog with {@code --clients} push consumers of one group (a new one by default) that start at the
 * first offset, each spending {@code --work} per message: throughput, born-timestamp-to-receipt latency and the
 * messages each consumer got. With {@code --settle-first} the consumers start before the backlog and wait,
 * paused, for it (see {@link #awaitSettled}). The clock starts at the first message received; the first
 * {@code --warmup} of receipts is left out. It ends when {@code expected} messages arrived, when
 * {@code --duration} passed after the warm-up, or when nothing arrived for {@code --idle-timeout}.
 */
final class ConsumeRun {

    private static final Duration SETTLED_FOR = Duration.ofSeconds(2);
    private static final Duration SETTLE_LIMIT = Duration.ofSeconds(60);

    private final BenchSettings s;
    private final PrintWriter out;
    private final String runId;

    ConsumeRun(BenchSettings settings, PrintWriter out, String runId) {
        this.s = settings;
        this.out = out;
        this.runId = runId;
    }

    BenchResult run() throws Exception {
        Instant startedAt = Instant.now();
        if (s.backlog() > 0 && !s.settleFirst()) {
            produceBacklog();
        }
        long expected = s.count() > 0 ? s.count() : s.backlog();
        AtomicReference<Tally> tallyRef = new AtomicReference<>();
        AtomicLong lastReceipt = new AtomicLong(System.nanoTime());
        LongAdder received = new LongAdder();
        // settle-first: receipts before the consumers' resumption count toward the expected total, not the figures
        AtomicBoolean measuring = new AtomicBoolean(!s.settleFirst());
        String group = s.group() != null ? s.group() : "bench_consume_" + runId;
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        LongAdder[] perClient = new LongAdder[s.clients()];
        for (int i = 0; i < s.clients(); i++) {
            perClient[i] = new LongAdder();
            consumers.add(consumer(group, i, tallyRef, measuring, received, perClient[i], lastReceipt));
        }
        long begin = System.nanoTime();
        long hardStop = begin + s.timeout().toNanos();
        try {
            for (DefaultMQPushConsumer c : consumers) {
                c.start();
            }
            if (s.settleFirst()) {
                awaitSettled(consumers);
                consumers.forEach(DefaultMQPushConsumer::suspend);
                produceBacklog();
                out.printf("resuming the consumers (%,d messages arrived while they were paused)%n", received.sum());
                lastReceipt.set(System.nanoTime());
                begin = System.nanoTime();
                measuring.set(true);
                consumers.forEach(DefaultMQPushConsumer::resume);
            }
        } catch (Exception | Error e) {
            consumers.forEach(DefaultMQPushConsumer::shutdown);
            throw e;
        }
        out.printf("consumer group %s started on %s: %d consumer%s x %d thread%s%s (%s); waiting for messages%n", group,
            s.topic(), consumers.size(), consumers.size() == 1 ? "" : "s", s.consumeThreads(),
            s.consumeThreads() == 1 ? "" : "s", s.work().isZero() ? "" : ", " + Durations.format(s.work()) + " of work per message",
            expected > 0 ? String.format("%,d expected", expected) : "until --duration or --idle-timeout");
        out.flush();
        Progress progress = null;
        // why the run ended: everything expected arrived (then the last receipt ends the measurement), or
        // not (duration, a stall, --timeout: then the whole time until the end counts)
        boolean complete = false;
        long stoppedAt;
        try {
            while (true) {
                long now = System.nanoTime();
                Tally t = tallyRef.get();
                if (t != null && progress == null) {
                    progress = new Progress(out, "received", t, t.measureStartNanos() - s.warmup().toNanos(), null);
                }
                if (now - hardStop >= 0) {
                    out.println("bench: --timeout passed, stopping");
                    break;
                }
                if (t == null) {
                    if (now - begin > s.idleTimeout().toNanos() * 3) {
                        out.printf("bench: no message within %s of the consumer's start%n",
                            Durations.format(s.idleTimeout().multipliedBy(3)));
                        break;
                    }
                } else {
                    if (expected > 0 && received.sum() >= expected) {
                        complete = true;
                        break;
                    }
                    if (t.phaseAt(now) == Tally.Phase.DONE) {
                        break;
                    }
                    if (now - lastReceipt.get() > s.idleTimeout().toNanos()) {
                        out.printf("bench: nothing arrived for %s, stopping%n", Durations.format(s.idleTimeout()));
                        // without an expected count, silence means the backlog is drained
                        complete = expected == 0;
                        break;
                    }
                }
                Thread.sleep(20);
            }
        } finally {
            stoppedAt = System.nanoTime();
            if (progress != null) {
                progress.close();
            }
            for (DefaultMQPushConsumer c : consumers) {
                c.shutdown();
            }
        }
        Tally t = tallyRef.get();
        if (t == null) {
            t = new Tally(begin, 0, 1, 0);
        }
        long end = complete ? Long.MIN_VALUE : Math.min(stoppedAt, t.measureEndNanos());
        List<Long> counts = new ArrayList<>();
        for (LongAdder n : perClient) {
            counts.add(n.sum());
        }
        return new BenchResult(s, Clients.version(), startedAt, t.summary(end), null, 0, 0, expected, counts);
    }

    private void produceBacklog() throws Exception {
        out.printf("producing a backlog of %,d messages of %d B on %s (not measured)%n", s.backlog(), s.size(), s.topic());
        out.flush();
        BenchResult produced = new ProduceRun(s.backlogProducer(s.backlog()), out, runId + "b").run();
        out.printf("backlog: %,d sent, %,d errors in %.1f s%n", produced.main().ok(), produced.main().errors(),
            produced.main().measuredSeconds());
        out.flush();
    }

    /**
     * Waits until every consumer holds at least one queue, no queue is held twice, and the assignment has not
     * changed for {@link #SETTLED_FOR}: the steady state a long-running group is in, without the start's one-by-one
     * rebalance (which can leave a queue to nobody until the next rebalance, 20 s later). Gives up after
     * {@link #SETTLE_LIMIT}, saying so, and measures from there.
     */
    private void awaitSettled(List<DefaultMQPushConsumer> consumers) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + SETTLE_LIMIT.toNanos();
        String last = null;
        long lastChange = start;
        while (true) {
            long now = System.nanoTime();
            List<Integer> held = new ArrayList<>();
            StringBuilder assignment = new StringBuilder();
            Set<MessageQueue> distinct = new TreeSet<>();
            for (DefaultMQPushConsumer c : consumers) {
                Set<MessageQueue> queues = new TreeSet<>(
                    c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet());
                held.add(queues.size());
                distinct.addAll(queues);
                assignment.append(queues).append(';');
            }
            String current = assignment.toString();
            if (!current.equals(last)) {
                last = current;
                lastChange = now;
            }
            // a queue held by two consumers: one of them has not rebalanced since the other joined
            boolean partition = held.stream().allMatch(n -> n > 0)
                && held.stream().mapToInt(Integer::intValue).sum() == distinct.size();
            if (partition && now - lastChange >= SETTLED_FOR.toNanos()) {
                out.printf("rebalance settled after %.1f s: queues per consumer %s%n", (now - start) / 1e9, held);
                out.flush();
                return;
            }
            if (now - deadline >= 0) {
                out.printf("bench: the rebalance did not settle within %s (queues per consumer %s); measuring anyway%n",
                    Durations.format(SETTLE_LIMIT), held);
                out.flush();
                return;
            }
            Thread.sleep(100);
        }
    }

    /**
     * Push consumer {@code index} of the run: its own client instance (instance name {@code bench-RUN-index}, so
     * its own connections and rebalance identity), {@code --threads} consume threads, {@code --work} per message.
     */
    private DefaultMQPushConsumer consumer(String group, int index, AtomicReference<Tally> tallyRef,
                                           AtomicBoolean measuring, LongAdder received, LongAdder mine,
                                           AtomicLong lastReceipt) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(s.namesrv());
        consumer.setInstanceName("bench-" + runId + "-" + index);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeThreadMin(s.consumeThreads());
        consumer.setConsumeThreadMax(s.consumeThreads());
        consumer.setPullBatchSize(s.pullBatch());
        // shutdown waits for running listeners, so the figures are complete when read
        consumer.setAwaitTerminationMillisWhenShutdown(5_000);
        consumer.subscribe(s.topic(), "*");
        long workNanos = s.work().toNanos();
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            for (MessageExt m : msgs) {
                long wall = System.currentTimeMillis();
                if (workNanos > 0) {
                    spend(workNanos);
                }
                // counted when consumed (after the work), so the count is of messages done
                long now = System.nanoTime();
                received.increment();
                mine.increment();
                lastReceipt.set(now);
                if (!measuring.get()) {
                    continue;
                }
                Tally t = tallyRef.get();
                if (t == null) {
                    tallyRef.compareAndSet(null, new Tally(now, s.warmup().toNanos(), s.durationNanos(), 0));
                    t = tallyRef.get();
                }
                t.success(t.phaseAt(now), now, (wall - m.getBornTimestamp()) * 1000);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        return consumer;
    }

    /** Sleeps {@code nanos} (a consumer's work), to the end even when woken early. */
    static void spend(long nanos) {
        long end = System.nanoTime() + nanos;
        long left = nanos;
        while (left > 0) {
            LockSupport.parkNanos(left);
            left = end - System.nanoTime();
        }
    }
}
