package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.concat;
import static io.rmqgw.codec.frame.RemotingFixtures.frame;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static io.rmqgw.codec.frame.RemotingFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.json.JsonHeaderStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The JSON envelope read on the thread's reused parser: any field order, parser recovery, allocation. */
class JsonEnvelopeTest {

    static final int JSON = 0;
    static final byte[] NONE = new byte[0];

    static RemotingFrame parse(String header) {
        return FrameDecoder.parse(pooled(frame(JSON, utf8(header), utf8("body"))));
    }

    static void assertEnvelope(String header, int code, LanguageCode language, int version, int opaque, int flag) {
        RemotingFrame f = parse(header);
        try {
            assertEquals(code, f.code(), header);
            assertEquals(language, f.language(), header);
            assertEquals(version, f.version(), header);
            assertEquals(opaque, f.opaque(), header);
            assertEquals(flag, f.flag(), header);
            assertEquals(4, f.bodyLength(), header);
            RemotingHeader full = HeaderCodec.decodeHeader(f);
            assertEquals(code, full.code(), header);
            assertEquals(opaque, full.opaque(), header);
        } finally {
            f.release();
        }
    }

    @Test
    void fastjsonOrderAndEveryOtherOrderReadTheSame() {
        String ext = "\"extFields\":{\"a\":\"g\",\"code\":\"99\",\"version\":\"98\",\"opaque\":97}";
        String[] fields = {"\"code\":310", ext, "\"flag\":2", "\"language\":\"GO\"", "\"opaque\":-7", "\"remark\":\"r\"",
            "\"serializeTypeCurrentRPC\":\"JSON\"", "\"version\":401"};
        // fastjson's order, reversed, rotated, and with unknown fields between
        assertEnvelope("{" + String.join(",", fields) + "}", 310, LanguageCode.GO, 401, -7, 2);
        String[] reversed = fields.clone();
        java.util.Collections.reverse(java.util.Arrays.asList(reversed));
        assertEnvelope("{" + String.join(",", reversed) + "}", 310, LanguageCode.GO, 401, -7, 2);
        for (int r = 1; r < fields.length; r++) {
            String[] rotated = new String[fields.length];
            for (int i = 0; i < fields.length; i++) {
                rotated[i] = fields[(i + r) % fields.length];
            }
            assertEnvelope("{" + String.join(",", rotated) + "}", 310, LanguageCode.GO, 401, -7, 2);
        }
        assertEnvelope("{\"zz\":[{\"code\":1}],\"code\":310,\"c0de\":5,\"flag\":2,\"q\":null,\"language\":\"GO\",\"x\":{},"
            + "\"opaque\":-7,\"version\":401,\"w\":true}", 310, LanguageCode.GO, 401, -7, 2);
        // only code: the rest keeps its defaults
        assertEnvelope("{\"code\":12}", 12, LanguageCode.OTHER, 0, 0, 0);
        // a later duplicate wins, as before
        assertEnvelope("{\"code\":1,\"opaque\":1,\"code\":2,\"opaque\":3}", 2, LanguageCode.OTHER, 0, 3, 0);
        // language that is no LanguageCode, or not a string
        assertEnvelope("{\"code\":1,\"language\":\"COBOL\"}", 1, LanguageCode.OTHER, 0, 0, 0);
        assertEnvelope("{\"code\":1,\"language\":{\"a\":[\"JAVA\"]},\"opaque\":4}", 1, LanguageCode.OTHER, 0, 4, 0);
        assertEnvelope("{\"code\":1,\"language\":\"JAVA\"}", 1, LanguageCode.JAVA, 0, 0, 0);
    }

    @Test
    void whatRocketMqWritesReadsLikeRocketMqReadsIt() throws Exception {
        for (RemotingCommand cmd : new RemotingCommand[] {RemotingFixtures.pullRequest(SerializeType.JSON),
            RemotingFixtures.sendRequest(SerializeType.JSON, utf8("b"))}) {
            for (byte[] wire : new byte[][] {RemotingFixtures.encode(cmd), RemotingFixtures.fastEncode(cmd)}) {
                RemotingCommand expected = RemotingFixtures.decodeWithRocketMq(wire);
                RemotingFrame f = FrameDecoder.parse(pooled(wire));
                try {
                    assertEquals(expected.getCode(), f.code());
                    assertEquals(expected.getLanguage(), f.language());
                    assertEquals(expected.getVersion(), f.version());
                    assertEquals(expected.getOpaque(), f.opaque());
                    assertEquals(expected.getFlag(), f.flag());
                } finally {
                    f.release();
                }
            }
        }
    }

    /** After every kind of refusal the thread's parser (shared by the envelope and the header codecs) reads on. */
    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "{", "{\"code\":1", "{\"code\":1,", "[1]", "1", "{\"code\":\"1\"}", "{\"code\":1} x",
        "{\"code\":1}{}", "{\"opaque\":1}", "{\"code\":1,\"extFields\":{\"a\":}}", "{\"a\":\"\\q\"}"})
    void theParserRecoversFromEveryRefusal(String bad) {
        String good = "{\"code\":11,\"extFields\":{\"a\":\"b\"},\"flag\":0,\"language\":\"JAVA\",\"opaque\":9,\"version\":1}";
        for (int i = 0; i < 3; i++) {
            assertThrows(MalformedFrameException.class, () -> parse(bad));
            assertEnvelope(good, 11, LanguageCode.JAVA, 1, 9, 0);
            assertEnvelope(good, 11, LanguageCode.JAVA, 1, 9, 0);
        }
    }

    @Test
    void trailingWhitespaceIsConsumedAndTheParserKept() {
        JsonHeaderStream stream = JsonHeaderStream.get();
        assertEnvelope("{\"code\":1}", 1, LanguageCode.OTHER, 0, 0, 0);
        int generation = stream.generation();
        for (int i = 0; i < 50; i++) {
            assertEnvelope(" \r\n{\"code\":1,\"opaque\":" + i + "}\t \n ", 1, LanguageCode.OTHER, 0, i, 0);
        }
        assertEquals(generation, stream.generation(), "one parser for envelopes and header decodes alike");
    }

    @Test
    void headersLargerThanTheParsersBufferAreReadInChunks() {
        String big = "x".repeat(50_000);
        String header = "{\"code\":5,\"extFields\":{\"k\":\"" + big + "\"},\"opaque\":6,\"version\":" + 7 + "}" + " ".repeat(20_000);
        RemotingFrame f = parse(header);
        try {
            assertEquals(6, f.opaque());
            assertEquals(7, f.version());
            assertEquals(big, HeaderCodec.decodeHeader(f).extFields().get("k"));
        } finally {
            f.release();
        }
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> parse(header + "x"));
        assertEquals(MalformedReason.INVALID_JSON, e.reason());
        assertEnvelope("{\"code\":1}", 1, LanguageCode.OTHER, 0, 0, 0);
    }

    /**
     * Headers are UTF-8, as rocketmq-remoting reads them. A header that looks like UTF-16 is refused
     * even when it is the first one a new parser sees: jackson would otherwise detect UTF-16 and the
     * thread's parser would read the following (UTF-8) headers as UTF-16.
     */
    @Test
    void utf16HeadersAreRefusedAndDoNotPoisonTheParser() {
        byte[] utf16 = "{\"code\":1}".getBytes(StandardCharsets.UTF_16BE);
        byte[] utf16le = "{\"code\":1}".getBytes(StandardCharsets.UTF_16LE);
        for (byte[] header : new byte[][] {utf16, utf16le}) {
            // a refusal first: the next header is the first the renewed parser sees
            assertThrows(MalformedFrameException.class, () -> parse("{"));
            MalformedFrameException e = assertThrows(MalformedFrameException.class,
                () -> FrameDecoder.parse(pooled(frame(JSON, header, NONE))));
            assertEquals(MalformedReason.INVALID_JSON, e.reason());
            assertEnvelope("{\"code\":1,\"opaque\":2}", 1, LanguageCode.OTHER, 0, 2, 0);
        }
    }

    @Test
    void aByteOrderMarkIsSkippedWheneverItComes() {
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        for (int i = 0; i < 3; i++) {
            RemotingFrame f = FrameDecoder.parse(pooled(frame(JSON, concat(bom, utf8("{\"code\":3,\"opaque\":4}")), NONE)));
            try {
                assertEquals(4, f.opaque());
                assertEquals(3, HeaderCodec.decodeHeader(f).code());
            } finally {
                f.release();
            }
            if (i == 1) {
                assertThrows(MalformedFrameException.class, () -> parse("{"));
            }
        }
    }

    /** Reading a JSON frame's envelope allocates the RemotingFrame and nothing else. */
    @Test
    void parseAllocatesOnlyTheFrame() throws Exception {
        byte[] wire = RemotingFixtures.fastEncode(RemotingFixtures.sendRequest(SerializeType.JSON, new byte[64]));
        // buffers the leak detector does not wrap (its records would be counted), reused through retain()
        java.nio.ByteBuffer nio = java.nio.ByteBuffer.allocateDirect(wire.length).put(wire).flip();
        ByteBuf direct = Unpooled.wrappedBuffer(nio);
        ByteBuf heap = Unpooled.wrappedBuffer(wire);
        try {
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long id = Thread.currentThread().getId();
            for (ByteBuf source : new ByteBuf[] {direct, heap}) {
                int rounds = 20_000;
                for (int i = 0; i < rounds; i++) { // warm up
                    FrameDecoder.parse(source.retain()).release();
                }
                long before = mx.getThreadAllocatedBytes(id);
                for (int i = 0; i < rounds; i++) {
                    FrameDecoder.parse(source.retain()).release();
                }
                double perFrame = (mx.getThreadAllocatedBytes(id) - before) / (double) rounds;
                // the RemotingFrame is 48 bytes (compressed oops); the old per-frame parser took some 900
                assertTrue(perFrame <= 96, perFrame + " bytes allocated per frame from " + source.getClass().getSimpleName());
            }
        } finally {
            direct.release();
            heap.release();
        }
    }
}
