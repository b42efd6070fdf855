package io.rmqgw.gateway.vq;

import io.rmqgw.codec.frame.RemotingFrame;
import java.util.Map;
import java.util.Optional;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pushes a served group's real commits to the brokers (RocketMQ's {@code RemoteBrokerOffsetStore}): each real
 * queue's lowest unacknowledged offset as UPDATE_CONSUMER_OFFSET for the real group, the only durable state of
 * virtual queues. A push that fails is handed out again by the next {@link VirtualQueueGroup#takeCommits}.
 */
final class CommitPusher {

    private static final Logger log = LoggerFactory.getLogger(CommitPusher.class);

    private final VirtualConsumer consumer;

    CommitPusher(VirtualConsumer consumer) {
        this.consumer = consumer;
    }

    /** Every commit that moved since the last push. */
    void pushMoved() {
        for (RealCommit c : consumer.group().takeCommits()) {
            push(c);
        }
    }

    void push(RealCommit c) {
        RealBrokers brokers = consumer.brokers();
        Optional<String> master = brokers.master(c.queue().brokerName());
        if (master.isEmpty()) {
            return;
        }
        Map<String, String> ext = Map.of("consumerGroup", consumer.config().group(), "topic",
            consumer.config().topic(), "queueId", Integer.toString(c.queue().queueId()),
            "commitOffset", Long.toString(c.offset()));
        brokers.request(master.get(), RequestCode.UPDATE_CONSUMER_OFFSET, ext).addListener(f -> {
            if (f.isSuccess()) {
                ((RemotingFrame) f.getNow()).release();
            } else {
                // handed out again by the next takeCommits, a second later
                log.debug("virtual queues: commit {} not pushed: {}", c, f.cause().getMessage());
                if (!consumer.closed()) {
                    consumer.group().commitNotPushed(c);
                }
            }
        });
    }
}
