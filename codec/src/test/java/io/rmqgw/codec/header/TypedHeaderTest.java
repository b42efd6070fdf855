package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.PROPERTIES;
import static io.rmqgw.codec.header.HeaderFixtures.UNICODE;
import static io.rmqgw.codec.header.HeaderFixtures.frame;
import static io.rmqgw.codec.header.HeaderFixtures.rawFrame;
import static io.rmqgw.codec.header.HeaderFixtures.request;
import static io.rmqgw.codec.header.HeaderFixtures.response;
import static io.rmqgw.codec.header.HeaderFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.PullMessageResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2;
import org.apache.rocketmq.remoting.protocol.header.SendMessageResponseHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Typed views over headers written by rocketmq-remoting's own header classes, in both encodings. */
class TypedHeaderTest {

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void sendV2FieldsAsRocketMqWroteThem(SerializeType type) throws Exception {
        SendMessageRequestHeaderV2 expected = HeaderFixtures.sendV2("broker-a");
        RemotingCommand cmd = request(RequestCode.SEND_MESSAGE_V2, expected);
        RemotingFrame frame = frame(cmd, type);
        CommandHeader decoded = HeaderTranscoder.decodeRequest(frame);
        try {
            SendRequestHeader h = assertInstanceOf(SendRequestHeader.class, decoded);
            assertTrue(h.isV2());
            assertEquals(type, h.sourceEncoding());
            assertEquals(RequestCode.SEND_MESSAGE_V2, h.code());
            assertEquals(77, h.opaque());
            assertEquals(453, h.version());
            assertEquals(LanguageCode.JAVA, h.language());
            assertEquals(expected.getA(), h.producerGroup());
            assertEquals(expected.getB(), h.topic());
            assertEquals(expected.getC(), h.defaultTopic());
            assertEquals(4, h.defaultTopicQueueNums());
            assertEquals(3, h.queueId());
            assertEquals(0, h.sysFlag());
            assertEquals(1_714_000_000_123L, h.bornTimestamp());
            assertEquals(0, h.messageFlag());
            assertEquals(PROPERTIES, h.properties());
            assertEquals(0, h.reconsumeTimes());
            assertFalse(h.unitMode());
            assertEquals(16, h.maxReconsumeTimes());
            assertFalse(h.batch());
            assertEquals("broker-a", h.brokerName());
            assertEquals(UNICODE, h.get("x-unknown"));
            assertEquals("dGhlIHNpZ25hdHVyZQ==", h.get("Signature"));
            assertEquals(NameCheck.VALID, h.checkTopic(NameValidator.DEFAULT));
            assertEquals(NameCheck.VALID, h.checkGroup(NameValidator.DEFAULT));
            // every entry, none invented: the same map rocketmq-remoting decodes
            assertEquals(HeaderFixtures.decodeWithRocketMq(HeaderFixtures.frameBytes(cmd, type)).getExtFields(),
                new java.util.HashMap<>(h.extFields()));
        } finally {
            decoded.release();
            frame.release();
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void sendV1FieldsAndBname(SerializeType type) {
        SendMessageRequestHeader expected = HeaderFixtures.sendV1();
        RemotingFrame frame = frame(request(RequestCode.SEND_MESSAGE, expected), type);
        SendRequestHeader h = (SendRequestHeader) HeaderTranscoder.decodeRequest(frame);
        try {
            assertFalse(h.isV2());
            assertEquals("producer_group", h.producerGroup());
            assertEquals("%RETRY%consumer_group", h.topic());
            assertEquals(8, h.defaultTopicQueueNums());
            assertEquals(7, h.queueId());
            assertEquals(4, h.sysFlag());
            assertEquals(1_700_000_000_000L, h.bornTimestamp());
            assertEquals(1, h.messageFlag());
            assertEquals(2, h.reconsumeTimes());
            assertTrue(h.unitMode());
            assertEquals(16, h.maxReconsumeTimes());
            assertEquals("broker-b", h.brokerName(), "V1 carries the broker in the RPC header's bname");
            assertEquals(NameCheck.VALID, h.checkTopic(NameValidator.DEFAULT), "retry topics pass");
        } finally {
            h.release();
            frame.release();
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void pullAndLitePullFields(SerializeType type) {
        for (int code : new int[] {RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE}) {
            PullMessageRequestHeader expected = HeaderFixtures.pull();
            RemotingFrame frame = frame(request(code, expected), type);
            PullRequestHeader h = (PullRequestHeader) HeaderTranscoder.decodeRequest(frame);
            try {
                assertEquals(expected.getConsumerGroup(), h.consumerGroup());
                assertEquals("TopicTest", h.topic());
                assertEquals(2, h.queueId());
                assertEquals(123_456_789_012L, h.queueOffset());
                assertEquals(32, h.maxMsgNums());
                assertEquals(3, h.sysFlag());
                assertEquals(123_456_789_000L, h.commitOffset());
                assertEquals(15_000L, h.suspendTimeoutMillis());
                assertEquals("TagA || TagB", h.subscription());
                assertEquals(1_714_000_000_000L, h.subVersion());
                assertEquals("TAG", h.expressionType());
                assertEquals(1 << 20, h.maxMsgBytes());
                assertEquals("broker-a", h.brokerName());
                assertEquals("ns1", h.namespace());
                assertEquals("true", h.get("lo"));
                assertEquals(NameCheck.VALID, h.checkGroup(NameValidator.DEFAULT));
            } finally {
                h.release();
                frame.release();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void responseHeadersAreTypedByTheRequestCode(SerializeType type) {
        RemotingFrame send = frame(response(HeaderFixtures.sendResponse()), type);
        RemotingFrame pull = frame(response(HeaderFixtures.pullResponse()), type);
        SendResponseHeader s = (SendResponseHeader) HeaderTranscoder.decodeResponse(send, RequestCode.SEND_BATCH_MESSAGE);
        PullResponseHeader p = (PullResponseHeader) HeaderTranscoder.decodeResponse(pull, RequestCode.LITE_PULL_MESSAGE);
        try {
            assertTrue(s.isResponse());
            assertEquals("C0A8000100002A9F000000000000F3A2", s.msgId());
            assertEquals(32, s.msgIdLength());
            assertEquals('C', s.image().getByte(s.msgIdIndex()));
            assertEquals(3, s.queueId());
            assertEquals(4242L, s.queueOffset());
            assertEquals("7F0000010F7A18B4AAC27D7B3E6F0000", s.transactionId());
            assertEquals("batch-1", s.batchUniqId());
            assertNull(s.recallHandle());
            assertEquals("DefaultRegion", s.get("MSG_REGION"));

            assertEquals(0L, p.suggestWhichBrokerId());
            assertEquals(1056L, p.nextBeginOffset());
            assertEquals(0L, p.minOffset());
            assertEquals(1_000_000_000_000L, p.maxOffset());
            assertEquals(-3L, p.offsetDelta());
            assertEquals(1, p.topicSysFlag());
            assertEquals(0, p.groupSysFlag());
            assertEquals(2, p.forbiddenType());
        } finally {
            s.release();
            p.release();
            send.release();
            pull.release();
        }
    }

    @Test
    void otherCodesAreGenericAndKeepEverything() {
        assertSame(HeaderKind.GENERIC, HeaderKind.forRequest(RequestCode.HEART_BEAT));
        assertSame(HeaderKind.GENERIC, HeaderKind.forResponse(RequestCode.QUERY_CONSUMER_OFFSET));
        RemotingCommand cmd = RemotingCommand.createRequestCommand(RequestCode.QUERY_CONSUMER_OFFSET, null);
        cmd.addExtField("consumerGroup", "g");
        cmd.addExtField("topic", "t");
        cmd.addExtField("queueId", "1");
        for (SerializeType type : SerializeType.values()) {
            RemotingFrame frame = frame(cmd, type);
            CommandHeader h = HeaderTranscoder.decodeRequest(frame);
            try {
                assertInstanceOf(GenericHeader.class, h);
                assertEquals(Map.of("consumerGroup", "g", "topic", "t", "queueId", "1"), h.extFields());
                assertEquals(3, h.entryCount());
                assertEquals(HeaderCodec.decodeHeader(frame), h.toRemotingHeader(), "same as the generic codec");
            } finally {
                h.release();
                frame.release();
            }
        }
    }

    /** Entries keep the order they had on the wire, unknown and duplicate ones included. */
    @Test
    void entriesKeepWireOrderInBothEncodings() {
        String json = "{\"code\":310,\"extFields\":{\"bname\":\"broker-a\",\"zeta\":\"1\",\"b\":\"TopicTest\","
            + "\"a\":\"pg\",\"Signature\":\"sig\",\"lo\":\"true\",\"ns\":\"\",\"a\":\"pg2\"},\"flag\":0,"
            + "\"language\":\"GO\",\"opaque\":9,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}";
        List<String> keys = List.of("bname", "zeta", "b", "a", "Signature", "lo", "ns", "a");
        RemotingFrame frame = frame(rawFrame(SerializeType.JSON, utf8(json), new byte[0]));
        SendRequestHeader h = (SendRequestHeader) HeaderTranscoder.decodeRequest(frame);
        ByteBufHolder binary = new ByteBufHolder(HeaderTranscoder.transcode(HeaderFixtures.ALLOC, frame, SerializeType.ROCKETMQ));
        RemotingFrame binFrame = frame(HeaderFixtures.bytes(binary.buf));
        SendRequestHeader b = (SendRequestHeader) HeaderTranscoder.decodeRequest(binFrame);
        try {
            for (CommandHeader x : List.of(h, b)) {
                List<String> seen = new ArrayList<>();
                for (int i = 0; i < x.entryCount(); i++) {
                    seen.add(x.key(i));
                }
                assertEquals(keys, seen, x.sourceEncoding().name());
                assertEquals("pg2", ((SendRequestHeader) x).producerGroup(), "the last duplicate wins, as in a map");
                assertEquals("pg", x.value(3));
                assertEquals(LanguageCode.GO, x.language());
            }
            assertEquals("", h.get("ns"), "an empty JSON string reads as empty");
            assertNull(b.get("ns"), "a zero-length binary value reads as null, as rocketmq-remoting reads it");
            Map<String, String> ordered = new LinkedHashMap<>();
            ordered.put("bname", "broker-a");
            ordered.put("zeta", "1");
            ordered.put("b", "TopicTest");
            ordered.put("a", "pg2");
            ordered.put("Signature", "sig");
            ordered.put("lo", "true");
            ordered.put("ns", "");
            assertEquals(new ArrayList<>(ordered.entrySet()), new ArrayList<>(h.extFields().entrySet()));
        } finally {
            h.release();
            b.release();
            binFrame.release();
            binary.buf.release();
            frame.release();
        }
    }

    @Test
    void numbersThatAreNotNumbersReadAsAbsent() {
        String json = "{\"code\":11,\"extFields\":{\"queueId\":\"x1\",\"queueOffset\":\"99999999999999999999\","
            + "\"maxMsgNums\":\"-2147483648\",\"sysFlag\":\"+7\",\"commitOffset\":\"\",\"subVersion\":\"-\"},\"opaque\":1}";
        RemotingFrame frame = frame(rawFrame(SerializeType.JSON, utf8(json), new byte[0]));
        PullRequestHeader h = (PullRequestHeader) HeaderTranscoder.decodeRequest(frame);
        try {
            assertEquals(CommandHeader.ABSENT_INT, h.queueId());
            assertEquals(CommandHeader.ABSENT_LONG, h.queueOffset(), "overflow");
            assertEquals(Integer.MIN_VALUE, h.maxMsgNums());
            assertEquals(7, h.sysFlag(), "Long.parseLong accepts a plus sign");
            assertEquals(CommandHeader.ABSENT_LONG, h.commitOffset());
            assertEquals(CommandHeader.ABSENT_LONG, h.subVersion());
            assertEquals(CommandHeader.ABSENT_LONG, h.suspendTimeoutMillis(), "missing");
            assertNull(h.topic());
            assertEquals(NameCheck.EMPTY, h.checkTopic(NameValidator.DEFAULT), "a missing topic is empty");
            assertEquals(LanguageCode.JAVA, h.language(), "RemotingCommand's default when language is absent");
        } finally {
            h.release();
            frame.release();
        }
    }

    @Test
    void typedSettersRewriteEntriesInPlace() throws Exception {
        for (SerializeType type : SerializeType.values()) {
            RemotingFrame frame = frame(HeaderFixtures.sendV2Request(), type);
            SendRequestHeader h = (SendRequestHeader) HeaderTranscoder.decodeRequest(frame);
            try {
                List<String> before = keys(h);
                h.setQueueId(11).setTopic("Other").setOpaque(4000).setRemark("r");
                h.put("Signature", "new").putLong("extra", -5).remove("AccessKey");
                assertEquals(11, h.queueId());
                assertEquals("Other", h.topic());
                List<String> after = new ArrayList<>(before);
                after.remove("AccessKey");
                after.add("extra");
                assertEquals(after, keys(h), "replaced in place, removed, appended");
                for (SerializeType out : SerializeType.values()) {
                    io.netty.buffer.ByteBuf encoded = HeaderTranscoder.encodeFrame(HeaderFixtures.ALLOC, h, out, null);
                    try {
                        RemotingCommand cmd = HeaderFixtures.decodeWithRocketMq(encoded);
                        assertEquals(4000, cmd.getOpaque());
                        assertEquals("r", cmd.getRemark());
                        assertEquals("11", cmd.getExtFields().get("e"));
                        assertEquals("Other", cmd.getExtFields().get("b"));
                        assertEquals("new", cmd.getExtFields().get("Signature"));
                        assertEquals("-5", cmd.getExtFields().get("extra"));
                        assertFalse(cmd.getExtFields().containsKey("AccessKey"));
                        SendMessageRequestHeaderV2 v2 = (SendMessageRequestHeaderV2) cmd.decodeCommandCustomHeader(SendMessageRequestHeaderV2.class);
                        assertEquals(11, v2.getQueueId());
                    } finally {
                        encoded.release();
                    }
                }
            } finally {
                h.release();
                frame.release();
            }
        }
    }

    @Test
    void responseSettersForMsgIdAndOffsets() throws Exception {
        RemotingFrame frame = frame(response(HeaderFixtures.sendResponse()), SerializeType.ROCKETMQ);
        SendResponseHeader h = (SendResponseHeader) HeaderTranscoder.decodeResponse(frame, RequestCode.SEND_MESSAGE_V2);
        try {
            h.setMsgId("7F00000100002A9F000000000000F3A2").setQueueOffset(5).setQueueId(1);
            io.netty.buffer.ByteBuf out = HeaderTranscoder.encodeFrame(HeaderFixtures.ALLOC, h, SerializeType.JSON, null);
            try {
                RemotingCommand cmd = HeaderFixtures.decodeWithRocketMq(out);
                SendMessageResponseHeader r = (SendMessageResponseHeader) cmd.decodeCommandCustomHeader(SendMessageResponseHeader.class);
                assertEquals("7F00000100002A9F000000000000F3A2", r.getMsgId());
                assertEquals(5L, r.getQueueOffset());
                assertEquals(1, r.getQueueId());
            } finally {
                out.release();
            }
        } finally {
            h.release();
            frame.release();
        }
        RemotingFrame pull = frame(response(HeaderFixtures.pullResponse()), SerializeType.JSON);
        PullResponseHeader p = (PullResponseHeader) HeaderTranscoder.decodeResponse(pull, RequestCode.PULL_MESSAGE);
        try {
            p.setSuggestWhichBrokerId(1).setNextBeginOffset(Long.MAX_VALUE).setMinOffset(Long.MIN_VALUE + 1).setMaxOffset(0);
            io.netty.buffer.ByteBuf out = HeaderTranscoder.encodeFrame(HeaderFixtures.ALLOC, p, SerializeType.ROCKETMQ, null);
            try {
                RemotingCommand cmd = HeaderFixtures.decodeWithRocketMq(out);
                PullMessageResponseHeader r = (PullMessageResponseHeader) cmd.decodeCommandCustomHeader(PullMessageResponseHeader.class);
                assertEquals(1L, r.getSuggestWhichBrokerId());
                assertEquals(Long.MAX_VALUE, r.getNextBeginOffset());
                assertEquals(Long.MIN_VALUE + 1, r.getMinOffset());
                assertEquals(0L, r.getMaxOffset());
                assertEquals(-3L, r.getOffsetDelta());
            } finally {
                out.release();
            }
        } finally {
            p.release();
            pull.release();
        }
        SendRequestHeader v1 = (SendRequestHeader) HeaderTranscoder.decode(SerializeType.JSON,
            io.netty.buffer.Unpooled.wrappedBuffer(utf8("{\"code\":10,\"extFields\":{}}")), HeaderKind.SEND_V1, HeaderFixtures.ALLOC);
        try {
            assertNull(v1.brokerName());
            assertEquals(0, v1.entryCount());
            assertTrue(v1.hasExtFields());
            assertThrows(IndexOutOfBoundsException.class, () -> v1.key(0));
        } finally {
            v1.release();
        }
    }

    @Test
    void releasingTheHeaderReleasesItsHoldOnTheFrame() {
        RemotingFrame frame = frame(HeaderFixtures.sendV2Request(), SerializeType.ROCKETMQ);
        CommandHeader h = HeaderTranscoder.decodeRequest(frame);
        assertEquals(2, frame.refCnt(), "a binary header is a retained slice of the frame");
        frame.release();
        assertEquals("TopicTest", ((SendRequestHeader) h).topic(), "still readable while the header lives");
        h.retain();
        assertFalse(h.release());
        assertTrue(h.release());
        assertEquals(0, frame.refCnt());
    }

    private static List<String> keys(CommandHeader h) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < h.entryCount(); i++) {
            keys.add(h.key(i));
        }
        return keys;
    }

    /** Holds a result buffer for release in finally. */
    private record ByteBufHolder(io.netty.buffer.ByteBuf buf) {
    }
}
