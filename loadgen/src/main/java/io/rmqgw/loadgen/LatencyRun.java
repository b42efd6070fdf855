package io.rmqgw.loadgen;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Sends at a fixed {@code --rate} and measures send latency (request to answer) and, with a push
 * consumer of a new group on the same topic, end-to-end latency (born timestamp to receipt) of the
 * measured sends. Messages carry the run id in a property; the consumer ignores other runs' messages.
 * Use a topic without a backlog (a new group starts at its first offset).
 */
final class LatencyRun {

    private final BenchSettings s;
    private final PrintWriter out;
    private final String runId;

    LatencyRun(BenchSettings settings, PrintWriter out, String runId) {
        this.s = settings;
        this.out = out;
        this.runId = runId;
    }

    BenchResult run() throws Exception {
        Instant startedAt = Instant.now();
        List<DefaultMQProducer> producers = new ArrayList<>();
        DefaultMQPushConsumer consumer = null;
        try {
            for (int i = 0; i < s.clients(); i++) {
                DefaultMQProducer p = Clients.producer(s.namesrv(), "bench_producer_" + runId,
                    "bench-" + runId + "-" + i, s);
                p.start();
                producers.add(p);
            }
            int queues = s.queues() > 0
                ? Clients.awaitRoute(producers.get(0), s.topic(), s.queues(), Duration.ofSeconds(30)) : 0;
            // wall-clock bounds of the measured sends, for the consumer (born timestamps are wall clock)
            AtomicLongArray bounds = new AtomicLongArray(2);
            Tally e2e = new Tally(System.nanoTime(), 0, Long.MAX_VALUE, 0);
            if (s.endToEnd()) {
                String group = s.group() != null ? s.group() : "bench_latency_" + runId;
                consumer = new DefaultMQPushConsumer(group);
                consumer.setNamesrvAddr(s.namesrv());
                consumer.setInstanceName("bench-c-" + runId);
                consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
                consumer.setConsumeThreadMin(s.consumeThreads());
                consumer.setConsumeThreadMax(s.consumeThreads());
                consumer.setPullBatchSize(s.pullBatch());
                consumer.setAwaitTerminationMillisWhenShutdown(5_000);
                consumer.subscribe(s.topic(), "*");
                consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
                    long now = System.nanoTime();
                    long wall = System.currentTimeMillis();
                    for (MessageExt m : msgs) {
                        if (!runId.equals(m.getUserProperty(ProduceRun.RUN_PROPERTY))) {
                            continue;
                        }
                        long born = m.getBornTimestamp();
                        long from = bounds.get(0);
                        boolean measured = from != 0 && born >= from && born < bounds.get(1);
                        e2e.success(measured ? Tally.Phase.MEASURE : Tally.Phase.WARMUP, now, (wall - born) * 1000);
                    }
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                consumer.start();
                awaitAssignment(consumer, Math.max(1, queues), Duration.ofSeconds(20));
            }
            long wallStart = System.currentTimeMillis();
            bounds.set(1, s.duration() == null ? Long.MAX_VALUE : wallStart + s.warmup().toMillis() + s.duration().toMillis());
            bounds.set(0, wallStart + s.warmup().toMillis());
            BenchResult sent = new ProduceRun(s, out, runId).load(producers, startedAt, runId);
            Tally.Summary endToEnd = null;
            if (consumer != null) {
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (e2e.measuredSoFar() < sent.main().ok() && System.nanoTime() - deadline < 0) {
                    Thread.sleep(20);
                }
                consumer.shutdown();
                consumer = null;
                endToEnd = e2e.summary();
            }
            return new BenchResult(s, sent.clientVersion(), startedAt, sent.main(), endToEnd, sent.late(),
                sent.unfinished(), sent.main().ok());
        } finally {
            if (consumer != null) {
                consumer.shutdown();
            }
            for (DefaultMQProducer p : producers) {
                p.shutdown();
            }
        }
    }

    /** Waits until the consumer owns {@code queues} queues (a rebalance), so the first sends are not held back. */
    private void awaitAssignment(DefaultMQPushConsumer consumer, int queues, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int owned = 0;
        while (System.nanoTime() - deadline < 0) {
            owned = consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().size();
            if (owned >= queues) {
                out.printf("consumer owns %d queues%n", owned);
                out.flush();
                return;
            }
            Thread.sleep(100);
        }
        out.printf("consumer owns %d queues after %ds (the warm-up covers the rest)%n", owned, timeout.toSeconds());
        out.flush();
    }
}
