package io.rmqgw.scenarios;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Sends --count messages round-robin over --keys order keys, each to the queue chosen by its key
 * (MessageQueueSelector), then consumes them with MessageListenerOrderly: every key's sequence
 * numbers must arrive strictly increasing and complete.
 */
final class OrderlyScenario implements ScenarioMain.Scenario {

    private final Ctx ctx;
    private final int keys;
    private final ScenarioMain.Clients clients = new ScenarioMain.Clients();

    OrderlyScenario(Ctx ctx, int keys) {
        this.ctx = ctx;
        this.keys = Math.max(1, keys);
    }

    private String orderKey(int i) {
        return ctx.keyPrefix + "-o" + (i % keys);
    }

    @Override
    public boolean run(Json.Obj summary) throws Exception {
        DefaultMQProducer producer = ctx.producer();
        producer.start();
        clients.add(producer::shutdown);
        MessageQueueSelector byKey = (mqs, msg, arg) -> mqs.get(Math.floorMod(arg.hashCode(), mqs.size()));
        Map<String, String> queueOfKey = new TreeMap<>();
        int sent = 0;
        for (int i = 0; i < ctx.count && !ctx.expired(); i++) {
            String orderKey = orderKey(i);
            // Message key unique per message; the order key travels in the body: "<orderKey>|<seq>|".
            Message m = new Message(ctx.topic, ctx.tag, ctx.key(i),
                (orderKey + "|" + i + "|").getBytes(StandardCharsets.UTF_8));
            try {
                SendResult r = producer.send(m, byKey, orderKey);
                ctx.out.emit(ProducerScenarios.sentLine(ctx, ctx.key(i), i, r, r.getMsgId(), r.getOffsetMsgId())
                    .put("orderKey", orderKey));
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    sent++;
                    String q = r.getMessageQueue().getBrokerName() + ":" + r.getMessageQueue().getQueueId();
                    String previous = queueOfKey.put(orderKey, q);
                    if (previous != null && !previous.equals(q)) {
                        queueOfKey.put(orderKey, previous + "," + q);
                    }
                }
            } catch (Exception e) {
                ctx.out.emit(ctx.line("send-error").put("key", ctx.key(i)).put("seq", i).put("error", e.toString()));
            }
        }

        Receipts receipts = new Receipts(ctx);
        Map<String, List<Integer>> seqByKey = new TreeMap<>();
        CountDownLatch enough = new CountDownLatch(1);
        final int target = sent;
        DefaultMQPushConsumer consumer = ctx.pushConsumer(Math.min(keys, 4));
        consumer.registerMessageListener((MessageListenerOrderly) (msgs, context) -> {
            for (MessageExt m : msgs) {
                boolean fresh = receipts.add(m, context.getMessageQueue(), null);
                String[] parts = new String(m.getBody(), StandardCharsets.UTF_8).split("\\|");
                if (fresh && parts.length >= 2) {
                    synchronized (seqByKey) {
                        seqByKey.computeIfAbsent(parts[0], k -> new ArrayList<>()).add(Integer.parseInt(parts[1]));
                    }
                }
            }
            if (receipts.distinct() >= target) {
                enough.countDown();
            }
            return ConsumeOrderlyStatus.SUCCESS;
        });
        consumer.start();
        clients.add(consumer::shutdown);
        boolean reached = target == 0 || enough.await(ctx.remainingMs(), TimeUnit.MILLISECONDS);
        ConsumerScenarios.linger(ctx);

        boolean allInOrder = true;
        Map<String, Object> perKey = new LinkedHashMap<>();
        synchronized (seqByKey) {
            for (Map.Entry<String, List<Integer>> e : seqByKey.entrySet()) {
                List<Integer> seqs = e.getValue();
                boolean inOrder = true;
                for (int i = 1; i < seqs.size(); i++) {
                    inOrder &= seqs.get(i) > seqs.get(i - 1);
                }
                allInOrder &= inOrder;
                perKey.put(e.getKey(), Json.obj().put("count", seqs.size()).put("inOrder", inOrder)
                    .put("queue", queueOfKey.get(e.getKey())).put("seqs", seqs));
            }
        }
        receipts.summarize(summary);
        summary.put("sent", sent).put("requested", ctx.count).put("keys", keys).put("perKey", perKey)
            .put("keysInOrder", allInOrder).put("consumerGroup", ctx.consumerGroup);
        boolean oneQueuePerKey = queueOfKey.values().stream().noneMatch(q -> q.contains(","));
        summary.put("oneQueuePerKey", oneQueuePerKey);
        return sent == ctx.count && reached && receipts.distinct() >= sent && allInOrder && oneQueuePerKey;
    }

    @Override
    public void shutdown() {
        clients.shutdownAll();
    }
}
