package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.bytes;
import static io.rmqgw.codec.frame.RemotingFixtures.decodeWithRocketMq;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static io.rmqgw.codec.frame.RemotingFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class FramesTest {

    static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    static RemotingHeader header(int opaque, int flag) {
        Map<String, String> ext = new LinkedHashMap<>();
        ext.put("topic", "TopicTest");
        ext.put("queueId", "3");
        ext.put("bname", "broker-a");
        ext.put("x-unknown", RemotingFixtures.UNICODE);
        return new RemotingHeader(RequestCode.SEND_MESSAGE_V2, LanguageCode.GO, 317, opaque, flag, "remark " + RemotingFixtures.UNICODE, ext);
    }

    /** LITE_PULL_MESSAGE sent to a 4.x broker as PULL_MESSAGE: only the code changes, on a copy. */
    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void withCodeChangesTheCodeOnlyAndLeavesTheFrameAsItWas(SerializeType type) throws Exception {
        RemotingHeader header = header(4242, 0);
        header = new RemotingHeader(RequestCode.LITE_PULL_MESSAGE, header.language(), header.version(),
            header.opaque(), header.flag(), header.remark(), header.extFields());
        byte[] body = utf8("body " + RemotingFixtures.UNICODE);
        ByteBuf frame = Frames.encode(ALLOC, header, type, pooled(body));
        ByteBuf pull = null;
        try {
            pull = Frames.withCode(ALLOC, frame, RequestCode.PULL_MESSAGE);
            assertEquals(RequestCode.LITE_PULL_MESSAGE, decodeWithRocketMq(frame).getCode(), "the original unchanged");
            RemotingCommand cmd = decodeWithRocketMq(pull);
            assertEquals(type, cmd.getSerializeTypeCurrentRPC());
            assertEquals(RequestCode.PULL_MESSAGE, cmd.getCode());
            assertEquals(LanguageCode.GO, cmd.getLanguage());
            assertEquals(317, cmd.getVersion());
            assertEquals(4242, cmd.getOpaque());
            assertEquals(0, cmd.getFlag());
            assertEquals(header.remark(), cmd.getRemark());
            assertEquals(header.extFields(), cmd.getExtFields());
            assertArrayEquals(body, cmd.getBody());
            pull.release();
            pull = null;
            assertEquals(1, frame.refCnt(), "the original is still the caller's, whatever the result held of it");
        } finally {
            frame.release();
            if (pull != null) {
                pull.release();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void encodedFramesDecodeWithRocketMq(SerializeType type) throws Exception {
        RemotingHeader header = header(123456, 0);
        byte[] body = utf8("body " + RemotingFixtures.UNICODE);
        ByteBuf frame = Frames.encode(ALLOC, header, type, pooled(body));
        try {
            assertEquals(type, RemotingFixtures.serializeTypeOf(frame));
            RemotingCommand cmd = decodeWithRocketMq(frame);
            assertEquals(type, cmd.getSerializeTypeCurrentRPC());
            assertEquals(header.code(), cmd.getCode());
            assertEquals(LanguageCode.GO, cmd.getLanguage());
            assertEquals(317, cmd.getVersion());
            assertEquals(123456, cmd.getOpaque());
            assertEquals(0, cmd.getFlag());
            assertEquals(header.remark(), cmd.getRemark());
            assertEquals(header.extFields(), cmd.getExtFields());
            assertArrayEquals(body, cmd.getBody());
        } finally {
            frame.release();
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void encodedFramesDecodeWithOurDecoder(SerializeType type) {
        RemotingHeader header = header(-9, 2);
        ByteBuf frame = Frames.encode(ALLOC, header, type, pooled(new byte[] {9, 8, 7}));
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        assertTrue(channel.writeInbound(frame));
        RemotingFrame decoded = channel.readInbound();
        try {
            assertEquals(type, decoded.encoding());
            assertTrue(decoded.isOneway());
            assertFalse(decoded.isResponse());
            assertEquals(header, HeaderCodec.decodeHeader(decoded));
            assertArrayEquals(new byte[] {9, 8, 7}, bytes(decoded.bodySlice()));
        } finally {
            decoded.release();
            assertFalse(channel.finishAndReleaseAll());
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void theBodyIsNotCopied(SerializeType type) {
        ByteBuf body = pooled(new byte[1024]);
        ByteBuf frame = Frames.encode(ALLOC, header(1, 0), type, body);
        try {
            CompositeByteBuf composite = assertInstanceOf(CompositeByteBuf.class, frame);
            assertEquals(2, composite.numComponents());
            assertEquals(1, body.refCnt(), "the composite owns the one reference that was passed");
            int bodyAt = frame.readableBytes() - 1024;
            body.setByte(0, 'X');
            body.setByte(1023, 'Y');
            assertEquals('X', frame.getByte(bodyAt), "a write to the body shows through: same memory");
            assertEquals('Y', frame.getByte(frame.readableBytes() - 1));
            assertEquals(body.memoryAddress(), composite.component(1).memoryAddress());
        } finally {
            frame.release();
        }
        assertEquals(0, body.refCnt(), "releasing the frame releases the body");
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void noBodyOrAnEmptyBodyGivesAPlainBuffer(SerializeType type) throws Exception {
        ByteBuf withoutBody = Frames.encode(ALLOC, header(5, 0), type, null);
        ByteBuf empty = pooled(new byte[0]);
        ByteBuf withEmptyBody = Frames.encode(ALLOC, header(5, 0), type, empty);
        try {
            assertFalse(withoutBody instanceof CompositeByteBuf);
            assertEquals(0, empty.refCnt(), "an empty body is released, not attached");
            assertArrayEquals(bytes(withoutBody), bytes(withEmptyBody));
            assertNull(decodeWithRocketMq(withoutBody).getBody());
        } finally {
            withoutBody.release();
            withEmptyBody.release();
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void withHeaderKeepsTheBodyAndLeavesTheFrameAlone(SerializeType type) throws Exception {
        byte[] body = utf8("original body " + RemotingFixtures.UNICODE);
        byte[] wire = RemotingFixtures.fastEncode(RemotingFixtures.sendRequest(type, body));
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        channel.writeInbound(pooled(wire));
        RemotingFrame frame = channel.readInbound();
        try {
            rebuildAndCheck(frame, type, body, wire);
        } finally {
            frame.release();
            assertFalse(channel.finishAndReleaseAll());
        }
    }

    private static void rebuildAndCheck(RemotingFrame frame, SerializeType type, byte[] body, byte[] wire) throws Exception {
        RemotingHeader original = HeaderCodec.decodeHeader(frame);
        Map<String, String> ext = new LinkedHashMap<>(original.extFields());
        ext.put("bname", "gateway-broker-a");
        ext.put("added", "yes");
        SerializeType other = type == SerializeType.JSON ? SerializeType.ROCKETMQ : SerializeType.JSON;
        for (SerializeType target : new SerializeType[] {type, other}) {
            ByteBuf rebuilt = Frames.withHeader(ALLOC, frame, original.withExtFields(ext), target);
            try {
                assertEquals(2, frame.refCnt(), "the rebuilt frame holds a reference to the body");
                RemotingCommand cmd = decodeWithRocketMq(rebuilt);
                assertEquals(target, cmd.getSerializeTypeCurrentRPC());
                assertEquals(ext, cmd.getExtFields());
                assertEquals(original.opaque(), cmd.getOpaque());
                assertEquals(original.code(), cmd.getCode());
                assertArrayEquals(body, cmd.getBody());
            } finally {
                rebuilt.release();
            }
            assertEquals(1, frame.refCnt());
        }
        assertArrayEquals(wire, bytes(frame.content()), "the original frame is unchanged");
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void errorResponseAnswersInTheRequestsEncoding(SerializeType type) throws Exception {
        RemotingCommand request = RemotingFixtures.pullRequest(type);
        request.setOpaque(424242);
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        channel.writeInbound(pooled(RemotingFixtures.fastEncode(request)));
        RemotingFrame frame = channel.readInbound();
        ByteBuf response = Frames.errorResponse(ALLOC, frame, 17, "No topic route info in name server " + RemotingFixtures.UNICODE);
        try {
            assertEquals(type, RemotingFixtures.serializeTypeOf(response));
            RemotingCommand cmd = decodeWithRocketMq(response);
            assertTrue(cmd.isResponseType());
            assertFalse(cmd.isOnewayRPC());
            assertEquals(424242, cmd.getOpaque());
            assertEquals(17, cmd.getCode());
            assertEquals("No topic route info in name server " + RemotingFixtures.UNICODE, cmd.getRemark());
            assertNull(cmd.getBody());

            assertTrue(channel.writeInbound(response.retain()));
            RemotingFrame decoded = channel.readInbound();
            assertTrue(decoded.isResponse());
            assertEquals(424242, decoded.opaque());
            assertEquals(type, decoded.encoding());
            decoded.release();
        } finally {
            response.release();
            frame.release();
            assertFalse(channel.finishAndReleaseAll());
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void errorResponseByOpaqueAndEncoding(SerializeType type) throws Exception {
        ByteBuf response = Frames.errorResponse(ALLOC, -77, type, 1, "system busy");
        try {
            assertEquals(type, RemotingFixtures.serializeTypeOf(response));
            RemotingCommand cmd = decodeWithRocketMq(response);
            assertTrue(cmd.isResponseType());
            assertEquals(-77, cmd.getOpaque());
            assertEquals(1, cmd.getCode());
            assertEquals("system busy", cmd.getRemark());
        } finally {
            response.release();
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void withBodyKeepsTheHeaderBytesAndTakesTheNewBody(SerializeType type) throws Exception {
        RemotingCommand request = RemotingFixtures.sendRequest(type, utf8("the original body"));
        byte[] wire = RemotingFixtures.fastEncode(request);
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        channel.writeInbound(pooled(wire));
        RemotingFrame frame = channel.readInbound();
        byte[] newBody = utf8("a different, longer body " + RemotingFixtures.UNICODE);
        ByteBuf body = pooled(newBody);
        ByteBuf rebuilt = Frames.withBody(ALLOC, frame, body);
        try {
            byte[] headerBytes = bytes(frame.headerSlice());
            frame.release();   // the rebuilt frame holds its own reference to the header bytes
            byte[] out = bytes(rebuilt);
            assertEquals(wire.length - request.getBody().length + newBody.length, out.length);
            assertArrayEquals(headerBytes, java.util.Arrays.copyOfRange(out, 8, 8 + headerBytes.length));
            RemotingCommand cmd = decodeWithRocketMq(rebuilt);
            assertEquals(decodeWithRocketMq(wire).getExtFields(), cmd.getExtFields());
            assertEquals(request.getOpaque(), cmd.getOpaque());
            assertArrayEquals(newBody, cmd.getBody());
        } finally {
            rebuilt.release();
            assertFalse(channel.finishAndReleaseAll());
        }
        assertEquals(0, body.refCnt());
        assertEquals(0, frame.refCnt());
    }
}
