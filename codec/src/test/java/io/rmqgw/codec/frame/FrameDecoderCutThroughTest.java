package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.bytes;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;

/** Large frames streaming through the decoder: head first, then the body as it arrives. */
class FrameDecoderCutThroughTest {

    private static final int LARGE = FrameDecoder.LARGE_FRAME_LENGTH;

    private final List<RemotingFrame> asked = new ArrayList<>();

    private EmbeddedChannel channel(boolean stream, int maxWhole, IncompleteFrameBudget budget) {
        return new EmbeddedChannel(new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, maxWhole, LARGE, budget,
            head -> {
                asked.add(head);
                return stream;
            }));
    }

    private static byte[] send(SerializeType type, int bodyLength, long seed) {
        byte[] body = new byte[bodyLength];
        new Random(seed).nextBytes(body);
        return RemotingFixtures.encode(RemotingFixtures.sendRequest(type, body));
    }

    private static int headLength(byte[] frame) {
        return RemotingFrame.PREFIX_LENGTH + ((frame[5] & 0xFF) << 16 | (frame[6] & 0xFF) << 8 | (frame[7] & 0xFF));
    }

    /** Writes {@code frame} in reads of {@code step} bytes; returns what came out, head bytes then body bytes. */
    private static Streamed feed(EmbeddedChannel ch, byte[] frame, int... cuts) {
        Streamed out = new Streamed();
        int from = 0;
        for (int cut : cuts) {
            ch.writeInbound(pooled(Arrays.copyOfRange(frame, from, cut)));
            from = cut;
            out.take(ch);
        }
        ch.writeInbound(pooled(Arrays.copyOfRange(frame, from, frame.length)));
        out.take(ch);
        return out;
    }

    private static final class Streamed {
        RemotingFrame head;
        byte[] headBytes;
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        int chunks;
        boolean last;
        RemotingFrame whole;

        void take(EmbeddedChannel ch) {
            for (Object o; (o = ch.readInbound()) != null; ) {
                if (o instanceof BodyChunk chunk) {
                    assertFalse(last, "no chunk after the last");
                    assertTrue(head != null, "chunks follow a head");
                    body.writeBytes(bytes(chunk.content()));
                    chunks++;
                    last = chunk.last();
                    chunk.release();
                } else if (o instanceof RemotingFrame f && f.streamedBodyLength() > 0) {
                    head = f;
                    headBytes = bytes(f.content());
                    f.release();
                } else {
                    whole = (RemotingFrame) o;
                }
            }
        }
    }

    @Test
    void streamsALargeFrameWithTheHeaderSplitAcrossReadsAndTheBodyInManyReads() {
        for (SerializeType type : SerializeType.values()) {
            byte[] frame = send(type, 100 * 1024, 7);
            int head = headLength(frame);
            List<Integer> cuts = new ArrayList<>(List.of(3, 6, head / 2, head + 1));
            for (int at = head + 1000; at < frame.length; at += 7000) {
                cuts.add(at);
            }
            EmbeddedChannel ch = channel(true, FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, null);
            Streamed out = feed(ch, frame, cuts.stream().mapToInt(Integer::intValue).toArray());
            assertNull(out.whole, type + ": streamed, not stored whole");
            assertEquals(1, asked.size(), "the policy is asked once");
            assertArrayEquals(Arrays.copyOf(frame, head), out.headBytes, "the head keeps the whole frame's length prefix");
            assertEquals(frame.length - head, out.head.streamedBodyLength());
            assertEquals(RemotingFixtures.sendRequest(type, new byte[0]).getCode(), out.head.code());
            assertArrayEquals(Arrays.copyOfRange(frame, head, frame.length), out.body.toByteArray(), type + ": body bytes");
            assertTrue(out.last);
            assertTrue(out.chunks > 10, "the body is emitted as it arrives: " + out.chunks);
            assertEquals(0, ((FrameDecoder) ch.pipeline().first()).partialFrameSinceNanos(), "nothing pending");
            // the connection goes on with ordinary frames
            byte[] small = send(type, 100, 8);
            ch.writeInbound(pooled(small));
            RemotingFrame next = ch.readInbound();
            assertArrayEquals(small, bytes(next.content()));
            next.release();
            asked.clear();
            assertFalse(ch.finish());
        }
    }

    @Test
    void aHalfFrameStaysPartialUntilItsLastByteAndHoldsNothingOfTheBudget() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(64 * 1024);
        EmbeddedChannel ch = channel(true, 64 * 1024, budget);
        FrameDecoder decoder = (FrameDecoder) ch.pipeline().first();
        byte[] frame = send(SerializeType.ROCKETMQ, 1024 * 1024, 9);
        Streamed out = feed(ch, frame, 20, headLength(frame) + 10, 500_000);
        assertEquals(frame.length - headLength(frame), out.body.size(), "a frame past the whole-frame limit streams");
        assertEquals(0, budget.held());
        assertEquals(0, decoder.partialFrameSinceNanos());

        ch.writeInbound(pooled(Arrays.copyOf(frame, headLength(frame) + 100)));
        Streamed half = new Streamed();
        half.take(ch);
        assertFalse(half.last);
        assertNotEquals(0, decoder.partialFrameSinceNanos(), "a stalled half frame is still timed");
        assertEquals(0, budget.held(), "streamed bytes are not held");
        ch.finish(); // the rest of the half frame never comes
        half.take(ch);
        assertFalse(half.last);
    }

    @Test
    void aDeclinedFrameIsStoredWholeAndAskedOnce() {
        EmbeddedChannel ch = channel(false, FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, null);
        byte[] frame = send(SerializeType.JSON, 200 * 1024, 10);
        Streamed out = feed(ch, frame, 100, headLength(frame) + 5, 50_000, 90_000, 150_000);
        assertEquals(1, asked.size());
        assertNull(out.head);
        assertArrayEquals(frame, bytes(out.whole.content()));
        out.whole.release();
        assertFalse(ch.finish());
    }

    @Test
    void aDeclinedFramePastTheWholeFrameLimitIsRefusedOnItsLength() {
        EmbeddedChannel ch = channel(false, 64 * 1024, null);
        byte[] frame = send(SerializeType.ROCKETMQ, 100 * 1024, 11);
        MalformedFrameException m = assertThrows(MalformedFrameException.class,
            () -> ch.writeInbound(pooled(Arrays.copyOf(frame, headLength(frame) + 10))));
        assertEquals(MalformedReason.FRAME_TOO_LONG, m.reason());
        ch.finishAndReleaseAll();
    }

    @Test
    void smallFramesAndResponsesAreNeverOffered() {
        EmbeddedChannel ch = channel(true, FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, null);
        byte[] small = send(SerializeType.ROCKETMQ, LARGE / 2, 12);
        Streamed out = feed(ch, small, 40);
        assertArrayEquals(small, bytes(out.whole.content()));
        out.whole.release();
        RemotingCommand response = RemotingCommand.createResponseCommand(0, "ok");
        response.setBody(new byte[LARGE * 2]);
        byte[] answer = RemotingFixtures.encode(response);
        Streamed answered = feed(ch, answer, 100);
        assertArrayEquals(answer, bytes(answered.whole.content()));
        answered.whole.release();
        assertTrue(asked.isEmpty());
        assertFalse(ch.finish());
    }

    @Test
    void aWholeLargeFrameInOneReadIsNotStreamed() {
        EmbeddedChannel ch = channel(true, FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, null);
        byte[] frame = send(SerializeType.ROCKETMQ, 100 * 1024, 13);
        ch.writeInbound(Unpooled.wrappedBuffer(frame));
        RemotingFrame whole = ch.readInbound();
        assertEquals(0, whole.streamedBodyLength());
        whole.release();
        assertTrue(asked.isEmpty());
        assertFalse(ch.finish());
    }
}
