package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static io.rmqgw.codec.header.HeaderFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.json.JsonToBinary;
import java.lang.management.ManagementFactory;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The single pass ({@link JsonToBinary}) against the general reader (jackson): what the single pass
 * takes it must read exactly as the general reader does; what it leaves, the general reader reads or
 * refuses as before.
 */
class SinglePassTest {

    static final String EXT = "\"extFields\":{\"a\":\"g\",\"b\":\"TopicTest\",\"x\":\"é\\u0001\",\"e\":3,\"k\":false,\"q\":null}";

    /** Headers the single pass reads. */
    @ParameterizedTest
    @ValueSource(strings = {
        "{\"code\":310," + EXT + ",\"flag\":0,\"language\":\"JAVA\",\"opaque\":7,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":401}",
        "{" + EXT + ",\"code\":310,\"language\":\"GO\",\"opaque\":7}",
        "{\"code\":310,\"language\":\"COBOL\",\"remark\":null,\"w\":\"x\",\"n\":null,\"t\":true,\"f\":-1.5e3," + EXT + "}",
        " \n{ \"language\" : \"CPP\" , \"code\" : 310 ,\n\t\"extFields\" :\n {\"b\":\"T\"} , \"flag\":2 } \n",
        "{\"code\":310,\"language\":\"JAVA\",\"extFields\":{}}",
        "{\"code\":310," + EXT + ",\"language\":\"JAVA\",\"remark\":\"r\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude80\"}",
        "{\"code\":310,\"remark\":\"\",\"language\":\"JAVA\"," + EXT + "}",
        "{\"code\":310," + EXT + ",\"opaque\":-2147483648,\"flag\":2147483647,\"version\":-0}",
        "{\"code\":310,\"language\":\"JAVA\"," + EXT + ",\"extFields\":{\"c\":\"d\",\"b\":\"again\"}}",
        "{\"code\":310,\"language\":\"JAVA\",\"extFields\":null}",
        "{\"code\":1,\"opaque\":1,\"code\":2,\"remark\":\"a\",\"remark\":null}",
        "{\"code\":310,\"extFields\":{\"lone\":\"\\ud800x\\udc00\\ud800\",\"\":\"\",\"k\\u0000\":\"raw é ✓ \uD83D\uDE80\"}}",
        "{\"code\":310,\"extFields\":{\"n\":0,\"m\":-0.0,\"o\":12345678901234567890123,\"p\":1E+2}}",
        // near misses of the whole-word names and one-byte keys: read the general way, to the same result
        "{\"codex\":1,\"code\":2,\"flags\":3,\"opaques\":4,\"remarks\":\"r\",\"versions\":5,\"languages\":\"GO\",\"extField\":6}",
        "{\"code\":310,\"serializeTypeCurrentRPC\":\"ROCKETMQ\",\"serializeTypeCurrentRPC\":\"JSONX\",\"language\":\"JAVAX\"}",
        "{\"code\":310,\"serializeTypeCurrentRPC\":\"JSON\" ,\"language\":\"JAVA\" }",
        "{\"code\":310,\"extFields\":{\"\\\":\\\"\":\"v\",\"\u007f\":\"del\",\" \":\"sp\",\"é\":\"x\",\"\\u0061\":\"esc\",\"a\":\"\"}}",
        "{\"code\":-0,\"opaque\":0,\"flag\":-2147483648,\"version\":32767}",
        // typed slots from the pass's notes: one-byte keys repeated (the last wins, also when written the
        // general way), long keys among them; integers of every length the word read takes and past it
        "{\"code\":310,\"extFields\":{\"a\":\"g\",\"bname\":\"broker-b\",\"b\":\"T1\",\"ns\":\"n1\", \"b\" : \"T2\",\"lo\":\"true\","
            + "\"a\":\"h\",\"bname\":\"broker-c\"},\"remark\":\"rr\",\"opaque\":1234567,\"flag\":12345678,\"version\":401}",
        "{\"code\":320,\"opaque\":2147483647,\"flag\":-1234567,\"version\":-32768,\"extFields\":{\"n\":\"x\",\"n\":\"y\",\"\\u006e\":\"z\"}}",
        "{\"code\":12,\"opaque\":123,\"flag\":1234,\"version\":12345 ,\"language\":\"JAVA\",\"extFields\":{\"~\":\"t\",\" \":\"s\",\"\\u0001\":\"c\"}}",
        "{\"code\":310,\"opaque\":1000000000,\"flag\":-999999999,\"extFields\":{\"d\":\"4\",\"e\":\"2\",\"g\":\"1714000000123\"}}",
    })
    void readsWhatTheGeneralReaderReads(String json) {
        assertTrue(JsonToBinary.get().transcode(Unpooled.wrappedBuffer(utf8(json)), 0, utf8(json).length), json);
        assertSameAsGeneral(json);
    }

    /** Headers left to the general reader, which reads them as before. */
    @ParameterizedTest
    @ValueSource(strings = {
        "\uFEFF{\"code\":310,\"language\":\"JAVA\"," + EXT + "}",
        "{\"code\":310,\"w\":[{\"extFields\":{\"z\":\"1\"}}]," + EXT + "}",
        "{\"code\":310,\"language\":\"JAV\\u0041\"}",
        "{\"code\":310,\"language\":null}",
        "{\"code\":310,\"remark\":12}",
        "{\"\\u0063ode\":310}",
        "{\"code\":310,\"c\\u006fde\":311}",
    })
    void leavesTheUnusualToTheGeneralReader(String json) {
        assertTrue(!JsonToBinary.get().transcode(Unpooled.wrappedBuffer(utf8(json)), 0, utf8(json).length), json);
        assertSameAsGeneral(json);
    }

    /** Malformed headers: the single pass declines, the general reader refuses them with its reason. */
    @ParameterizedTest
    @ValueSource(strings = {"{\"code\":310,\"extFields\":{\"a\":{\"b\":\"c\"}}}", "{\"code\":310,\"extFields\":{\"b\":\"T\",\"i\":[1]}}",
        "{\"code\":310,\"extFields\":{\"k\":\"v\",\"LONG_KEY\":\"v\"}}", "{\"code\":310,\"extFields\":{\"a\":\"\u0001\"}}",
        "{\"code\":310,\"extFields\":{\"a\":01}}", "{\"code\":310,\"extFields\":{\"a\":\"b\",}}", "{\"code\":310,}",
        "{\"code\":3100000000}", "{\"code\":12345678901}", "{\"code\":00}", "{\"code\":1e2}", "{\"code\":1E2}", "{\"code\":-}", "{\"code\":310,\"extFields\":{\"a\":tru}}", "{\"code\":310} x", "{\"opaque\":1}",
        "{\"code\":0123}", "{\"code\":1234567.5}", "{\"code\":1234567E1}", "{\"code\":-2147483649}", "{\"code\":2147483648}"})
    void malformedIsRefusedByTheGeneralReader(String template) {
        String json = template.replace("LONG_KEY", "y".repeat(40_000));
        assertTrue(!JsonToBinary.get().transcode(Unpooled.wrappedBuffer(utf8(json)), 0, utf8(json).length), json);
        MalformedFrameException general = assertThrows(MalformedFrameException.class,
            () -> JsonHeaderReader.read(Unpooled.wrappedBuffer(utf8(json)), HeaderKind.SEND_V2, ALLOC));
        MalformedFrameException decoded = assertThrows(MalformedFrameException.class,
            () -> HeaderTranscoder.decode(SerializeType.JSON, Unpooled.wrappedBuffer(utf8(json)), HeaderKind.SEND_V2, ALLOC));
        assertEquals(general.getMessage(), decoded.getMessage());
        HeaderReaderTest.assertValidStillDecodes();
    }

    @Test
    void invalidUtf8IsLeftToTheGeneralReader() {
        byte[][] bad = {
            {(byte) 0xC3, 0x28}, {(byte) 0xC0, (byte) 0x80}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
            {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, {(byte) 0xFF}, {(byte) 0xE2, (byte) 0x82},
        };
        for (byte[] value : bad) {
            ByteBuf json = Unpooled.buffer().writeBytes(utf8("{\"code\":1,\"extFields\":{\"k\":\"")).writeBytes(value)
                .writeBytes(utf8("\"}}"));
            assertTrue(!JsonToBinary.get().transcode(json, 0, json.readableBytes()));
        }
    }

    /** A decode right after the frame decoder's read uses its result; a later one reads the frame again. */
    @Test
    void theFrameDecodersResultIsReusedOnlyForItsFrame() {
        RemotingFrame first = HeaderFixtures.frame(HeaderFixtures.sendV2Request(), SerializeType.JSON);
        RemotingFrame second = HeaderFixtures.frame(HeaderFixtures.request(org.apache.rocketmq.remoting.protocol.RequestCode.PULL_MESSAGE, HeaderFixtures.pull()), SerializeType.JSON);
        try {
            long secondsScan = JsonToBinary.get().stamp();
            assertSame(JsonToBinary.get(), HeaderCodec.transcoded(second));
            assertEquals(secondsScan, JsonToBinary.get().stamp(), "the frame's own scan, not read again");
            JsonToBinary t = HeaderCodec.transcoded(first); // read again: the thread's result is the second frame's
            assertEquals(first.code(), t.code());
            long firstsScan = t.stamp();
            assertNotEquals(secondsScan, firstsScan);
            assertSame(t, HeaderCodec.transcoded(first));
            assertEquals(firstsScan, t.stamp(), "carried by the frame from then on");
            CommandHeader a = HeaderTranscoder.decodeRequest(second);
            CommandHeader b = HeaderTranscoder.decodeRequest(first);
            try {
                assertEquals(second.opaque(), a.opaque());
                assertEquals(first.opaque(), b.opaque());
                assertEquals("TopicTest", ((PullRequestHeader) a).topic());
            } finally {
                a.release();
                b.release();
            }
        } finally {
            first.release();
            second.release();
        }
    }

    /**
     * A typed header takes the single pass's array whole: it stays the header's while other frames are read
     * and decoded (arrays circulating between headers and the transcoder), and the frame it came from is
     * transcoded again when asked after it.
     */
    @Test
    void aTypedHeaderKeepsItsImageWhileLaterFramesAreRead() {
        java.util.List<RemotingFrame> frames = new java.util.ArrayList<>();
        java.util.List<CommandHeader> headers = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2 send = HeaderFixtures.sendV2();
                send.setB("Topic" + i);
                org.apache.rocketmq.remoting.protocol.RemotingCommand cmd =
                    HeaderFixtures.request(org.apache.rocketmq.remoting.protocol.RequestCode.SEND_MESSAGE_V2, send);
                cmd.setOpaque(100 + i);
                frames.add(HeaderFixtures.frame(cmd, SerializeType.JSON));
            }
            for (int i = 0; i < frames.size(); i++) {
                headers.add(HeaderTranscoder.decodeRequest(frames.get(i)));
                if (i % 2 == 1) { // every other one released at once: its array goes back into circulation
                    headers.set(i, null).release();
                }
            }
            for (int i = 0; i < frames.size(); i++) {
                RemotingFrame frame = frames.get(i);
                byte[] expected = HeaderFixtures.rocketMqTranscode(HeaderFixtures.bytes(frame.content()), SerializeType.ROCKETMQ);
                ByteBuf untyped = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.ROCKETMQ); // read again
                try {
                    assertArrayEquals(HeaderFixtures.canonicalBinaryHeader(expected),
                        HeaderFixtures.canonicalBinaryHeader(HeaderFixtures.bytes(untyped)));
                } finally {
                    untyped.release();
                }
                SendRequestHeader h = (SendRequestHeader) headers.get(i);
                if (h != null) {
                    assertEquals("Topic" + i, h.topic());
                    assertEquals(100 + i, h.opaque());
                    ByteBuf typed = HeaderTranscoder.encodeFrame(ALLOC, h, SerializeType.ROCKETMQ, frame.retainedBody());
                    try {
                        assertArrayEquals(HeaderFixtures.canonicalBinaryHeader(expected),
                            HeaderFixtures.canonicalBinaryHeader(HeaderFixtures.bytes(typed)));
                    } finally {
                        typed.release();
                    }
                }
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            headers.stream().filter(java.util.Objects::nonNull).forEach(CommandHeader::release);
            frames.forEach(RemotingFrame::release);
        }
    }

    /**
     * A released header is kept by its decoding thread and taken again by its next decode; released on
     * another thread it goes to the recycler instead, and decoding goes on as before.
     */
    @Test
    void releasedHeadersAreReusedOnTheirThreadAndRecycledFromOthers() throws Exception {
        RemotingFrame frame = HeaderFixtures.frame(HeaderFixtures.sendV2Request(), SerializeType.JSON);
        try {
            CommandHeader first = HeaderTranscoder.decodeRequest(frame);
            first.release();
            SendRequestHeader again = (SendRequestHeader) HeaderTranscoder.decodeRequest(frame);
            assertTrue(first == again, "the thread's spare header is taken again");
            String topic = again.topic();
            Thread other = new Thread(again::release);
            other.start();
            other.join();
            assertEquals(0, again.refCnt());
            SendRequestHeader next = (SendRequestHeader) HeaderTranscoder.decodeRequest(frame);
            try {
                assertEquals(topic, next.topic());
                assertEquals(frame.opaque(), next.opaque());
            } finally {
                next.release();
            }
        } finally {
            frame.release();
        }
    }

    /** A send frame read, its names checked and its binary head written: the frame object, nothing else. */
    @Test
    void aSendFrameToBinaryAllocatesOnlyTheFrame() {
        byte[] wire = HeaderFixtures.frameBytes(HeaderFixtures.sendV2Request(), SerializeType.JSON);
        // the leak detector (PARANOID in tests) records every buffer: off for this measurement only
        io.netty.util.ResourceLeakDetector.Level level = io.netty.util.ResourceLeakDetector.getLevel();
        io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
        ByteBuf in = ALLOC.directBuffer(wire.length).writeBytes(wire);
        ByteBuf out = ALLOC.directBuffer(1024);
        try {
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long id = Thread.currentThread().getId();
            int rounds = 20_000;
            double perFrame = 0;
            for (int round = 0; round < 2; round++) { // the first round warms up
                long before = mx.getThreadAllocatedBytes(id);
                for (int i = 0; i < rounds; i++) {
                    RemotingFrame frame = io.rmqgw.codec.frame.FrameDecoder.parse(in.retainedDuplicate());
                    SendRequestHeader h = (SendRequestHeader) HeaderTranscoder.decodeRequest(frame);
                    assertEquals(io.rmqgw.codec.name.NameCheck.VALID, h.checkTopic(io.rmqgw.codec.name.NameValidator.DEFAULT));
                    assertEquals(io.rmqgw.codec.name.NameCheck.VALID, h.checkGroup(io.rmqgw.codec.name.NameValidator.DEFAULT));
                    out.clear();
                    HeaderTranscoder.writeFrameHead(h, SerializeType.ROCKETMQ, frame.bodyLength(), out);
                    h.release();
                    frame.release();
                }
                perFrame = (mx.getThreadAllocatedBytes(id) - before) / (double) rounds;
            }
            // the RemotingFrame is 48 bytes; headers and buffers are recycled
            assertTrue(perFrame <= 64, perFrame + " bytes per frame");
        } finally {
            in.release();
            out.release();
            io.netty.util.ResourceLeakDetector.setLevel(level);
        }
    }

    static void assertSameAsGeneral(String json) {
        for (HeaderKind kind : HeaderKind.values()) {
            CommandHeader general = JsonHeaderReader.read(Unpooled.wrappedBuffer(utf8(json)), kind, ALLOC);
            CommandHeader decoded = HeaderTranscoder.decode(SerializeType.JSON, Unpooled.wrappedBuffer(utf8(json)), kind, ALLOC);
            try {
                HeaderRoundTripProperties.assertSameHeader(general, decoded);
                for (int slot = 0; slot < general.slots.length; slot++) {
                    assertEquals(general.string(slot), decoded.string(slot), kind + " slot " + slot);
                }
                assertArrayEquals(encoded(general, SerializeType.ROCKETMQ), encoded(decoded, SerializeType.ROCKETMQ), json);
                assertArrayEquals(encoded(general, SerializeType.JSON), encoded(decoded, SerializeType.JSON), json);
            } finally {
                general.release();
                decoded.release();
            }
        }
        // the frame path: envelope as the general reader's, and the frame's own transcoding
        RemotingFrame frame = HeaderFixtures.frame(HeaderFixtures.rawFrame(SerializeType.JSON, utf8(json), utf8("body")));
        try {
            CommandHeader general = JsonHeaderReader.read(Unpooled.wrappedBuffer(utf8(json)), HeaderKind.GENERIC, ALLOC);
            try {
                assertEquals(general.code(), frame.code());
                assertEquals(general.opaque(), frame.opaque());
                if (HeaderTranscoder.canTranscode(frame, SerializeType.ROCKETMQ)) {
                    ByteBuf viaFrame = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.ROCKETMQ);
                    ByteBuf head = HeaderTranscoder.encodeFrameHead(ALLOC, general, SerializeType.ROCKETMQ, 4);
                    try {
                        assertEquals(head, viaFrame.slice(0, head.readableBytes()));
                    } finally {
                        viaFrame.release();
                        head.release();
                    }
                }
            } finally {
                general.release();
            }
        } finally {
            frame.release();
        }
    }

    static byte[] encoded(CommandHeader h, SerializeType type) {
        ByteBuf out = ALLOC.heapBuffer();
        try {
            h.encode(type, out);
            return HeaderFixtures.bytes(out);
        } finally {
            out.release();
        }
    }
}
