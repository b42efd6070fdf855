package io.rmqgw.scenarios;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.message.MessageExt;

/** Consuming scenarios: a push consumer and a lite pull consumer, each until --count distinct messages. */
final class ConsumerScenarios {

    private ConsumerScenarios() {
    }

    /** Waits out --linger-ms after the count was reached, to catch duplicates and extras. */
    static void linger(Ctx ctx) throws InterruptedException {
        long linger = Math.min(ctx.lingerMs, ctx.remainingMs());
        if (linger > 0) {
            Thread.sleep(linger);
        }
    }

    static final class Push implements ScenarioMain.Scenario {
        private final Ctx ctx;
        private final int consumeThreads;
        private final ScenarioMain.Clients clients = new ScenarioMain.Clients();

        Push(Ctx ctx, int consumeThreads) {
            this.ctx = ctx;
            this.consumeThreads = consumeThreads;
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            Receipts receipts = new Receipts(ctx);
            CountDownLatch enough = new CountDownLatch(1);
            DefaultMQPushConsumer c = ctx.pushConsumer(consumeThreads);
            c.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
                for (MessageExt m : msgs) {
                    receipts.add(m, context.getMessageQueue(), null);
                }
                if (receipts.distinct() >= ctx.count) {
                    enough.countDown();
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();
            clients.add(c::shutdown);
            boolean reached = ctx.count == 0 || enough.await(ctx.remainingMs(), TimeUnit.MILLISECONDS);
            linger(ctx);
            receipts.summarize(summary);
            summary.put("requested", ctx.count).put("consumerGroup", ctx.consumerGroup)
                .put("consumeThreads", consumeThreads);
            return reached && receipts.distinct() >= ctx.count;
        }

        @Override
        public void shutdown() {
            clients.shutdownAll();
        }
    }

    static final class LitePull implements ScenarioMain.Scenario {
        private final Ctx ctx;
        private final ScenarioMain.Clients clients = new ScenarioMain.Clients();

        LitePull(Ctx ctx) {
            this.ctx = ctx;
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            Receipts receipts = new Receipts(ctx);
            DefaultLitePullConsumer c = ctx.litePullConsumer();
            c.start();
            clients.add(c::shutdown);
            int polls = 0;
            while (receipts.distinct() < ctx.count && !ctx.expired()) {
                List<MessageExt> batch = c.poll(Math.max(1, Math.min(1_000, ctx.remainingMs())));
                polls++;
                for (MessageExt m : batch) {
                    receipts.add(m, null, null);
                }
            }
            long lingerUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.min(ctx.lingerMs, ctx.remainingMs()));
            while (System.nanoTime() - lingerUntil < 0) {
                for (MessageExt m : c.poll(Math.max(1, TimeUnit.NANOSECONDS.toMillis(lingerUntil - System.nanoTime())))) {
                    receipts.add(m, null, null);
                }
            }
            // Offsets were auto-committed to the local store; push them to the broker before shutdown.
            c.commitSync();
            receipts.summarize(summary);
            summary.put("requested", ctx.count).put("consumerGroup", ctx.consumerGroup).put("polls", polls);
            return receipts.distinct() >= ctx.count;
        }

        @Override
        public void shutdown() {
            clients.shutdownAll();
        }
    }
}
