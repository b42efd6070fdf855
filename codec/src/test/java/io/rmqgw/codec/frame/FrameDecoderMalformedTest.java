package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.concat;
import static io.rmqgw.codec.frame.RemotingFixtures.frame;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static io.rmqgw.codec.frame.RemotingFixtures.readAll;
import static io.rmqgw.codec.frame.RemotingFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FrameDecoderMalformedTest {

    static final int JSON = 0;
    static final int ROCKETMQ = 1;
    static final byte[] NONE = new byte[0];

    static Stream<Arguments> malformedStreams() {
        List<Arguments> cases = new ArrayList<>();
        // garbage that is not a remoting stream at all
        add(cases, "HTTP request", MalformedReason.NOT_REMOTING, utf8("GET / HTTP/1.1\r\nHost: broker\r\n\r\n"));
        add(cases, "TLS client hello", MalformedReason.NOT_REMOTING,
            new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xFC, 0x03, 0x03});
        add(cases, "all ones", MalformedReason.BAD_LENGTH, new byte[] {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1});
        add(cases, "small garbage length, garbage type", MalformedReason.UNKNOWN_SERIALIZE_TYPE,
            new byte[] {0, 0, 0, 8, 0x7F, 0, 0, 0, 0x12, 0x34, 0x56, 0x78});

        // lengths
        add(cases, "negative length", MalformedReason.BAD_LENGTH, new byte[] {(byte) 0x80, 0, 0, 0, 0, 0, 0, 0});
        add(cases, "length -1", MalformedReason.BAD_LENGTH, new byte[] {-1, -1, -1, -1});
        add(cases, "length 0", MalformedReason.BAD_LENGTH, new byte[] {0, 0, 0, 0});
        add(cases, "length 3", MalformedReason.BAD_LENGTH, new byte[] {0, 0, 0, 3, 1, 2, 3});
        add(cases, "over 16 MiB, refused before it arrives", MalformedReason.FRAME_TOO_LONG,
            ByteBuffer.allocate(8).putInt(FrameDecoder.DEFAULT_MAX_FRAME_LENGTH - 3).putInt(0).array());
        add(cases, "Integer.MAX_VALUE", MalformedReason.FRAME_TOO_LONG,
            ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE).array());

        // header length and type
        add(cases, "header length past the frame", MalformedReason.HEADER_PAST_FRAME,
            ByteBuffer.allocate(12).putInt(8).putInt(5).putInt(0).array());
        add(cases, "header length 0xFFFFFF", MalformedReason.HEADER_PAST_FRAME,
            ByteBuffer.allocate(12).putInt(8).putInt(ROCKETMQ << 24 | 0xFFFFFF).putInt(0).array());
        add(cases, "serialize type 2", MalformedReason.UNKNOWN_SERIALIZE_TYPE, frame(2, utf8("{\"code\":10}"), NONE));
        add(cases, "serialize type 0xFF", MalformedReason.UNKNOWN_SERIALIZE_TYPE, frame(0xFF, binary(10, 0, null, null), NONE));

        // JSON headers
        add(cases, "empty JSON header", MalformedReason.INVALID_JSON, frame(JSON, NONE, utf8("body")));
        add(cases, "truncated JSON", MalformedReason.INVALID_JSON, frame(JSON, utf8("{\"code\":10,\"opaque\""), NONE));
        add(cases, "JSON array", MalformedReason.INVALID_JSON, frame(JSON, utf8("[10]"), NONE));
        add(cases, "JSON string", MalformedReason.INVALID_JSON, frame(JSON, utf8("\"code\""), NONE));
        add(cases, "code is a string", MalformedReason.INVALID_JSON, frame(JSON, utf8("{\"code\":\"10\"}"), NONE));
        add(cases, "code overflows int", MalformedReason.INVALID_JSON, frame(JSON, utf8("{\"code\":99999999999}"), NONE));
        add(cases, "opaque is a float", MalformedReason.INVALID_JSON, frame(JSON, utf8("{\"code\":10,\"opaque\":1.5}"), NONE));
        add(cases, "trailing content", MalformedReason.INVALID_JSON, frame(JSON, utf8("{\"code\":10}{\"code\":11}"), NONE));
        add(cases, "invalid UTF-8", MalformedReason.INVALID_JSON,
            frame(JSON, new byte[] {'{', '"', (byte) 0xC3, (byte) 0x28, '"', ':', '1', '}'}, NONE));
        add(cases, "binary header sent as JSON", MalformedReason.INVALID_JSON, frame(JSON, binary(10, 1, "r", null), NONE));
        add(cases, "JSON without code", MalformedReason.MISSING_FIELD,
            frame(JSON, utf8("{\"flag\":0,\"language\":\"JAVA\",\"opaque\":7,\"version\":401}"), NONE));
        add(cases, "empty JSON object", MalformedReason.MISSING_FIELD, frame(JSON, utf8("{}"), NONE));
        add(cases, "code only inside extFields", MalformedReason.MISSING_FIELD,
            frame(JSON, utf8("{\"extFields\":{\"code\":\"10\"},\"opaque\":1}"), NONE));

        // ROCKETMQ binary headers
        add(cases, "binary header shorter than its fixed fields", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, java.util.Arrays.copyOf(binary(10, 1, null, null), 20), NONE));
        add(cases, "empty binary header", MalformedReason.TRUNCATED_BINARY_FIELD, frame(ROCKETMQ, NONE, utf8("body")));
        add(cases, "remark length past the header", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withInt(binary(10, 1, "remark", null), 13, 7), NONE));
        add(cases, "remark length leaving no room for the extFields length", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withInt(binary(10, 1, "remark", null), 13, 8), NONE));
        add(cases, "negative remark length", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withInt(binary(10, 1, "remark", null), 13, -1), NONE));
        add(cases, "extFields length past the header", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withInt(binary(10, 1, null, new String[] {"k", "v"}), 17, 12), NONE));
        add(cases, "negative extFields length", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withInt(binary(10, 1, null, new String[] {"k", "v"}), 17, -8), NONE));
        add(cases, "entry key length past extFields", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withShort(binary(10, 1, null, new String[] {"key", "value"}), 21, 20), NONE));
        add(cases, "negative entry key length", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withShort(binary(10, 1, null, new String[] {"key", "value"}), 21, -1), NONE));
        add(cases, "entry value length past extFields", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withInt(binary(10, 1, null, new String[] {"key", "value"}), 26, 6), NONE));
        add(cases, "negative entry value length", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, withInt(binary(10, 1, null, new String[] {"key", "value"}), 26, -2), NONE));
        byte[] oneStrayByte = binary(10, 1, null, new String[] {"k", "v"});
        oneStrayByte = withInt(concat(oneStrayByte, new byte[] {0}), 17, 10);
        add(cases, "a single byte where an entry should start", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, oneStrayByte, NONE));
        // an entry that would read into the body
        byte[] intoBody = withInt(binary(10, 1, null, new String[] {"key", "value"}), 26, 9);
        add(cases, "entry value length reaching into the body", MalformedReason.TRUNCATED_BINARY_FIELD,
            frame(ROCKETMQ, intoBody, utf8("body")));
        return cases.stream();
    }

    private static void add(List<Arguments> cases, String name, MalformedReason reason, byte[] bytes) {
        cases.add(Arguments.of(name, reason, bytes));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("malformedStreams")
    void refusesWithTheReasonAndLeaksNothing(String name, MalformedReason reason, byte[] bytes) {
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        ByteBuf in = pooled(bytes);
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> channel.writeInbound(in));
        assertEquals(reason, e.reason(), e.getMessage());
        assertTrue(e.getMessage().startsWith(reason.label() + ": "), e.getMessage());
        assertTrue(readAll(channel).isEmpty(), "no frame comes out of a malformed one");
        assertFalse(channel.finishAndReleaseAll());
        assertEquals(0, in.refCnt());
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("malformedStreams")
    void refusesByteByByteToo(String name, MalformedReason reason, byte[] bytes) {
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        List<ByteBuf> written = new ArrayList<>();
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> {
            for (byte b : bytes) {
                ByteBuf one = pooled(new byte[] {b});
                written.add(one);
                channel.writeInbound(one);
            }
        });
        assertEquals(reason, e.reason(), e.getMessage());
        assertFalse(channel.finishAndReleaseAll());
        written.forEach(b -> assertEquals(0, b.refCnt()));
    }

    @Test
    void framesBeforeAMalformedOneStillComeOut() throws Exception {
        byte[] good = RemotingFixtures.fastEncode(RemotingFixtures.pullRequest(SerializeType.ROCKETMQ));
        byte[] bad = frame(ROCKETMQ, withInt(binary(10, 1, "remark", null), 13, 100), NONE);
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        ByteBuf in = pooled(concat(good, bad, good));
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> channel.writeInbound(in));
        assertEquals(MalformedReason.TRUNCATED_BINARY_FIELD, e.reason());
        List<RemotingFrame> frames = readAll(channel);
        assertEquals(1, frames.size());
        assertEquals(RemotingFixtures.decodeWithRocketMq(good).getOpaque(), frames.get(0).opaque());
        frames.forEach(RemotingFrame::release);
        channel.finishAndReleaseAll();
        assertEquals(0, in.refCnt());
    }

    @Test
    void everythingAfterAMalformedFrameIsDiscarded() throws Exception {
        byte[] good = RemotingFixtures.fastEncode(RemotingFixtures.pullRequest(SerializeType.JSON));
        // a negative length: read on from the next bytes, the good frame would come out
        byte[] bad = {-1, -1, -1, -1};
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        ByteBuf first = pooled(concat(bad, good));
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> channel.writeInbound(first));
        assertEquals(MalformedReason.BAD_LENGTH, e.reason());
        ByteBuf later = pooled(good);
        assertFalse(channel.writeInbound(later), "no frame after the stream went bad");
        assertTrue(readAll(channel).isEmpty());
        assertFalse(channel.finishAndReleaseAll(), "nothing is decoded when the channel closes either");
        assertEquals(0, first.refCnt());
        assertEquals(0, later.refCnt());
    }

    @Test
    void maxFrameLengthCountsTheWholeFrame() {
        byte[] header = utf8("{\"code\":10}");
        int fits = 64 - 8 - header.length;
        EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder(64));
        assertTrue(channel.writeInbound(pooled(frame(JSON, header, new byte[fits]))));
        RemotingFrame frame = channel.readInbound();
        assertEquals(64, frame.content().readableBytes());
        frame.release();
        MalformedFrameException e = assertThrows(MalformedFrameException.class,
            () -> channel.writeInbound(pooled(frame(JSON, header, new byte[fits + 1]))));
        assertEquals(MalformedReason.FRAME_TOO_LONG, e.reason());
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void otherProtocolsAreNamedInTheReason() {
        EmbeddedChannel http = new EmbeddedChannel(new FrameDecoder(64));
        MalformedFrameException e = assertThrows(MalformedFrameException.class,
            () -> http.writeInbound(pooled(utf8("POST /reload HTTP/1.1\r\nHost: gw\r\n\r\n"))));
        assertEquals(MalformedReason.NOT_REMOTING, e.reason());
        assertTrue(e.getMessage().contains("an HTTP request (\"POST /reload HTTP/1.1\")"), e.getMessage());
        assertFalse(http.finishAndReleaseAll());

        EmbeddedChannel tls = new EmbeddedChannel(new FrameDecoder(64));
        e = assertThrows(MalformedFrameException.class,
            () -> tls.writeInbound(pooled(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01})));
        assertTrue(e.getMessage().contains("TLS handshake"), e.getMessage());
        assertFalse(tls.finishAndReleaseAll());
    }

    @Test
    void headerDecodingRefusesWhatTheEnvelopeSkipped() {
        // the envelope only reads what routing needs; decodeHeader reads remark and extFields too
        String[] headers = {
            "{\"code\":10,\"extFields\":[\"a\"]}",
            "{\"code\":10,\"extFields\":{\"a\":{\"b\":\"c\"}}}",
            "{\"code\":10,\"extFields\":\"a=b\"}",
            "{\"code\":10,\"remark\":{\"a\":\"b\"},\"opaque\":3}",
            "{\"code\":10,\"remark\":[1,2]}",
        };
        for (String json : headers) {
            EmbeddedChannel channel = RemotingFixtures.decoderChannel();
            channel.writeInbound(pooled(frame(JSON, utf8(json), NONE)));
            RemotingFrame frame = channel.readInbound();
            try {
                assertEquals(10, frame.code(), json);
                MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> HeaderCodec.decodeHeader(frame), json);
                assertEquals(MalformedReason.INVALID_JSON, e.reason(), json);
            } finally {
                frame.release();
                channel.finishAndReleaseAll();
            }
        }
    }

    @Test
    void randomGarbageNeverEscapesAsAnotherException() {
        Random random = new Random(1234);
        for (int i = 0; i < 3_000; i++) {
            byte[] bytes = new byte[1 + random.nextInt(300)];
            random.nextBytes(bytes);
            if (random.nextBoolean() && bytes.length >= 8) {
                // plausible envelope, garbage header
                ByteBuffer.wrap(bytes).putInt(0, bytes.length - 4).putInt(4,
                    random.nextInt(2) << 24 | random.nextInt(bytes.length - 7));
            }
            EmbeddedChannel channel = RemotingFixtures.decoderChannel();
            ByteBuf in = pooled(bytes);
            try {
                channel.writeInbound(in);
                for (RemotingFrame frame : readAll(channel)) {
                    try {
                        HeaderCodec.decodeHeader(frame);
                    } catch (MalformedFrameException expected) {
                        // fine: refused with a reason
                    } finally {
                        frame.release();
                    }
                }
            } catch (MalformedFrameException expected) {
                // fine: refused with a reason
            } finally {
                readAll(channel).forEach(RemotingFrame::release);
                channel.finishAndReleaseAll();
            }
            assertEquals(0, in.refCnt());
        }
    }

    /** A ROCKETMQ header: code, language JAVA, version 1, opaque, flag 0, remark, extFields pairs. */
    static byte[] binary(int code, int opaque, String remark, String[] ext) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer fixed = ByteBuffer.allocate(13).putShort((short) code).put((byte) 0).putShort((short) 1)
            .putInt(opaque).putInt(0);
        out.writeBytes(fixed.array());
        byte[] r = remark == null ? NONE : utf8(remark);
        out.writeBytes(ByteBuffer.allocate(4).putInt(r.length).array());
        out.writeBytes(r);
        ByteArrayOutputStream map = new ByteArrayOutputStream();
        if (ext != null) {
            for (int i = 0; i < ext.length; i += 2) {
                byte[] k = utf8(ext[i]);
                byte[] v = utf8(ext[i + 1]);
                map.writeBytes(ByteBuffer.allocate(2).putShort((short) k.length).array());
                map.writeBytes(k);
                map.writeBytes(ByteBuffer.allocate(4).putInt(v.length).array());
                map.writeBytes(v);
            }
        }
        out.writeBytes(ByteBuffer.allocate(4).putInt(map.size()).array());
        out.writeBytes(map.toByteArray());
        return out.toByteArray();
    }

    static byte[] withInt(byte[] bytes, int at, int value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).putInt(at, value);
        return copy;
    }

    static byte[] withShort(byte[] bytes, int at, int value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).putShort(at, (short) value);
        return copy;
    }
}
