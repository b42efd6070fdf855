package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.core.Exchange;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/** A bypass group's CONSUMER_SEND_MSG_BACK: on to the real broker that stores the message. */
final class BypassSendBacks {

    /** The property holding a message's client id (MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX). */
    private static final String UNIQUE_KEY = "UNIQ_KEY";

    private final Bypass bypass;

    BypassSendBacks(Bypass bypass) {
        this.bypass = bypass;
    }

    /**
     * CONSUMER_SEND_MSG_BACK of a message pulled from a virtual queue: on to the broker that stores it, which the
     * request names only by commit-log offset. With one broker behind the topic that is that broker; with several,
     * each is asked for the record at that offset (VIEW_MESSAGE_BY_ID), and the one whose record is the message (its
     * topic, and its UNIQ_KEY where it has one, the id the client sent) takes it. When none or several match, the
     * send-back is refused: the client then sends the message to the group's retry topic itself, as RocketMQ clients
     * do when a send-back fails (nothing is lost; the delay level is the client's own choice).
     */
    void sendBack(Exchange exchange, VirtualBrokerRequest r) {
        bypass.counted(r);
        String topic = r.field("originTopic");
        bypass.withRoute(exchange, r, topic, map -> {
            List<String> brokers = new ArrayList<>(map.brokerNames());
            if (brokers.size() == 1) {
                sendBackTo(exchange, r, brokers.get(0));
                return;
            }
            long offset = r.longField("offset", -1);
            List<String> storing = new ArrayList<>();
            int[] waiting = {brokers.size()};
            for (String broker : brokers) {
                Map<String, String> ext = new LinkedHashMap<>();
                ext.put("topic", topic);
                ext.put("offset", Long.toString(offset));
                bypass.relay().ask(exchange, broker, RequestCode.VIEW_MESSAGE_BY_ID, ext, answer -> {
                    try {
                        if (answer != null && answer.code() == ResponseCode.SUCCESS
                            && isTheMessage(answer.bodySlice(), topic, offset, r.field("originMsgId"))) {
                            storing.add(broker);
                        }
                    } finally {
                        if (answer != null) {
                            answer.release();
                        }
                    }
                    if (--waiting[0] == 0) {
                        if (storing.size() == 1) {
                            sendBackTo(exchange, r, storing.get(0));
                        } else {
                            r.error(exchange, RemotingSysResponseCode.SYSTEM_ERROR, "send-back through the virtual "
                                + "broker: " + storing.size() + " of topic " + topic + "'s " + brokers.size()
                                + " brokers store a message at commit-log offset " + offset + " that is this one; send "
                                + "the message to the retry topic instead");
                        }
                    }
                });
            }
        });
    }

    /** Whether {@code record} (a VIEW_MESSAGE_BY_ID answer) is the message a send-back names. */
    static boolean isTheMessage(ByteBuf record, String topic, long commitLogOffset, String originMsgId) {
        int at = record.readerIndex();
        if (StoredRecords.recordLength(record, at) <= 0 || StoredRecords.commitLogOffset(record, at) != commitLogOffset
            || !topic.equals(StoredRecords.topic(record, at))) {
            return false;
        }
        String id = StoredRecords.property(record, at, UNIQUE_KEY);
        return id == null || originMsgId == null || id.equals(originMsgId);
    }

    private void sendBackTo(Exchange exchange, VirtualBrokerRequest r, String broker) {
        bypass.relay().send(exchange, r, broker, BypassRelay.withBroker(r, broker), null,
            bypass.relay().requestTimeoutNanos(), BypassRelay.relayed(exchange, r));
    }
}
