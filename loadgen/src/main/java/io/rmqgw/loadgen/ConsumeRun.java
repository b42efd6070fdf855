package io.rmqgw.loadgen;

import io.rmqgw.tools.Durations;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Drains a backlog with {@code --clients} push consumers of one group (a new one by default) that start at the
 * first offset, each spending {@code --work} per message: throughput, born-timestamp-to-receipt latency and the
 * messages each consumer got. The clock starts at the first message received; the first
 * {@code --warmup} of receipts is left out. It ends when {@code expected} messages arrived, when
 * {@code --duration} passed after the warm-up, or when nothing arrived for {@code --idle-timeout}.
 */
final class ConsumeRun {

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
        if (s.backlog() > 0) {
            out.printf("producing a backlog of %,d messages of %d B on %s first (not measured)%n", s.backlog(), s.size(),
                s.topic());
            out.flush();
            BenchResult produced = new ProduceRun(s.backlogProducer(s.backlog()), out, runId + "b").run();
            out.printf("backlog: %,d sent, %,d errors in %.1f s%n", produced.main().ok(), produced.main().errors(),
                produced.main().measuredSeconds());
            out.flush();
        }
        long expected = s.count() > 0 ? s.count() : s.backlog();
        AtomicReference<Tally> tallyRef = new AtomicReference<>();
        AtomicLong lastReceipt = new AtomicLong(System.nanoTime());
        LongAdder received = new LongAdder();
        String group = s.group() != null ? s.group() : "bench_consume_" + runId;
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        LongAdder[] perClient = new LongAdder[s.clients()];
        for (int i = 0; i < s.clients(); i++) {
            perClient[i] = new LongAdder();
            consumers.add(consumer(group, i, tallyRef, received, perClient[i], lastReceipt));
        }
        long begin = System.nanoTime();
        long hardStop = begin + s.timeout().toNanos();
        try {
            for (DefaultMQPushConsumer c : consumers) {
                c.start();
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

    /**
     * Push consumer {@code index} of the run: its own client instance (instance name {@code bench-RUN-index}, so
     * its own connections and rebalance identity), {@code --threads} consume threads, {@code --work} per message.
     */
    private DefaultMQPushConsumer consumer(String group, int index, AtomicReference<Tally> tallyRef, LongAdder received,
                                           LongAdder mine, AtomicLong lastReceipt) throws Exception {
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
                Tally t = tallyRef.get();
                if (t == null) {
                    tallyRef.compareAndSet(null, new Tally(now, s.warmup().toNanos(), s.durationNanos(), 0));
                    t = tallyRef.get();
                }
                t.success(t.phaseAt(now), now, (wall - m.getBornTimestamp()) * 1000);
                received.increment();
                mine.increment();
                lastReceipt.set(now);
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
