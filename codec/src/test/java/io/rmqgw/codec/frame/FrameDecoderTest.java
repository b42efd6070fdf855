package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.bytes;
import static io.rmqgw.codec.frame.RemotingFixtures.concat;
import static io.rmqgw.codec.frame.RemotingFixtures.decodeWithRocketMq;
import static io.rmqgw.codec.frame.RemotingFixtures.decoderChannel;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static io.rmqgw.codec.frame.RemotingFixtures.readAll;
import static io.rmqgw.codec.frame.RemotingFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.PullMessageResponseHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class FrameDecoderTest {

    /** Commands rocketmq-remoting makes, each with both serializations and both of its encoders. */
    static Stream<Arguments> rocketMqFrames() {
        List<Arguments> cases = new ArrayList<>();
        for (SerializeType type : SerializeType.values()) {
            List<Function<SerializeType, RemotingCommand>> commands = List.of(
                RemotingFixtures::pullRequest,
                t -> RemotingFixtures.sendRequest(t, utf8("message body " + RemotingFixtures.UNICODE)),
                t -> {
                    RemotingCommand oneway = RemotingFixtures.sendRequest(t, new byte[] {1, 2, 3});
                    oneway.markOnewayRPC();
                    return oneway;
                },
                t -> {
                    PullMessageResponseHeader h = new PullMessageResponseHeader();
                    h.setSuggestWhichBrokerId(0L);
                    h.setNextBeginOffset(1056L);
                    h.setMinOffset(0L);
                    h.setMaxOffset(2048L);
                    RemotingCommand r = RemotingCommand.createResponseCommandWithHeader(ResponseCode.SUCCESS, h);
                    r.setOpaque(77);
                    r.setSerializeTypeCurrentRPC(t);
                    r.setBody(new byte[200]);
                    return r;
                },
                t -> {
                    RemotingCommand r = RemotingCommand.createResponseCommand(ResponseCode.SYSTEM_ERROR, "no remark map " + RemotingFixtures.UNICODE);
                    r.setOpaque(-5);
                    r.setLanguage(LanguageCode.GO);
                    r.setSerializeTypeCurrentRPC(t);
                    return r;
                });
            for (int i = 0; i < commands.size(); i++) {
                Function<SerializeType, RemotingCommand> command = commands.get(i);
                cases.add(Arguments.of(type, "encode#" + i, RemotingFixtures.encode(command.apply(type))));
                cases.add(Arguments.of(type, "fastEncodeHeader#" + i, RemotingFixtures.fastEncode(command.apply(type))));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("rocketMqFrames")
    void decodesWhatRocketMqWrites(SerializeType type, String how, byte[] wire) throws Exception {
        RemotingCommand expected = decodeWithRocketMq(wire);
        EmbeddedChannel channel = decoderChannel();
        ByteBuf in = pooled(wire);
        assertTrue(channel.writeInbound(in));
        RemotingFrame frame = channel.readInbound();
        try {
            assertNull(channel.readInbound());
            assertEquals(type, frame.encoding());
            assertEquals(expected.getCode(), frame.code());
            assertEquals(expected.getLanguage(), frame.language());
            assertEquals(expected.getVersion(), frame.version());
            assertEquals(expected.getOpaque(), frame.opaque());
            assertEquals(expected.getFlag(), frame.flag());
            assertEquals(expected.isResponseType(), frame.isResponse());
            assertEquals(expected.isOnewayRPC(), frame.isOneway());
            assertEquals((wire[5] & 0xFF) << 16 | (wire[6] & 0xFF) << 8 | (wire[7] & 0xFF), frame.headerLength());
            assertArrayEquals(wire, bytes(frame.content()), "forwarded byte for byte");
            byte[] body = expected.getBody() == null ? new byte[0] : expected.getBody();
            assertEquals(body.length, frame.bodyLength());
            assertArrayEquals(body, bytes(frame.bodySlice()));

            RemotingHeader header = HeaderCodec.decodeHeader(frame);
            assertEquals(expected.getCode(), header.code());
            assertEquals(expected.getLanguage(), header.language());
            assertEquals(expected.getVersion(), header.version());
            assertEquals(expected.getOpaque(), header.opaque());
            assertEquals(expected.getFlag(), header.flag());
            assertEquals(expected.getRemark(), header.remark());
            assertEquals(expected.getExtFields(), header.extFields());
        } finally {
            frame.release();
            assertFalse(channel.finishAndReleaseAll());
        }
        assertEquals(0, in.refCnt());
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void keepsUnknownExtFieldsAndTheRemark(SerializeType type) throws Exception {
        RemotingCommand cmd = RemotingFixtures.pullRequest(type);
        cmd.addExtField("zz-client-extension", "{\"nested\":\"json-ish\"}");
        cmd.addExtField("k\u00e9y", "\u4e2d\u6587");
        byte[] wire = RemotingFixtures.fastEncode(cmd);
        EmbeddedChannel channel = decoderChannel();
        channel.writeInbound(pooled(wire));
        RemotingFrame frame = channel.readInbound();
        try {
            RemotingHeader header = HeaderCodec.decodeHeader(frame);
            assertEquals(RemotingFixtures.UNICODE, header.remark());
            assertEquals("value " + RemotingFixtures.UNICODE, header.extFields().get("x-unknown-extension"));
            assertEquals("{\"nested\":\"json-ish\"}", header.extFields().get("zz-client-extension"));
            assertEquals("\u4e2d\u6587", header.extFields().get("k\u00e9y"));
            assertEquals("broker-a", header.extFields().get("bname"));
            assertEquals("TopicTest", header.extFields().get("topic"));
            assertEquals("1024", header.extFields().get("queueOffset"));
            assertEquals(decodeWithRocketMq(wire).getExtFields(), header.extFields());
        } finally {
            frame.release();
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void reassemblesFramesSplitIntoSingleBytes() throws Exception {
        List<byte[]> frames = mixedFrames();
        byte[] stream = concat(frames.toArray(new byte[0][]));
        EmbeddedChannel channel = decoderChannel();
        List<RemotingFrame> decoded = new ArrayList<>();
        for (byte b : stream) {
            channel.writeInbound(pooled(new byte[] {b}));
            decoded.addAll(readAll(channel));
        }
        assertSameFrames(frames, decoded);
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void reassemblesFramesSplitAtRandom() throws Exception {
        List<byte[]> frames = mixedFrames();
        byte[] stream = concat(frames.toArray(new byte[0][]));
        Random random = new Random(42);
        for (int round = 0; round < 50; round++) {
            EmbeddedChannel channel = decoderChannel();
            List<RemotingFrame> decoded = new ArrayList<>();
            for (int at = 0; at < stream.length; ) {
                int n = Math.min(stream.length - at, 1 + random.nextInt(round % 2 == 0 ? 16 : 700));
                byte[] chunk = new byte[n];
                System.arraycopy(stream, at, chunk, 0, n);
                at += n;
                channel.writeInbound(pooled(chunk));
                decoded.addAll(readAll(channel));
            }
            assertSameFrames(frames, decoded);
            assertFalse(channel.finishAndReleaseAll());
        }
    }

    @Test
    void decodesManyFramesFromOneWrite() throws Exception {
        List<byte[]> frames = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            frames.addAll(mixedFrames());
        }
        EmbeddedChannel channel = decoderChannel();
        ByteBuf in = pooled(concat(frames.toArray(new byte[0][])));
        assertTrue(channel.writeInbound(in));
        assertSameFrames(frames, readAll(channel));
        assertFalse(channel.finishAndReleaseAll());
        assertEquals(0, in.refCnt());
    }

    @Test
    void chainsTheReadsOfALargeFrameAndMergesThoseOfASmallOne() throws Exception {
        byte[] large = RemotingFixtures.fastEncode(RemotingFixtures.sendRequest(SerializeType.JSON, randomBytes(100 * 1024)));
        byte[] small = RemotingFixtures.fastEncode(RemotingFixtures.sendRequest(SerializeType.ROCKETMQ, randomBytes(900)));
        List<byte[]> frames = List.of(small, small, large, small, large, small);
        byte[] stream = concat(frames.toArray(new byte[0][]));
        // reads as a socket delivers them: up to 64 KiB each, at odd offsets
        Random random = new Random(7);
        for (int round = 0; round < 20; round++) {
            EmbeddedChannel channel = decoderChannel();
            List<RemotingFrame> decoded = new ArrayList<>();
            for (int at = 0; at < stream.length; ) {
                int n = Math.min(stream.length - at, 1 + random.nextInt(round % 2 == 0 ? 600 : 64 * 1024));
                channel.writeInbound(pooled(java.util.Arrays.copyOfRange(stream, at, at + n)));
                at += n;
                decoded.addAll(readAll(channel));
            }
            try {
                // a chained frame is several buffers (one per read it spans); a merged one is one. Small
                // frames that share reads with a large one's tail may be chained too: only those before count
                assertEquals(1, decoded.get(0).content().nioBufferCount(), "a small frame is read from one buffer");
                assertEquals(1, decoded.get(1).content().nioBufferCount(), "a small frame is read from one buffer");
                assertTrue(decoded.stream().anyMatch(f -> f.content().nioBufferCount() > 1),
                    "a large frame spanning reads is chained, not copied");
            } catch (AssertionError e) {
                decoded.forEach(RemotingFrame::release);
                channel.finishAndReleaseAll();
                throw e;
            }
            assertSameFrames(frames, decoded);
            assertFalse(channel.finishAndReleaseAll());
        }
    }

    @Test
    void mergesEveryFrameWhenChainingIsOff() throws Exception {
        byte[] large = RemotingFixtures.fastEncode(RemotingFixtures.sendRequest(SerializeType.ROCKETMQ, randomBytes(100 * 1024)));
        EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, Integer.MAX_VALUE));
        for (int at = 0; at < large.length; at += 64 * 1024) {
            channel.writeInbound(pooled(java.util.Arrays.copyOfRange(large, at, Math.min(large.length, at + 64 * 1024))));
        }
        List<RemotingFrame> decoded = readAll(channel);
        int buffers = decoded.isEmpty() ? -1 : decoded.get(0).content().nioBufferCount();
        assertSameFrames(List.of(large), decoded);
        assertEquals(1, buffers);
        assertFalse(channel.finishAndReleaseAll());
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        return b;
    }

    @Test
    void waitsForTheRestOfAFrame() {
        byte[] wire = RemotingFixtures.fastEncode(RemotingFixtures.sendRequest(SerializeType.ROCKETMQ, new byte[64]));
        EmbeddedChannel channel = decoderChannel();
        assertFalse(channel.writeInbound(pooled(java.util.Arrays.copyOf(wire, 3))));
        assertFalse(channel.writeInbound(pooled(java.util.Arrays.copyOfRange(wire, 3, wire.length - 1))));
        assertTrue(channel.writeInbound(pooled(java.util.Arrays.copyOfRange(wire, wire.length - 1, wire.length))));
        RemotingFrame frame = channel.readInbound();
        assertEquals(RequestCode.SEND_MESSAGE_V2, frame.code());
        assertEquals(64, frame.bodyLength());
        frame.release();
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void parseTakesOwnership() throws Exception {
        byte[] wire = RemotingFixtures.fastEncode(RemotingFixtures.pullRequest(SerializeType.JSON));
        ByteBuf good = pooled(wire);
        RemotingFrame frame = FrameDecoder.parse(good);
        assertEquals(RequestCode.PULL_MESSAGE, frame.code());
        assertEquals(1, good.refCnt());
        frame.release();
        assertEquals(0, good.refCnt());

        ByteBuf bad = pooled(RemotingFixtures.frame(0, utf8("{\"opaque\":1}"), new byte[0]));
        MalformedFrameException e = org.junit.jupiter.api.Assertions.assertThrows(MalformedFrameException.class,
            () -> FrameDecoder.parse(bad));
        assertEquals(MalformedReason.MISSING_FIELD, e.reason());
        assertEquals(0, bad.refCnt(), "a refused frame is released");
    }

    /** JSON and ROCKETMQ frames of several shapes, bodies up to a few KiB. */
    static List<byte[]> mixedFrames() {
        List<byte[]> frames = new ArrayList<>();
        for (SerializeType type : SerializeType.values()) {
            frames.add(RemotingFixtures.fastEncode(RemotingFixtures.pullRequest(type)));
            frames.add(RemotingFixtures.encode(RemotingFixtures.sendRequest(type, new byte[3000])));
            frames.add(RemotingFixtures.fastEncode(RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null)));
            RemotingCommand withBody = RemotingFixtures.sendRequest(type, utf8(RemotingFixtures.UNICODE));
            frames.add(RemotingFixtures.fastEncode(withBody));
        }
        return frames;
    }

    static void assertSameFrames(List<byte[]> expected, List<RemotingFrame> actual) throws Exception {
        try {
            assertEquals(expected.size(), actual.size());
            for (int i = 0; i < expected.size(); i++) {
                RemotingFrame frame = actual.get(i);
                assertArrayEquals(expected.get(i), bytes(frame.content()), "frame " + i);
                RemotingCommand cmd = decodeWithRocketMq(expected.get(i));
                assertEquals(cmd.getOpaque(), frame.opaque(), "frame " + i);
                assertEquals(cmd.getCode(), frame.code(), "frame " + i);
                assertEquals(cmd.getExtFields(), HeaderCodec.decodeHeader(frame).extFields(), "frame " + i);
            }
        } finally {
            actual.forEach(RemotingFrame::release);
        }
    }
}
