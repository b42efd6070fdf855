package io.rmqgw.scenarios;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Two transactional messages: "commit" is committed by the local transaction, "unknown" is left
 * UNKNOW, so the broker checks it back (CHECK_TRANSACTION_STATE on the producer's connection) and
 * the listener then commits it. A push consumer must receive both; the check-back must have
 * happened for "unknown" (and may also happen for "commit" if its END_TRANSACTION was slow).
 */
final class TransactionScenario implements ScenarioMain.Scenario {

    private final Ctx ctx;
    private final ScenarioMain.Clients clients = new ScenarioMain.Clients();

    TransactionScenario(Ctx ctx) {
        this.ctx = ctx;
    }

    @Override
    public boolean run(Json.Obj summary) throws Exception {
        String commitKey = ctx.keyPrefix + "-commit";
        String unknownKey = ctx.keyPrefix + "-unknown";
        Map<String, Integer> checks = new ConcurrentHashMap<>();
        CountDownLatch unknownChecked = new CountDownLatch(1);

        TransactionMQProducer producer = new TransactionMQProducer(ctx.producerGroup, ctx.aclHook);
        ctx.configureProducer(producer);
        producer.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                LocalTransactionState state = unknownKey.equals(msg.getKeys())
                    ? LocalTransactionState.UNKNOW : LocalTransactionState.COMMIT_MESSAGE;
                ctx.out.emit(ctx.line("local-transaction").put("key", msg.getKeys()).put("state", state.name()));
                return state;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                checks.merge(String.valueOf(msg.getKeys()), 1, Integer::sum);
                ctx.out.emit(ctx.line("checked").put("key", msg.getKeys()).put("msgId", msg.getMsgId())
                    .put("transactionId", msg.getTransactionId()).put("answer", "COMMIT_MESSAGE")
                    .put("thread", Thread.currentThread().getName()));
                if (unknownKey.equals(msg.getKeys())) {
                    unknownChecked.countDown();
                }
                return LocalTransactionState.COMMIT_MESSAGE;
            }
        });
        producer.start();
        clients.add(producer::shutdown);

        int seq = 0;
        int sent = 0;
        for (String key : new String[] {commitKey, unknownKey}) {
            SendResult r = producer.sendMessageInTransaction(ctx.message(key, seq), null);
            ctx.out.emit(ProducerScenarios.sentLine(ctx, key, seq, r, r.getMsgId(), r.getOffsetMsgId())
                .put("localState", r instanceof org.apache.rocketmq.client.producer.TransactionSendResult
                    ? String.valueOf(((org.apache.rocketmq.client.producer.TransactionSendResult) r)
                    .getLocalTransactionState()) : null));
            if (r.getSendStatus() == org.apache.rocketmq.client.producer.SendStatus.SEND_OK) {
                sent++;
            }
            seq++;
        }

        Set<String> expected = new HashSet<>();
        expected.add(commitKey);
        expected.add(unknownKey);
        Receipts receipts = new Receipts(ctx);
        Set<String> seenKeys = ConcurrentHashMap.newKeySet();
        CountDownLatch both = new CountDownLatch(1);
        DefaultMQPushConsumer consumer = ctx.pushConsumer(1);
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            for (MessageExt m : msgs) {
                receipts.add(m, context.getMessageQueue(), null);
                if (m.getKeys() != null) {
                    seenKeys.add(m.getKeys());
                }
            }
            if (seenKeys.containsAll(expected)) {
                both.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        clients.add(consumer::shutdown);

        boolean visible = both.await(ctx.remainingMs(), TimeUnit.MILLISECONDS);
        boolean checked = unknownChecked.await(Math.max(0, ctx.remainingMs()), TimeUnit.MILLISECONDS);
        ConsumerScenarios.linger(ctx);
        receipts.summarize(summary);
        Map<String, Object> visibility = new LinkedHashMap<>();
        visibility.put(commitKey, seenKeys.contains(commitKey));
        visibility.put(unknownKey, seenKeys.contains(unknownKey));
        summary.put("sent", sent).put("visible", visibility).put("checks", new LinkedHashMap<>(checks))
            .put("unknownCheckedBack", checked).put("commitKey", commitKey).put("unknownKey", unknownKey)
            .put("producerGroup", ctx.producerGroup).put("consumerGroup", ctx.consumerGroup);
        return sent == 2 && visible && checked;
    }

    @Override
    public void shutdown() {
        clients.shutdownAll();
    }
}
