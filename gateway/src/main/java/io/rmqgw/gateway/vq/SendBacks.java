package io.rmqgw.gateway.vq;

import io.netty.channel.Channel;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CONSUMER_SEND_MSG_BACK from a served group to the brokers that store its messages: the dead letters of its
 * window (delivered {@code max-deliveries} times: to the DLQ) and the send-backs its clients ask for (a consumer
 * that answered RECONSUME_LATER), both as RocketMQ clients send them (the client side of
 * {@code SendMessageProcessor.consumerSendMsgBack}).
 */
final class SendBacks {

    private static final Logger log = LoggerFactory.getLogger(SendBacks.class);

    /** A broker's answer to a request the gateway sent on for a client: its code and remark. */
    @FunctionalInterface
    interface Answer {
        void accept(int code, String remark);
    }

    private final VirtualConsumer consumer;

    SendBacks(VirtualConsumer consumer) {
        this.consumer = consumer;
    }

    /** Sends each dead letter the window hands out; its outcome goes back to the window. */
    void sendDeadLetters() {
        VirtualQueueGroup group = consumer.group();
        for (DeadLetter d : group.takeDeadLetters()) {
            Optional<String> master = consumer.brokers().master(d.queue().brokerName());
            if (master.isEmpty()) {
                group.deadLetterFailed(d.queue(), d.queueOffset());
                continue;
            }
            Map<String, String> ext = Map.of("offset", Long.toString(d.commitLogOffset()), "group",
                consumer.config().group(), "delayLevel", "-1", "originTopic", consumer.config().topic(), "unitMode",
                "false", "maxReconsumeTimes", Integer.toString(consumer.config().maxDeliveries()));
            consumer.brokers().request(master.get(), RequestCode.CONSUMER_SEND_MSG_BACK, ext).addListener(f -> {
                boolean ok = false;
                if (f.isSuccess()) {
                    RemotingFrame answer = (RemotingFrame) f.getNow();
                    ok = answer.code() == ResponseCode.SUCCESS;
                    answer.release();
                }
                if (consumer.closed()) {
                    return;
                }
                if (ok) {
                    group.deadLettered(d.queue(), d.queueOffset());
                } else {
                    log.warn("virtual queues: dead letter {}@{} not taken by the broker; tried again", d.queue(),
                        d.queueOffset());
                    group.deadLetterFailed(d.queue(), d.queueOffset());
                }
            });
        }
    }

    /**
     * CONSUMER_SEND_MSG_BACK for a message leased to the connection (its consumer answered RECONSUME_LATER): sent
     * on to the broker that stores the message, with the client's fields, so that broker puts it in the group's
     * retry topic with the delay level asked, or in its DLQ past maxReconsumeTimes, exactly as for a client of its
     * own. The lease stays: the client drops the message once its send-back succeeded, so its next commit
     * acknowledges it; after a refusal the client sends the message to the retry topic itself, as RocketMQ clients
     * do. A message not leased to the connection (its lease already ended: it is delivered again anyway) is
     * answered SUCCESS at once; with no broker address known it is given back (delivered again at once).
     */
    void sendBack(Channel channel, Map<String, String> clientFields, Answer answer) {
        long holder = VirtualConsumer.holderOf(channel);
        long commitLogOffset;
        try {
            commitLogOffset = Long.parseLong(clientFields.getOrDefault("offset", "-1").trim());
        } catch (NumberFormatException e) {
            commitLogOffset = -1;
        }
        Delivery lease = consumer.closed() ? null : consumer.group().leaseOf(holder, commitLogOffset);
        if (lease == null) {
            answer.accept(ResponseCode.SUCCESS, null);
            return;
        }
        Optional<String> master = consumer.brokers().master(lease.realQueue().brokerName());
        if (master.isEmpty()) {
            consumer.giveBack(channel, commitLogOffset);
            answer.accept(ResponseCode.SUCCESS, null);
            return;
        }
        Map<String, String> ext = new HashMap<>(clientFields);
        ext.remove("bname"); // the virtual broker's name means nothing to the real one
        ext.put("group", consumer.config().group());
        consumer.brokers().request(master.get(), RequestCode.CONSUMER_SEND_MSG_BACK, ext).addListener(f -> {
            if (!f.isSuccess()) {
                answer.accept(ResponseCode.SYSTEM_ERROR, "send-back to broker " + lease.realQueue().brokerName()
                    + " through the gateway failed: " + f.cause().getMessage());
                return;
            }
            RemotingFrame brokerAnswer = (RemotingFrame) f.getNow();
            try {
                answer.accept(brokerAnswer.code(), HeaderCodec.decodeHeader(brokerAnswer).remark());
            } finally {
                brokerAnswer.release();
            }
        });
    }
}
