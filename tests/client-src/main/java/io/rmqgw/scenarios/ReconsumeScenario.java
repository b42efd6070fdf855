package io.rmqgw.scenarios;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Sends --count (default 1) messages; the push consumer answers RECONSUME_LATER on each first
 * delivery (delay level --retry-delay-level, 1 = 1 s, 0 = the broker's choice, 3 + reconsume
 * times = 10 s and more), then CONSUME_SUCCESS. Every message must come back with
 * reconsumeTimes &gt; 0 (through the consumer group's %RETRY% topic: CONSUMER_SEND_MSG_BACK).
 */
final class ReconsumeScenario implements ScenarioMain.Scenario {

    private final Ctx ctx;
    private final int delayLevel;
    private final ScenarioMain.Clients clients = new ScenarioMain.Clients();

    ReconsumeScenario(Ctx ctx, int delayLevel) {
        this.ctx = ctx;
        this.delayLevel = delayLevel;
    }

    @Override
    public boolean run(Json.Obj summary) throws Exception {
        int count = ctx.count;
        DefaultMQProducer producer = ctx.producer();
        producer.start();
        clients.add(producer::shutdown);
        Set<String> sentKeys = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < count && !ctx.expired(); i++) {
            Message m = ctx.message(i);
            SendResult r = producer.send(m);
            ctx.out.emit(ProducerScenarios.sentLine(ctx, m.getKeys(), i, r, r.getMsgId(), r.getOffsetMsgId()));
            if (r.getSendStatus() == SendStatus.SEND_OK) {
                sentKeys.add(m.getKeys());
            }
        }

        Receipts receipts = new Receipts(ctx);
        Set<String> rejected = ConcurrentHashMap.newKeySet();
        Map<String, Integer> redelivered = new ConcurrentHashMap<>();
        CountDownLatch allBack = new CountDownLatch(1);
        DefaultMQPushConsumer consumer = ctx.pushConsumer(1);
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            MessageExt m = msgs.get(0);
            String key = m.getKeys();
            if (m.getReconsumeTimes() == 0 && key != null && rejected.add(key)) {
                receipts.add(m, context.getMessageQueue(), "RECONSUME_LATER");
                context.setDelayLevelWhenNextConsume(delayLevel);
                return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            }
            receipts.add(m, context.getMessageQueue(), "CONSUME_SUCCESS");
            if (m.getReconsumeTimes() > 0 && key != null) {
                redelivered.merge(key, m.getReconsumeTimes(), Math::max);
            }
            if (redelivered.keySet().containsAll(sentKeys)) {
                allBack.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        clients.add(consumer::shutdown);
        boolean back = allBack.await(ctx.remainingMs(), TimeUnit.MILLISECONDS);
        ConsumerScenarios.linger(ctx);
        receipts.summarize(summary);
        List<String> missing = new ArrayList<>(sentKeys);
        missing.removeAll(redelivered.keySet());
        summary.put("sent", sentKeys.size()).put("requested", count).put("rejected", rejected.size())
            .put("redelivered", new TreeMap<>(redelivered)).put("missing", missing)
            .put("delayLevel", delayLevel).put("consumerGroup", ctx.consumerGroup);
        return sentKeys.size() == count && back;
    }

    @Override
    public void shutdown() {
        clients.shutdownAll();
    }
}
