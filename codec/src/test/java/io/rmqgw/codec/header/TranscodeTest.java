package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static io.rmqgw.codec.header.HeaderFixtures.assertSameCommand;
import static io.rmqgw.codec.header.HeaderFixtures.bytes;
import static io.rmqgw.codec.header.HeaderFixtures.canonicalBinaryHeader;
import static io.rmqgw.codec.header.HeaderFixtures.decodeWithRocketMq;
import static io.rmqgw.codec.header.HeaderFixtures.frame;
import static io.rmqgw.codec.header.HeaderFixtures.frameBytes;
import static io.rmqgw.codec.header.HeaderFixtures.nonNull;
import static io.rmqgw.codec.header.HeaderFixtures.rawFrame;
import static io.rmqgw.codec.header.HeaderFixtures.rocketMqTranscode;
import static io.rmqgw.codec.header.HeaderFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Our transcoded frames against rocketmq-remoting's RemotingCommand: the binary output is byte-exact
 * with {@code decode} + {@code fastEncodeHeader} once entries are put in the same order, and both
 * outputs decode (with {@code RemotingCommand.decode}) to the command the input decodes to.
 */
class TranscodeTest {

    static List<RemotingCommand> hotCommands() {
        List<RemotingCommand> commands = new ArrayList<>();
        commands.add(HeaderFixtures.sendV2Request());
        commands.add(HeaderFixtures.request(RequestCode.SEND_BATCH_MESSAGE, HeaderFixtures.sendV2("broker-a")));
        commands.add(HeaderFixtures.request(RequestCode.SEND_MESSAGE, HeaderFixtures.sendV1()));
        commands.add(HeaderFixtures.request(RequestCode.PULL_MESSAGE, HeaderFixtures.pull()));
        commands.add(HeaderFixtures.request(RequestCode.LITE_PULL_MESSAGE, HeaderFixtures.pull()));
        commands.add(HeaderFixtures.response(HeaderFixtures.sendResponse()));
        commands.add(HeaderFixtures.response(HeaderFixtures.pullResponse()));
        RemotingCommand withRemark = HeaderFixtures.response(HeaderFixtures.pullResponse());
        withRemark.setRemark(HeaderFixtures.UNICODE);
        withRemark.setLanguage(LanguageCode.GO);
        commands.add(withRemark);
        RemotingCommand oneway = HeaderFixtures.request(RequestCode.HEART_BEAT, null);
        oneway.markOnewayRPC();
        oneway.setBody(utf8("{\"clientID\":\"x\"}"));
        commands.add(oneway);
        return commands;
    }

    @Test
    void jsonToBinaryIsByteExactWithRemotingCommand() throws Exception {
        for (RemotingCommand cmd : hotCommands()) {
            byte[] json = frameBytes(cmd, SerializeType.JSON);
            byte[] expected = rocketMqTranscode(json, SerializeType.ROCKETMQ);
            RemotingFrame frame = frame(json);
            ByteBuf out = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.ROCKETMQ);
            try {
                byte[] ours = bytes(out);
                assertEquals(expected.length, ours.length, "length for code " + cmd.getCode());
                assertArrayEquals(canonicalBinaryHeader(expected), canonicalBinaryHeader(ours), "bytes for code " + cmd.getCode());
                assertSameCommand(rocketMqDecodedAs(json, SerializeType.ROCKETMQ), decodeWithRocketMq(ours), "code " + cmd.getCode());
                assertArrayEquals(decodeWithRocketMq(json).getBody(), decodeWithRocketMq(ours).getBody(), "body kept");
            } finally {
                out.release();
                frame.release();
            }
        }
    }

    /** A small body is copied behind the new head (one buffer); a larger one is kept where it is, not copied. */
    @Test
    void smallBodiesAreCopiedLargeOnesAreNot() throws Exception {
        for (int size : new int[] {1, HeaderTranscoder.COPY_BODY_LIMIT, HeaderTranscoder.COPY_BODY_LIMIT + 1, 100 * 1024}) {
            RemotingCommand cmd = HeaderFixtures.sendV2Request();
            byte[] body = new byte[size];
            new Random(size).nextBytes(body);
            cmd.setBody(body);
            byte[] json = frameBytes(cmd, SerializeType.JSON);
            RemotingFrame frame = frame(json);
            ByteBuf out = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.ROCKETMQ);
            try {
                assertEquals(size > HeaderTranscoder.COPY_BODY_LIMIT, out instanceof io.netty.buffer.CompositeByteBuf,
                    "composite for a body of " + size);
                assertArrayEquals(body, decodeWithRocketMq(bytes(out)).getBody(), "body of " + size);
                // a body not copied is the frame's own memory: a change to the frame shows through
                frame.bodySlice().setByte(0, body[0] ^ 1);
                assertEquals(size > HeaderTranscoder.COPY_BODY_LIMIT, decodeWithRocketMq(bytes(out)).getBody()[0] != body[0],
                    "shared body for " + size);
            } finally {
                out.release();
                frame.release();
            }
        }
    }

    @Test
    void binaryToJsonDecodesToTheSameCommand() throws Exception {
        for (RemotingCommand cmd : hotCommands()) {
            byte[] binary = frameBytes(cmd, SerializeType.ROCKETMQ);
            RemotingFrame frame = frame(binary);
            ByteBuf out = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.JSON);
            try {
                byte[] ours = bytes(out);
                assertEquals(SerializeType.JSON.getCode(), ours[4]);
                RemotingCommand fromOurs = decodeWithRocketMq(ours);
                // what RemotingCommand itself makes of the binary frame when it re-encodes it as JSON
                RemotingCommand fromTheirs = decodeWithRocketMq(rocketMqTranscode(binary, SerializeType.JSON));
                assertSameCommand(fromTheirs, fromOurs, "code " + cmd.getCode());
                RemotingCommand original = decodeWithRocketMq(binary);
                assertEquals(nonNull(original.getExtFields()), fromOurs.getExtFields(), "code " + cmd.getCode());
                assertArrayEquals(original.getBody(), fromOurs.getBody());
            } finally {
                out.release();
                frame.release();
            }
        }
    }

    /** A typed decode + encode (what the gateway does) gives the same bytes as the generic transcode. */
    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void typedAndGenericPathsAgree(SerializeType target) {
        for (RemotingCommand cmd : hotCommands()) {
            for (SerializeType source : SerializeType.values()) {
                RemotingFrame frame = frame(frameBytes(cmd, source));
                CommandHeader typed = frame.isResponse()
                    ? HeaderTranscoder.decodeResponse(frame, RequestCode.PULL_MESSAGE) : HeaderTranscoder.decodeRequest(frame);
                ByteBuf viaTyped = HeaderTranscoder.encodeFrame(ALLOC, typed, target, frame.retainedBody());
                ByteBuf head = ALLOC.directBuffer(1);
                ByteBuf generic = source == target ? null : HeaderTranscoder.transcode(ALLOC, frame, target);
                try {
                    int written = HeaderTranscoder.writeFrameHead(typed, target, frame.bodyLength(), head);
                    assertEquals(written, head.readableBytes());
                    assertEquals(written - 8, typed.encodedLength(target));
                    byte[] typedBytes = bytes(viaTyped);
                    assertArrayEquals(bytes(head), java.util.Arrays.copyOf(typedBytes, written), "writeFrameHead = encodeFrame head");
                    if (generic != null) {
                        assertArrayEquals(bytes(generic), typedBytes);
                    }
                    ByteBuf headerOnly = ALLOC.heapBuffer();
                    try {
                        if (source != target) {
                            assertEquals(written - 8, HeaderTranscoder.transcodeHeader(frame, target, headerOnly));
                            assertArrayEquals(java.util.Arrays.copyOfRange(typedBytes, 8, written), bytes(headerOnly));
                        }
                    } finally {
                        headerOnly.release();
                    }
                } finally {
                    typed.release();
                    viaTyped.release();
                    head.release();
                    if (generic != null) {
                        generic.release();
                    }
                    frame.release();
                }
            }
        }
    }

    /** Found by HeaderFuzzTest: malformed UTF-8 in a binary header was copied into the JSON as it was. */
    @Test
    void malformedUtf8InABinaryHeaderBecomesWhatRocketMqReads() throws Exception {
        byte[] remark = {'r', (byte) 0xFF, (byte) 0xFE, 'k'};
        byte[] value = {(byte) 0xC0, (byte) 0x80, 'v', (byte) 0xED, (byte) 0xA0, (byte) 0x80, (byte) 0xE2, (byte) 0x9C};
        java.nio.ByteBuffer h = java.nio.ByteBuffer.allocate(21 + remark.length + 2 + 3 + 4 + value.length);
        h.putShort((short) 310).put(LanguageCode.JAVA.getCode()).putShort((short) 453).putInt(7).putInt(0);
        h.putInt(remark.length).put(remark);
        h.putInt(2 + 3 + 4 + value.length).putShort((short) 3).put(utf8("key")).putInt(value.length).put(value);
        byte[] binaryBytes = rawFrame(SerializeType.ROCKETMQ, h.array(), utf8("body"));
        RemotingFrame binaryFrame = frame(binaryBytes);
        ByteBuf json = HeaderTranscoder.transcode(ALLOC, binaryFrame, SerializeType.JSON);
        RemotingFrame jsonFrame = frame(bytes(json));
        try {
            RemotingCommand expected = decodeWithRocketMq(binaryBytes);
            assertEquals(new String(remark, java.nio.charset.StandardCharsets.UTF_8), expected.getRemark());
            RemotingCommand fromJson = decodeWithRocketMq(bytes(json));
            assertEquals(expected.getRemark(), fromJson.getRemark(), "rocketmq-remoting reads both alike");
            assertEquals(expected.getExtFields(), fromJson.getExtFields());
            CommandHeader back = HeaderTranscoder.decode(jsonFrame, HeaderKind.GENERIC);
            try {
                assertEquals(expected.getRemark(), back.remark());
                assertEquals(expected.getExtFields().get("key"), back.get("key"));
            } finally {
                back.release();
            }
        } finally {
            jsonFrame.release();
            json.release();
            binaryFrame.release();
        }
    }

    @Test
    void roundTripJsonBinaryJsonKeepsOrderAndValues() {
        String json = "{\"code\":310,\"extFields\":{\"n\":\"broker-a\",\"b\":\"TopicTest\",\"x\":\"\",\"a\":\"g\","
            + "\"i\":\"TAGS\\u0001TagA\\u0002\",\"k\\\"ey\":\"v\\\\al\\n\"},\"flag\":2,\"language\":\"RUST\",\"opaque\":-5,"
            + "\"remark\":\"\",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":32767}";
        RemotingFrame jsonFrame = frame(rawFrame(SerializeType.JSON, utf8(json), utf8("body")));
        ByteBuf binary = HeaderTranscoder.transcode(ALLOC, jsonFrame, SerializeType.ROCKETMQ);
        RemotingFrame binaryFrame = frame(bytes(binary));
        ByteBuf back = HeaderTranscoder.transcode(ALLOC, binaryFrame, SerializeType.JSON);
        try {
            String expected = "{\"code\":310,\"extFields\":{\"n\":\"broker-a\",\"b\":\"TopicTest\",\"a\":\"g\","
                + "\"i\":\"TAGS\\u0001TagA\\u0002\",\"k\\\"ey\":\"v\\\\al\\n\"},\"flag\":2,\"language\":\"RUST\",\"opaque\":-5,"
                + "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":32767}";
            byte[] b = bytes(back);
            assertEquals(expected + "body", new String(b, 8, b.length - 8, java.nio.charset.StandardCharsets.UTF_8),
                "order kept; the empty value and remark became null in binary and are omitted, as RemotingCommand omits them");
        } finally {
            back.release();
            binaryFrame.release();
            binary.release();
            jsonFrame.release();
        }
    }

    @Test
    void codesBeyondSixteenBitsStayJson() throws Exception {
        RemotingCommand pop = RemotingCommand.createRequestCommand(RequestCode.POP_MESSAGE, null);
        pop.addExtField("consumerGroup", "g");
        byte[] json = frameBytes(pop, SerializeType.JSON);
        RemotingFrame frame = frame(json);
        CommandHeader h = HeaderTranscoder.decodeRequest(frame);
        ByteBuf out = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.ROCKETMQ);
        try {
            assertFalse(h.canEncode(SerializeType.ROCKETMQ));
            assertTrue(h.canEncode(SerializeType.JSON));
            ByteBuf unused = ALLOC.heapBuffer();
            try {
                assertThrows(IllegalStateException.class, () -> h.encode(SerializeType.ROCKETMQ, unused));
                assertThrows(IllegalStateException.class, () -> HeaderTranscoder.writeFrameHead(h, SerializeType.ROCKETMQ, 0, unused));
                assertEquals(0, unused.writerIndex(), "nothing half-written");
            } finally {
                unused.release();
            }
            assertArrayEquals(json, bytes(out), "left as JSON, unchanged");
            assertEquals(RequestCode.POP_MESSAGE, decodeWithRocketMq(bytes(out)).getCode());
        } finally {
            out.release();
            h.release();
            frame.release();
        }
    }

    @Test
    void unknownLanguagesAndEmptySections() throws Exception {
        // binary: language byte 99 (no LanguageCode), empty remark, empty extFields section
        byte[] header = java.nio.ByteBuffer.allocate(21).putShort((short) 34).put((byte) 99).putShort((short) 1)
            .putInt(5).putInt(0).putInt(0).putInt(0).array();
        RemotingFrame frame = frame(rawFrame(SerializeType.ROCKETMQ, header, new byte[0]));
        CommandHeader h = HeaderTranscoder.decodeRequest(frame);
        ByteBuf json = HeaderTranscoder.encodeFrame(ALLOC, h, SerializeType.JSON, null);
        ByteBuf binary = HeaderTranscoder.encodeFrame(ALLOC, h, SerializeType.ROCKETMQ, null);
        try {
            assertNull(h.language());
            assertEquals(99, h.languageCode());
            assertNull(h.remark());
            assertNull(h.extFields());
            byte[] j = bytes(json);
            assertEquals("{\"code\":34,\"flag\":0,\"opaque\":5,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":1}",
                new String(j, 8, j.length - 8, java.nio.charset.StandardCharsets.UTF_8), "no language, remark or extFields");
            assertArrayEquals(rawFrame(SerializeType.ROCKETMQ, header, new byte[0]), bytes(binary), "the raw language byte is kept");
        } finally {
            json.release();
            binary.release();
            h.release();
            frame.release();
        }
        // JSON: an unknown language name becomes OTHER (RemotingCommand would fail to re-encode it)
        RemotingFrame named = frame(rawFrame(SerializeType.JSON, utf8("{\"code\":34,\"language\":\"COBOL\",\"extFields\":null}"), new byte[0]));
        CommandHeader n = HeaderTranscoder.decodeRequest(named);
        try {
            assertEquals(LanguageCode.OTHER, n.language());
            assertFalse(n.hasExtFields());
        } finally {
            n.release();
            named.release();
        }
    }

    /** Values that are not strings: fastjson's HashMap<String,String> view of them is what we carry. */
    @Test
    void nonStringJsonValuesMatchRemotingCommand() throws Exception {
        String json = "{\"code\":34,\"extFields\":{\"n\":42,\"neg\":-7,\"t\":true,\"f\":false,\"gone\":null,\"s\":\"x\"},\"opaque\":3}";
        byte[] frameBytes = rawFrame(SerializeType.JSON, utf8(json), new byte[0]);
        RemotingFrame frame = frame(frameBytes);
        ByteBuf binary = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.ROCKETMQ);
        try {
            Map<String, String> expected = new HashMap<>(Map.of("n", "42", "neg", "-7", "t", "true", "f", "false", "s", "x"));
            assertEquals(expected, nonNull(decodeWithRocketMq(frameBytes).getExtFields()), "fastjson's reading");
            assertEquals(expected, decodeWithRocketMq(bytes(binary)).getExtFields(), "ours, after transcoding");
            assertArrayEquals(canonicalBinaryHeader(rocketMqTranscode(frameBytes, SerializeType.ROCKETMQ)),
                canonicalBinaryHeader(bytes(binary)));
        } finally {
            binary.release();
            frame.release();
        }
    }

    /**
     * Property: random commands (random keys and values with quotes, backslashes, control characters,
     * surrogate pairs, empty strings; random remark, flag, opaque, language, version) transcoded either
     * way decode to what RemotingCommand makes of them.
     */
    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void randomCommandsTranscodeLikeRemotingCommand(SerializeType source) throws Exception {
        Random random = new Random(0x5EED + source.ordinal());
        SerializeType target = source == SerializeType.JSON ? SerializeType.ROCKETMQ : SerializeType.JSON;
        int[] codes = {RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE,
            RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE, RequestCode.HEART_BEAT, 0, 1, 25, 32767};
        String[] keys = {"a", "b", "e", "topic", "queueId", "consumerGroup", "msgId", "bname", "lo", "Signature"};
        LanguageCode[] languages = LanguageCode.values();
        for (int i = 0; i < 300; i++) {
            RemotingCommand cmd = RemotingCommand.createRequestCommand(codes[random.nextInt(codes.length)], null);
            cmd.setOpaque(random.nextInt());
            cmd.setFlag(random.nextInt(4));
            cmd.setVersion(random.nextInt(32768));
            cmd.setLanguage(languages[random.nextInt(languages.length)]);
            cmd.setRemark(random.nextInt(3) == 0 ? randomString(random) : null);
            int entries = random.nextInt(12);
            for (int e = 0; e < entries; e++) {
                // keys: non-empty (a zero-length binary key is RemotingCommand's null key, which fastjson writes
                // as "null") and without surrogate pairs (fastjson2 2.0.43 cannot read them back in field names)
                String key = random.nextBoolean() ? keys[random.nextInt(keys.length)] : "k" + randomString(random, false);
                cmd.addExtField(key, randomString(random));
            }
            byte[] input = frameBytes(cmd, source);
            RemotingFrame frame = frame(input);
            ByteBuf out = HeaderTranscoder.transcode(ALLOC, frame, target);
            try {
                byte[] ours = bytes(out);
                byte[] theirs = rocketMqTranscode(input, target);
                assertSameCommand(decodeWithRocketMq(theirs), decodeWithRocketMq(ours), "case " + i);
                if (target == SerializeType.ROCKETMQ) {
                    assertArrayEquals(canonicalBinaryHeader(theirs), canonicalBinaryHeader(ours), "case " + i);
                }
            } finally {
                out.release();
                frame.release();
            }
        }
    }

    /** Keys outside the BMP survive both ways (rocketmq-remoting's fastjson2 cannot even read them in JSON). */
    @Test
    void supplementaryCharactersInKeysAndZeroLengthKeys() throws Exception {
        String json = "{\"code\":34,\"extFields\":{\"\uD83D\uDE80\":\"rocket \uD83D\uDE80\",\"\":\"empty key\"},\"opaque\":1}";
        RemotingFrame frame = frame(rawFrame(SerializeType.JSON, utf8(json), new byte[0]));
        ByteBuf binary = HeaderTranscoder.transcode(ALLOC, frame, SerializeType.ROCKETMQ);
        RemotingFrame binaryFrame = frame(bytes(binary));
        CommandHeader h = HeaderTranscoder.decodeRequest(binaryFrame);
        ByteBuf back = HeaderTranscoder.encodeFrame(ALLOC, h, SerializeType.JSON, null);
        try {
            RemotingCommand fromBinary = decodeWithRocketMq(bytes(binary));
            assertEquals("rocket \uD83D\uDE80", fromBinary.getExtFields().get("\uD83D\uDE80"));
            assertEquals("empty key", fromBinary.getExtFields().get(null), "a zero-length key is rocketmq-remoting's null key");
            assertEquals("\uD83D\uDE80", h.key(0));
            assertNull(h.key(1));
            byte[] j = bytes(back);
            assertEquals("{\"code\":34,\"extFields\":{\"\uD83D\uDE80\":\"rocket \uD83D\uDE80\"},\"flag\":0,\"language\":\"JAVA\","
                + "\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}",
                new String(j, 8, j.length - 8, java.nio.charset.StandardCharsets.UTF_8), "the null key is not written back");
        } finally {
            back.release();
            h.release();
            binaryFrame.release();
            binary.release();
            frame.release();
        }
    }

    private static RemotingCommand rocketMqDecodedAs(byte[] frame, SerializeType type) throws Exception {
        return decodeWithRocketMq(rocketMqTranscode(frame, type));
    }

    static String randomString(Random random) {
        return randomString(random, true);
    }

    static String randomString(Random random, boolean supplementary) {
        String alphabet = "abcXYZ019_-%|\"\\/\b\f\n\r\t\u0000\u0001\u0002\u001f éß✓\u2028";
        int length = random.nextInt(5) == 0 ? 0 : random.nextInt(24);
        StringBuilder sb = new StringBuilder(length + 2);
        for (int i = 0; i < length; i++) {
            if (supplementary && random.nextInt(20) == 0) {
                sb.appendCodePoint(0x1F600 + random.nextInt(40)); // surrogate pair
            } else {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
        }
        return sb.toString();
    }
}
