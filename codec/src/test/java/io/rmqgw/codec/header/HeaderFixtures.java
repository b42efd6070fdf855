package io.rmqgw.codec.header;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.PullMessageResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2;
import org.apache.rocketmq.remoting.protocol.header.SendMessageResponseHeader;

/** Commands built with rocketmq-remoting's own header classes, their wire frames, and comparisons. */
final class HeaderFixtures {

    static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    static final String UNICODE = "héllo ✓ \uD83D\uDE80 \"quoted\" back\\slash\ttab\n\u0001\u0002/";
    static final String PROPERTIES = "UNIQ_KEY\u00017F0000010F7A18B4AAC27D7B3E6F0000\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002";

    private HeaderFixtures() {
    }

    /** A SEND_MESSAGE_V2 header as a 4.9.7 producer fills it: V1 fields, then createSendMessageRequestHeaderV2. */
    static SendMessageRequestHeaderV2 sendV2(String brokerName) {
        SendMessageRequestHeader v1 = new SendMessageRequestHeader();
        v1.setProducerGroup("please_rename_unique_group_name");
        v1.setTopic("TopicTest");
        v1.setDefaultTopic("TBW102");
        v1.setDefaultTopicQueueNums(4);
        v1.setQueueId(3);
        v1.setSysFlag(0);
        v1.setBornTimestamp(1_714_000_000_123L);
        v1.setFlag(0);
        v1.setProperties(PROPERTIES);
        v1.setReconsumeTimes(0);
        v1.setUnitMode(false);
        v1.setMaxReconsumeTimes(16);
        v1.setBatch(false);
        v1.setBrokerName(brokerName);
        return SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2(v1);
    }

    static SendMessageRequestHeaderV2 sendV2() {
        return sendV2(null);
    }

    static SendMessageRequestHeader sendV1() {
        SendMessageRequestHeader h = new SendMessageRequestHeader();
        h.setProducerGroup("producer_group");
        h.setTopic("%RETRY%consumer_group");
        h.setDefaultTopic("TBW102");
        h.setDefaultTopicQueueNums(8);
        h.setQueueId(7);
        h.setSysFlag(4);
        h.setBornTimestamp(1_700_000_000_000L);
        h.setFlag(1);
        h.setProperties(PROPERTIES);
        h.setReconsumeTimes(2);
        h.setUnitMode(true);
        h.setMaxReconsumeTimes(16);
        h.setBatch(false);
        h.setBrokerName("broker-b");
        return h;
    }

    static PullMessageRequestHeader pull() {
        PullMessageRequestHeader h = new PullMessageRequestHeader();
        h.setConsumerGroup("please_rename_unique_group_name_4");
        h.setTopic("TopicTest");
        h.setQueueId(2);
        h.setQueueOffset(123_456_789_012L);
        h.setMaxMsgNums(32);
        h.setSysFlag(3);
        h.setCommitOffset(123_456_789_000L);
        h.setSuspendTimeoutMillis(15_000L);
        h.setSubscription("TagA || TagB");
        h.setSubVersion(1_714_000_000_000L);
        h.setExpressionType("TAG");
        h.setMaxMsgBytes(1 << 20);
        h.setBrokerName("broker-a");
        h.setLo(true);
        h.setNamespace("ns1");
        return h;
    }

    static SendMessageResponseHeader sendResponse() {
        SendMessageResponseHeader h = new SendMessageResponseHeader();
        h.setMsgId("C0A8000100002A9F000000000000F3A2");
        h.setQueueId(3);
        h.setQueueOffset(4242L);
        h.setTransactionId("7F0000010F7A18B4AAC27D7B3E6F0000");
        h.setBatchUniqId("batch-1");
        return h;
    }

    static PullMessageResponseHeader pullResponse() {
        PullMessageResponseHeader h = new PullMessageResponseHeader();
        h.setSuggestWhichBrokerId(0L);
        h.setNextBeginOffset(1056L);
        h.setMinOffset(0L);
        h.setMaxOffset(1_000_000_000_000L);
        h.setOffsetDelta(-3L);
        h.setTopicSysFlag(1);
        h.setGroupSysFlag(0);
        h.setForbiddenType(2);
        return h;
    }

    /** A request as a client makes it, with unknown entries (ACL signature fields) and a remark. */
    static RemotingCommand request(int code, CommandCustomHeader header) {
        RemotingCommand cmd = RemotingCommand.createRequestCommand(code, header);
        cmd.setVersion(453);
        cmd.setOpaque(77);
        cmd.addExtField("AccessKey", "rocketmq2");
        cmd.addExtField("Signature", "dGhlIHNpZ25hdHVyZQ==");
        cmd.addExtField("x-unknown", UNICODE);
        return cmd;
    }

    static RemotingCommand response(CommandCustomHeader header) {
        RemotingCommand cmd = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
        cmd.writeCustomHeader(header);
        cmd.setOpaque(78);
        cmd.setVersion(453);
        cmd.addExtField("MSG_REGION", "DefaultRegion");
        cmd.addExtField("TRACE_ON", "true");
        return cmd;
    }

    static RemotingCommand sendV2Request() {
        return request(RequestCode.SEND_MESSAGE_V2, sendV2());
    }

    /** The whole frame as rocketmq-remoting writes it in {@code type} (JSON: encode(); binary: fastEncodeHeader). */
    static byte[] frameBytes(RemotingCommand cmd, SerializeType type) {
        cmd.setSerializeTypeCurrentRPC(type);
        ByteBuf out = Unpooled.buffer();
        cmd.fastEncodeHeader(out);
        if (cmd.getBody() != null) {
            out.writeBytes(cmd.getBody());
        }
        byte[] bytes = bytes(out);
        out.release();
        return bytes;
    }

    /** A pooled direct frame (tracked by the leak detector) parsed by our FrameDecoder. */
    static RemotingFrame frame(byte[] bytes) {
        ByteBuf b = ALLOC.directBuffer(bytes.length);
        b.writeBytes(bytes);
        return FrameDecoder.parse(b);
    }

    static RemotingFrame frame(RemotingCommand cmd, SerializeType type) {
        return frame(frameBytes(cmd, type));
    }

    /** A frame of {@code type} with {@code header} bytes and {@code body}. */
    static byte[] rawFrame(SerializeType type, byte[] header, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + body.length);
        b.putInt(4 + header.length + body.length);
        b.putInt(type.getCode() << 24 | header.length);
        b.put(header).put(body);
        return b.array();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] bytes(ByteBuf buf) {
        byte[] out = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), out);
        return out;
    }

    static RemotingCommand decodeWithRocketMq(byte[] frame) throws Exception {
        assertEquals(frame.length - 4, ByteBuffer.wrap(frame).getInt(), "length prefix");
        return RemotingCommand.decode(ByteBuffer.wrap(frame, 4, frame.length - 4));
    }

    static RemotingCommand decodeWithRocketMq(ByteBuf frame) throws Exception {
        return decodeWithRocketMq(bytes(frame));
    }

    /** What RemotingCommand itself makes of a frame re-encoded in {@code type}: decode, switch type, fastEncodeHeader. */
    static byte[] rocketMqTranscode(byte[] frame, SerializeType type) throws Exception {
        RemotingCommand cmd = decodeWithRocketMq(frame);
        return frameBytes(cmd, type);
    }

    /** Map without null values: what survives any RemotingCommand re-encoding. */
    static Map<String, String> nonNull(Map<String, String> map) {
        if (map == null) {
            return null;
        }
        Map<String, String> out = new HashMap<>();
        map.forEach((k, v) -> {
            if (k != null && v != null) {
                out.put(k, v);
            }
        });
        return out;
    }

    static void assertSameCommand(RemotingCommand expected, RemotingCommand actual, String what) {
        assertEquals(expected.getCode(), actual.getCode(), what + ": code");
        assertEquals(expected.getOpaque(), actual.getOpaque(), what + ": opaque");
        assertEquals(expected.getFlag(), actual.getFlag(), what + ": flag");
        assertEquals(expected.getVersion(), actual.getVersion(), what + ": version");
        assertEquals(expected.getLanguage(), actual.getLanguage(), what + ": language");
        assertEquals(expected.getRemark(), actual.getRemark(), what + ": remark");
        assertEquals(expected.getExtFields(), actual.getExtFields(), what + ": extFields");
        assertEquals(expected.getSerializeTypeCurrentRPC(), actual.getSerializeTypeCurrentRPC(), what + ": type");
    }

    /**
     * A binary header with its extFields entries sorted by key: two headers that differ only in
     * entry order compare equal byte for byte.
     */
    static byte[] canonicalBinaryHeader(byte[] frame) {
        ByteBuffer b = ByteBuffer.wrap(frame);
        b.position(8);
        byte[] fixed = new byte[13];
        b.get(fixed);
        int remarkLength = b.getInt();
        byte[] remark = new byte[remarkLength];
        b.get(remark);
        int extLength = b.getInt();
        int extEnd = b.position() + extLength;
        List<byte[][]> entries = new ArrayList<>();
        while (b.position() < extEnd) {
            byte[] k = new byte[b.getShort()];
            b.get(k);
            byte[] v = new byte[b.getInt()];
            b.get(v);
            entries.add(new byte[][] {k, v});
        }
        entries.sort(Comparator.comparing((byte[][] e) -> new String(e[0], StandardCharsets.UTF_8))
            .thenComparing(e -> new String(e[1], StandardCharsets.UTF_8)));
        ByteBuffer out = ByteBuffer.allocate(frame.length);
        out.put(frame, 0, 8).put(fixed).putInt(remarkLength).put(remark).putInt(extLength);
        for (byte[][] e : entries) {
            out.putShort((short) e[0].length).put(e[0]).putInt(e[1].length).put(e[1]);
        }
        out.put(frame, extEnd, frame.length - extEnd);
        return out.array();
    }
}
