package io.rmqgw.codec.frame;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.rmqgw.testing.fuzz.BoundedFuzz;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes {@link FrameDecoder} on a byte stream as a connection delivers it, and every header reader on
 * each frame it accepts ({@link FrameChecks}). Properties, per input:
 * <ul>
 *   <li>the only failure is a {@link MalformedFrameException}, after which the decoder emits nothing more;</li>
 *   <li>the same bytes split into other reads give the same frames and the same failure;</li>
 *   <li>no buffer outlives the input: the allocator's live memory is back to 0 afterwards;</li>
 *   <li>live memory never exceeds a small multiple of the bytes received so far: a declared length
 *       allocates nothing before its bytes arrive.</li>
 * </ul>
 * Seeds: {@code FrameDecoderFuzzTestInputs/} (one stream per file: real frames, see
 * docs/RELIABILITY.md). {@link #boundedRun()} runs 20,000 mutated inputs in every build.
 */
class FrameDecoderFuzzTest {

    /** A small limit keeps "too long" reachable by small inputs; the default one is checked separately. */
    private static final int MAX_FRAME = 64 * 1024;

    @FuzzTest(maxDuration = "5m")
    void stream(byte[] input) {
        decodeStream(input);
    }

    @Test
    @Timeout(120)
    void boundedRun() {
        BoundedFuzz.run(FrameDecoderFuzzTest.class, "stream", 0x5EED_F4A3L, 20_000, FrameDecoderFuzzTest::decodeStream);
    }

    @Test
    void declaredLengthAllocatesNothingBeforeItsBytes() {
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false, true);
        EmbeddedChannel ch = channel(alloc, FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, FrameDecoder.LARGE_FRAME_LENGTH);
        int declared = FrameDecoder.DEFAULT_MAX_FRAME_LENGTH - 4;
        ByteBuf head = alloc.heapBuffer(8).writeInt(declared).writeInt(21); // 4-byte length of 16 MiB, then a header length
        ch.writeInbound(head);
        assertNull(ch.readInbound());
        long used = alloc.metric().usedHeapMemory();
        assertTrue(used < 1024, "8 bytes of a 16 MiB frame hold " + used + " bytes");
        // as the frame's bytes arrive, memory follows them, not the declared length
        long fed = 8;
        for (int i = 0; i < 64; i++) {
            ByteBuf chunk = alloc.heapBuffer(4096).writeZero(4096);
            ch.writeInbound(chunk);
            fed += 4096;
            used = alloc.metric().usedHeapMemory();
            assertTrue(used <= 2 * fed + 4096, fed + " bytes received, " + used + " bytes held");
        }
        assertNull(ch.readInbound());
        ch.finishAndReleaseAll();
        assertEquals(0, alloc.metric().usedHeapMemory(), "everything released");
    }

    /** The fuzz target: see the class doc. */
    static void decodeStream(byte[] input) {
        Outcome whole = decode(input, new int[] {input.length}, Integer.MAX_VALUE);
        Outcome split = decode(input, splits(input), FrameDecoder.LARGE_FRAME_LENGTH / 64);
        FrameChecks.check(whole.equals(split), "reads split differently decode the same: " + whole + " vs " + split);
    }

    /** What a stream decoded to: each frame's envelope, then the failure reason if any. */
    private record Outcome(List<String> frames, MalformedReason failure) {
    }

    private static Outcome decode(byte[] input, int[] reads, int chainFrom) {
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false, true);
        EmbeddedChannel ch = channel(alloc, MAX_FRAME, chainFrom);
        List<String> frames = new ArrayList<>();
        MalformedReason failure = null;
        long fed = 0;
        int pos = 0;
        try {
            for (int read : reads) {
                boolean failedBefore = failure != null;
                ByteBuf chunk = alloc.heapBuffer(read).writeBytes(input, pos, read);
                pos += read;
                fed += read;
                try {
                    ch.writeInbound(chunk);
                } catch (DecoderException e) {
                    FrameChecks.check(e instanceof MalformedFrameException, "only MalformedFrameException: " + e);
                    FrameChecks.check(failure == null, "one failure per stream");
                    failure = ((MalformedFrameException) e).reason();
                }
                long used = alloc.metric().usedHeapMemory();
                FrameChecks.check(used <= 3 * fed + 4096, fed + " bytes received but " + used + " bytes held");
                for (RemotingFrame frame; (frame = ch.readInbound()) != null; ) {
                    try {
                        FrameChecks.check(!failedBefore, "no frame after a malformed one");
                        frames.add(frame.code() + "/" + frame.opaque() + "/" + frame.flag() + "/" + frame.encoding()
                            + "/" + frame.headerLength() + "/" + frame.bodyLength());
                        FrameChecks.exercise(frame, alloc);
                    } finally {
                        frame.release();
                    }
                }
            }
        } finally {
            ch.finishAndReleaseAll();
        }
        FrameChecks.check(alloc.metric().usedHeapMemory() == 0,
            alloc.metric().usedHeapMemory() + " bytes still held after the stream");
        return new Outcome(frames, failure);
    }

    private static EmbeddedChannel channel(UnpooledByteBufAllocator alloc, int maxFrame, int chainFrom) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(new FrameDecoder(maxFrame, chainFrom));
        return ch;
    }

    /** Read sizes derived from the input itself, so a failing input reproduces with its splits. */
    private static int[] splits(byte[] input) {
        SplittableRandom random = new SplittableRandom(java.util.Arrays.hashCode(input));
        List<Integer> reads = new ArrayList<>();
        int left = input.length;
        while (left > 0) {
            int read = Math.min(left, 1 + random.nextInt(random.nextBoolean() ? 8 : 700));
            reads.add(read);
            left -= read;
        }
        return reads.stream().mapToInt(Integer::intValue).toArray();
    }
}
