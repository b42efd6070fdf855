package io.rmqgw.gateway.fanout;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.message.BatchBody;
import io.rmqgw.codec.message.MessageProperties;
import io.rmqgw.gateway.config.FanoutConfig;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * A send to the fan-out topic, read: the send header's fields, and each message with its
 * destinations, its sharding key and its batch entry with the destination property removed
 * (everything else byte for byte), the entries back to back in one buffer the request owns.
 *
 * @param stripped the messages' batch entries without the destination property; released by the owner
 */
record FanoutMessages(SendFields send, List<Message> messages, ByteBuf stripped) {

    /** The send header fields the parts are sent with. */
    record SendFields(String producerGroup, String topic, int queueId, int sysFlag, long bornTimestamp, int flag,
                      String batchProperties, int reconsumeTimes) {
    }

    /**
     * One message: {@code destinations} in the order written (no duplicates), {@code shardingKey} or
     * null, its client {@code keys} (for remarks), and where its stripped entry sits in {@code stripped}.
     */
    record Message(int index, List<String> destinations, String shardingKey, String keys, int entryIndex,
                   int entryLength) {

        String describe() {
            return "message " + index + (keys == null ? "" : " (keys " + keys + ")");
        }
    }

    /** Properties a broker treats differently in a batch: delays are ignored there, so such messages are refused. */
    private static final List<String> DELAY_PROPERTIES =
        List.of("DELAY", "TIMER_DELIVER_MS", "TIMER_DELAY_SEC", "TIMER_DELAY_MS", "__STARTDELIVERTIME");
    /** MessageSysFlag transaction bits (prepared, commit, rollback). */
    private static final int TRANSACTION_BITS = 0x3 << 2;

    /** Distinct destination topics, in the order the messages name them. */
    Set<String> topics() {
        Set<String> topics = new LinkedHashSet<>();
        messages.forEach(m -> topics.addAll(m.destinations()));
        return topics;
    }

    /**
     * Reads {@code request} (not released here). The header is decoded by its code; a header the
     * codec cannot read throws as it would anywhere (the connection closes).
     *
     * @throws FanoutRefusal when a message cannot be fanned out (no destination, delayed, transactional,
     *                       a malformed batch body), naming the message
     */
    static FanoutMessages read(RemotingFrame request, FanoutConfig settings, ByteBufAllocator alloc) throws FanoutRefusal {
        SendFields send;
        boolean batch;
        String singleProperties;
        CommandHeader decoded = HeaderTranscoder.decodeRequest(request);
        try {
            if (!(decoded instanceof SendRequestHeader header)) {
                throw new FanoutRefusal(ResponseCode.MESSAGE_ILLEGAL, "not a send header");
            }
            batch = request.code() == RequestCode.SEND_BATCH_MESSAGE || header.batch();
            singleProperties = header.properties();
            int sysFlag = orZero(header.sysFlag());
            if ((sysFlag & TRANSACTION_BITS) != 0) {
                throw new FanoutRefusal(ResponseCode.MESSAGE_ILLEGAL,
                    "transactional messages cannot be sent to the fan-out topic " + settings.topic());
            }
            long born = header.bornTimestamp();
            send = new SendFields(header.producerGroup(), header.topic(), orZero(header.queueId()), sysFlag,
                born == CommandHeader.ABSENT_LONG ? System.currentTimeMillis() : born, orZero(header.messageFlag()),
                waitProperty(singleProperties), orZero(header.reconsumeTimes()));
        } finally {
            decoded.release();
        }
        if (!settings.topic().equals(send.topic())) {
            throw new FanoutRefusal(ResponseCode.TOPIC_NOT_EXIST, "the gateway's fan-out broker serves only topic "
                + settings.topic() + ", not " + send.topic());
        }
        ByteBuf stripped = alloc.buffer(request.bodyLength() + 64);
        try {
            List<Message> messages = batch ? readBatch(request.bodySlice(), settings, stripped)
                : List.of(readSingle(request.bodySlice(), send.flag(), singleProperties, settings, stripped));
            if (messages.isEmpty()) {
                throw new FanoutRefusal(ResponseCode.MESSAGE_ILLEGAL, "the batch holds no message");
            }
            return new FanoutMessages(send, messages, stripped);
        } catch (FanoutRefusal | RuntimeException e) {
            stripped.release();
            throw e;
        }
    }

    private static List<Message> readBatch(ByteBuf body, FanoutConfig settings, ByteBuf stripped) throws FanoutRefusal {
        List<BatchBody.Entry> entries;
        try {
            entries = BatchBody.read(body);
        } catch (IllegalArgumentException e) {
            throw new FanoutRefusal(ResponseCode.MESSAGE_ILLEGAL, "malformed batch body: " + e.getMessage());
        }
        List<Message> messages = new ArrayList<>(entries.size());
        for (BatchBody.Entry e : entries) {
            int at = stripped.writerIndex();
            Message m = message(messages.size(), body, e.propertiesIndex(), e.propertiesLength(), settings, at);
            BatchBody.writeWithout(body, e, settings.destinationProperty(), stripped);
            messages.add(withLength(m, stripped.writerIndex() - at));
        }
        return messages;
    }

    /** A single send: its properties travel in the header; the entry is built as a client builds a batch's. */
    private static Message readSingle(ByteBuf body, int flag, String properties, FanoutConfig settings, ByteBuf stripped)
        throws FanoutRefusal {
        ByteBuf props = Unpooled.wrappedBuffer((properties == null ? "" : properties).getBytes(StandardCharsets.UTF_8));
        ByteBuf kept = stripped.alloc().buffer(props.readableBytes());
        try {
            int at = stripped.writerIndex();
            Message m = message(0, props, 0, props.readableBytes(), settings, at);
            MessageProperties.writeWithout(props, 0, props.readableBytes(), settings.destinationProperty(), kept);
            BatchBody.write(flag, body, kept, stripped);
            return withLength(m, stripped.writerIndex() - at);
        } finally {
            kept.release();
        }
    }

    private static Message message(int index, ByteBuf buf, int from, int length, FanoutConfig settings, int entryIndex)
        throws FanoutRefusal {
        String keys = MessageProperties.value(buf, from, length, "KEYS");
        String where = "message " + index + (keys == null ? "" : " (keys " + keys + ")");
        for (String delay : DELAY_PROPERTIES) {
            String v = MessageProperties.value(buf, from, length, delay);
            if (v != null && !v.isEmpty() && !"0".equals(v)) {
                throw new FanoutRefusal(ResponseCode.MESSAGE_ILLEGAL, where + " is delayed (" + delay + "=" + v
                    + "): delayed messages cannot be fanned out");
            }
        }
        if ("true".equals(MessageProperties.value(buf, from, length, "TRAN_MSG"))) {
            throw new FanoutRefusal(ResponseCode.MESSAGE_ILLEGAL, where + " is transactional: transactional messages"
                + " cannot be fanned out");
        }
        String names = MessageProperties.value(buf, from, length, settings.destinationProperty());
        List<String> destinations = destinations(names);
        if (destinations.isEmpty()) {
            throw new FanoutRefusal(ResponseCode.MESSAGE_ILLEGAL, where + " names no destination: set the user property "
                + settings.destinationProperty() + " to a topic or a comma-separated list of topics");
        }
        String shardingKey = MessageProperties.value(buf, from, length, settings.shardingKeyProperty());
        return new Message(index, destinations, shardingKey == null || shardingKey.isEmpty() ? null : shardingKey,
            keys, entryIndex, 0);
    }

    private static Message withLength(Message m, int length) {
        return new Message(m.index(), m.destinations(), m.shardingKey(), m.keys(), m.entryIndex(), length);
    }

    /** {@code "A, B,A"} -> [A, B]: trimmed, empty entries skipped, each topic once. */
    static List<String> destinations(String value) {
        if (value == null) {
            return List.of();
        }
        Set<String> topics = new LinkedHashSet<>();
        for (String part : value.split(",")) {
            if (!part.isBlank()) {
                topics.add(part.trim());
            }
        }
        return List.copyOf(topics);
    }

    /** Only the WAIT property of a single send's properties, for the batch header (the rest belongs to the message). */
    /**
     * The parts' header properties: only WAIT. Each message's own properties travel in its entry; a batch header's
     * others describe the client's whole batch, which no part is: its UNIQ_KEY above all, since a 4.9.x broker
     * appends the header's properties to every message of a batch (5.x does not), so every part message would
     * take the batch's id as its own.
     */
    private static String waitProperty(String properties) {
        if (properties == null) {
            return null;
        }
        ByteBuf props = Unpooled.wrappedBuffer(properties.getBytes(StandardCharsets.UTF_8));
        String wait = MessageProperties.value(props, 0, props.readableBytes(), "WAIT");
        return wait == null ? null : "WAIT\u0001" + wait + "\u0002";
    }

    private static int orZero(int value) {
        return value == CommandHeader.ABSENT_INT ? 0 : value;
    }
}
