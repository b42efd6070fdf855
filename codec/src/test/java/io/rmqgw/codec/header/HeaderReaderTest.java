package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static io.rmqgw.codec.header.HeaderFixtures.frameBytes;
import static io.rmqgw.codec.header.HeaderFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.MalformedReason;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Malformed input, buffer kinds and the reused per-thread JSON parser. */
class HeaderReaderTest {

    static final String VALID = "{\"code\":310,\"extFields\":{\"a\":\"g\",\"b\":\"TopicTest\",\"i\":\"K\\u0001V\\u0002\","
        + "\"e\":3},\"flag\":0,\"language\":\"JAVA\",\"opaque\":7,\"remark\":null,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":401}";

    static SendRequestHeader json(String json) {
        return (SendRequestHeader) HeaderTranscoder.decode(SerializeType.JSON, Unpooled.wrappedBuffer(utf8(json)),
            HeaderKind.SEND_V2, ALLOC);
    }

    static void assertValidStillDecodes() {
        SendRequestHeader h = json(VALID);
        try {
            assertEquals("TopicTest", h.topic());
            assertEquals(3, h.queueId());
            assertEquals("K\u0001V\u0002", h.properties());
            assertEquals(7, h.opaque());
        } finally {
            h.release();
        }
    }

    /** Every proper prefix of a header is refused, and the reused parser recovers each time. */
    @Test
    void everyTruncationIsRefusedAndTheParserRecovers() {
        byte[] full = utf8(VALID);
        for (int cut = 0; cut < full.length; cut++) {
            ByteBuf in = Unpooled.wrappedBuffer(Arrays.copyOf(full, cut));
            MalformedFrameException e = assertThrows(MalformedFrameException.class,
                () -> HeaderTranscoder.decode(SerializeType.JSON, in, HeaderKind.SEND_V2, ALLOC), "cut at " + cut);
            assertEquals(MalformedReason.INVALID_JSON, e.reason(), "cut at " + cut + ": " + e.getMessage());
            assertValidStillDecodes();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {" x", "{}", " \"abc", " 1", " tru", "}", ",", "[", " {\"code\":1}"})
    void trailingContentIsRefused(String trailer) {
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> json(VALID + trailer));
        assertEquals(MalformedReason.INVALID_JSON, e.reason());
        assertValidStillDecodes();
        assertValidStillDecodes();
    }

    @Test
    void surroundingWhitespaceIsAccepted() {
        for (String json : List.of(" \n" + VALID, VALID + " \r\n\t ", "\t" + VALID + "\n")) {
            SendRequestHeader h = json(json);
            h.release();
            assertValidStillDecodes();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "[]", "1", "\"x\"", "null", "{\"code\":\"310\"}", "{\"code\":1.5}",
        "{\"code\":310,\"extFields\":[]}", "{\"code\":310,\"extFields\":{\"a\":{}}}", "{\"code\":310,\"extFields\":{\"a\":[1]}}",
        "{\"code\":310,\"remark\":{}}", "{\"code\":99999999999}", "{\"code\":310,\"extFields\":{\"a\":\"\\x\"}}",
        "{\"code\":310,", "{code:310}", "{\"code\":310}}"})
    void malformedJsonIsRefused(String json) {
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> json(json));
        assertEquals(MalformedReason.INVALID_JSON, e.reason(), e.getMessage());
        assertValidStillDecodes();
    }

    @Test
    void missingCodeIsAMissingField() {
        MalformedFrameException e = assertThrows(MalformedFrameException.class, () -> json("{\"opaque\":1,\"extFields\":{}}"));
        assertEquals(MalformedReason.MISSING_FIELD, e.reason());
        assertValidStillDecodes();
    }

    @Test
    void unknownTopLevelFieldsAreSkippedWhateverTheyHold() {
        SendRequestHeader h = json("{\"x\":{\"y\":[1,{\"z\":[]},\"}\"]},\"code\":310,\"w\":[[]],\"extFields\":{\"b\":\"T\"},"
            + "\"suspended\":false,\"n\":null}");
        try {
            assertEquals("T", h.topic());
            assertEquals(Map.of("b", "T"), h.extFields());
        } finally {
            h.release();
        }
    }

    @Test
    void tooLongKeysCannotBeCarried() {
        String key = "k".repeat(Short.MAX_VALUE + 1);
        MalformedFrameException e = assertThrows(MalformedFrameException.class,
            () -> json("{\"code\":310,\"extFields\":{\"" + key + "\":\"v\"}}"));
        assertTrue(e.getMessage().contains("cannot be carried"), e.getMessage());
        assertValidStillDecodes();
    }

    /** Headers larger than the kept scratch arrays go through one-off arrays and come out intact. */
    @Test
    void hugeHeaders() throws Exception {
        String big = "v\u0001".repeat(40_000) + "é";
        org.apache.rocketmq.remoting.protocol.RemotingCommand cmd = HeaderFixtures.sendV2Request();
        cmd.addExtField("big", big);
        for (SerializeType source : SerializeType.values()) {
            io.rmqgw.codec.frame.RemotingFrame frame = HeaderFixtures.frame(frameBytes(cmd, source));
            SerializeType target = source == SerializeType.JSON ? SerializeType.ROCKETMQ : SerializeType.JSON;
            ByteBuf out = HeaderTranscoder.transcode(ALLOC, frame, target);
            try {
                assertEquals(big, HeaderFixtures.decodeWithRocketMq(out).getExtFields().get("big"));
            } finally {
                out.release();
                frame.release();
            }
        }
        assertValidStillDecodes();
    }

    /** Heap, pooled heap, direct, composite, read-only and offset buffers all read the same. */
    @Test
    void everyKindOfInputBuffer() {
        byte[] bytes = utf8(VALID);
        List<Function<byte[], ByteBuf>> kinds = List.of(
            Unpooled::wrappedBuffer,
            b -> ALLOC.heapBuffer(b.length).writeBytes(b),
            b -> ALLOC.directBuffer(b.length).writeBytes(b),
            b -> {
                CompositeByteBuf c = ALLOC.compositeBuffer();
                c.addComponent(true, ALLOC.directBuffer().writeBytes(b, 0, 10));
                c.addComponent(true, ALLOC.heapBuffer().writeBytes(b, 10, b.length - 10));
                return c;
            },
            b -> ALLOC.directBuffer().writeBytes(b).asReadOnly(),
            b -> {
                ByteBuf padded = ALLOC.directBuffer(b.length + 20).writeZero(13).writeBytes(b).writeZero(7);
                return padded.skipBytes(13).writerIndex(13 + b.length);
            },
            b -> Unpooled.wrappedBuffer(ByteBuffer.wrap(b)));
        for (Function<byte[], ByteBuf> kind : kinds) {
            ByteBuf in = kind.apply(bytes);
            try {
                SendRequestHeader h = (SendRequestHeader) HeaderTranscoder.decode(SerializeType.JSON, in, HeaderKind.SEND_V2, ALLOC);
                try {
                    assertEquals("TopicTest", h.topic());
                    assertEquals(4, h.entryCount());
                } finally {
                    h.release();
                }
                assertEquals(bytes.length, in.readableBytes(), "input not consumed");
            } finally {
                in.release();
            }
        }
    }

    /**
     * The general reader's per-thread parser (for headers the single pass leaves to it: here a nested
     * unknown field) is reused across headers and renewed after enough input.
     */
    @Test
    void parserIsReusedAndRenewed() {
        io.rmqgw.codec.json.JsonHeaderStream reader = io.rmqgw.codec.json.JsonHeaderStream.get();
        String general = "{\"w\":[1]," + VALID.substring(1);
        json(general).release();
        int generation = reader.generation();
        for (int i = 0; i < 100; i++) {
            SendRequestHeader h = json(general);
            assertEquals("TopicTest", h.topic());
            h.release();
        }
        assertEquals(generation, reader.generation(), "one parser for many headers");
        // one header large enough to pass the renewal threshold
        String big = "{\"w\":{},\"code\":34,\"extFields\":{\"k\":\"" + "x".repeat((int) io.rmqgw.codec.json.JsonHeaderStream.RENEW_AFTER_BYTES) + "\"}}";
        CommandHeader h = HeaderTranscoder.decode(SerializeType.JSON, Unpooled.wrappedBuffer(utf8(big)), HeaderKind.GENERIC, ALLOC);
        assertEquals(io.rmqgw.codec.json.JsonHeaderStream.RENEW_AFTER_BYTES, h.get("k").length());
        h.release();
        assertEquals(generation, reader.generation());
        json(general).release();
        assertTrue(reader.generation() > generation, "renewed after " + io.rmqgw.codec.json.JsonHeaderStream.RENEW_AFTER_BYTES + " bytes");
        assertValidStillDecodes();
    }

    /**
     * The reader guesses each typed key from the order of the last header of its kind; headers whose
     * keys come in another order, with unknown keys, duplicates and nulls between, read the same.
     */
    @Test
    void keyOrderGuessesNeverChangeWhatIsRead() {
        String[][] orders = {
            {"a", "b", "c", "d", "e", "i", "n"},
            {"n", "i", "e", "d", "c", "b", "a"},
            {"b", "x-unknown", "a", "e", "zz", "i", "c", "d", "n"},
            {"a", "b", "b", "a", "c", "d", "e", "i", "n", "e"},
            {"c", "d", "a", "b", "e", "i", "n"},
        };
        for (int round = 0; round < 3; round++) {
            for (String[] order : orders) {
                StringBuilder json = new StringBuilder("{\"code\":310,\"extFields\":{");
                java.util.Map<String, String> expected = new java.util.LinkedHashMap<>();
                for (int i = 0; i < order.length; i++) {
                    String value = order[i].equals("d") ? String.valueOf(i) : order[i] + i;
                    json.append(i == 0 ? "" : ",").append('"').append(order[i]).append("\":\"").append(value).append('"');
                    if (i == 2) {
                        json.append(",\"q\":null"); // dropped
                    }
                    expected.remove(order[i]);
                    expected.put(order[i], value);
                }
                json.append("},\"opaque\":5}");
                SendRequestHeader h = json(json.toString());
                try {
                    String all = String.join(",", order);
                    assertEquals(expected.get("a"), h.producerGroup(), all);
                    assertEquals(expected.get("b"), h.topic(), all);
                    assertEquals(expected.get("i"), h.properties(), all);
                    assertEquals(expected.get("n"), h.brokerName(), all);
                    assertEquals(Integer.parseInt(expected.get("d")), h.defaultTopicQueueNums(), all);
                    assertEquals(order.length, h.entryCount(), all);
                    for (int i = 0; i < order.length; i++) {
                        assertEquals(order[i], h.key(i), all);
                    }
                    assertEquals(5, h.opaque());
                } finally {
                    h.release();
                }
            }
        }
    }

    @Test
    void threadsDoNotShareParsers() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> results = new java.util.ArrayList<>();
            for (int t = 0; t < 2; t++) {
                results.add(pool.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        assertValidStillDecodes();
                    }
                }));
            }
            for (Future<?> f : results) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void malformedBinaryHeaders() {
        byte[] good = Arrays.copyOfRange(frameBytes(HeaderFixtures.sendV2Request(), SerializeType.ROCKETMQ), 8,
            frameBytes(HeaderFixtures.sendV2Request(), SerializeType.ROCKETMQ).length);
        for (int cut = 0; cut < good.length; cut++) {
            byte[] truncated = Arrays.copyOf(good, cut);
            // a cut exactly at an entry boundary is a shorter, valid section only if the length fields agree:
            // they do not (extFields length still counts the cut part), so every cut is refused
            MalformedFrameException e = assertThrows(MalformedFrameException.class,
                () -> HeaderTranscoder.decode(SerializeType.ROCKETMQ, Unpooled.wrappedBuffer(truncated), HeaderKind.SEND_V2, ALLOC),
                "cut at " + cut);
            assertEquals(MalformedReason.TRUNCATED_BINARY_FIELD, e.reason());
        }
        byte[] negativeKey = good.clone();
        int ext = 13 + 4 + ByteBuffer.wrap(good, 13, 4).getInt() + 4;
        negativeKey[ext] = (byte) 0xFF;
        assertThrows(MalformedFrameException.class,
            () -> HeaderTranscoder.decode(SerializeType.ROCKETMQ, Unpooled.wrappedBuffer(negativeKey), HeaderKind.SEND_V2, ALLOC));
        byte[] negativeRemark = good.clone();
        negativeRemark[13] = (byte) 0x80;
        assertThrows(MalformedFrameException.class,
            () -> HeaderTranscoder.decode(SerializeType.ROCKETMQ, Unpooled.wrappedBuffer(negativeRemark), HeaderKind.SEND_V2, ALLOC));
        // bytes after the extFields section are ignored, as rocketmq-remoting ignores them
        byte[] trailing = Arrays.copyOf(good, good.length + 3);
        CommandHeader h = HeaderTranscoder.decode(SerializeType.ROCKETMQ, Unpooled.wrappedBuffer(trailing), HeaderKind.SEND_V2, ALLOC);
        try {
            assertEquals(good.length, h.binaryLength());
        } finally {
            h.release();
        }
    }
}
