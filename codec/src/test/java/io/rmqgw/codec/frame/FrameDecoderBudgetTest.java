package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.encode;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;

/** Incomplete frames take their bytes from a budget shared by connections, and give them back. */
class FrameDecoderBudgetTest {

    private static final int MAX = 1024 * 1024;

    private static byte[] send(int bodyBytes) {
        return encode(RemotingFixtures.sendRequest(SerializeType.ROCKETMQ, new byte[bodyBytes]));
    }

    private static EmbeddedChannel channel(IncompleteFrameBudget budget) {
        return new EmbeddedChannel(new FrameDecoder(MAX, budget));
    }

    private static void write(EmbeddedChannel ch, byte[] frame, int from, int to) {
        ch.writeInbound(pooled(Arrays.copyOfRange(frame, from, to)));
    }

    private static int releaseAll(EmbeddedChannel ch) {
        int n = 0;
        for (Object o; (o = ch.readInbound()) != null; n++) {
            ((RemotingFrame) o).release();
        }
        return n;
    }

    @Test
    void aPartialFrameHoldsWhatArrivedUntilItCompletes() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        byte[] frame = send(100_000);
        write(ch, frame, 0, 30_000);
        assertEquals(30_000, budget.held());
        write(ch, frame, 30_000, 90_000);
        assertEquals(90_000, budget.held());
        FrameDecoder decoder = ch.pipeline().get(FrameDecoder.class);
        assertEquals(90_000, decoder.incompleteFrameBytes());
        write(ch, frame, 90_000, frame.length);
        assertEquals(1, releaseAll(ch));
        assertEquals(0, budget.held(), "a whole frame holds nothing of the budget");
        assertFalse(ch.finish());
    }

    @Test
    void theStartOfTheNextFrameIsHeldAfterAWholeOne() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        byte[] a = send(1000);
        byte[] b = send(5000);
        byte[] both = RemotingFixtures.concat(a, b);
        write(ch, both, 0, a.length + 700);
        assertEquals(1, releaseAll(ch));
        // the 700 bytes keep the whole buffer they arrived in (nothing else holds it): that is what counts
        assertEquals(Math.max(a.length + 700, FrameDecoder.PARTIAL_FRAME_FLOOR), budget.held());
        write(ch, both, a.length + 700, both.length);
        assertEquals(1, releaseAll(ch));
        assertEquals(0, budget.held());
        assertFalse(ch.finish());
    }

    @Test
    void aReadThatDoesNotFitIsRefusedAndTheOthersCarryOn() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(100_000);
        EmbeddedChannel first = channel(budget);
        EmbeddedChannel second = channel(budget);
        byte[] frame = send(80_000);
        write(first, frame, 0, 60_000);
        write(second, frame, 0, 30_000);
        assertEquals(90_000, budget.held());

        FrameBudgetExceededException e = assertThrows(FrameBudgetExceededException.class,
            () -> write(second, frame, 30_000, 50_000));
        assertTrue(e.getMessage().contains("100000"), e.getMessage());
        assertEquals(60_000, budget.held(), "the refused connection gave back all it held");
        // the refused connection reads nothing more: framing is lost there
        write(second, frame, 50_000, frame.length);
        assertNull(second.readInbound());
        assertEquals(60_000, budget.held());

        write(first, frame, 60_000, frame.length);
        assertEquals(1, releaseAll(first));
        assertEquals(0, budget.held());
        first.finish();
        second.finish();
    }

    @Test
    void aClosedConnectionGivesBackItsPartialFrame() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        write(ch, send(200_000), 0, 150_000);
        assertEquals(150_000, budget.held());
        ch.close();
        assertEquals(0, budget.held());
        ch.finishAndReleaseAll();
    }

    @Test
    void aRemovedDecoderGivesBackItsPartialFrame() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        write(ch, send(2000), 0, 1500);
        assertEquals(FrameDecoder.PARTIAL_FRAME_FLOOR, budget.held(), "at least the floor per connection");
        ch.pipeline().remove(FrameDecoder.class);
        assertEquals(0, budget.held());
        ch.finishAndReleaseAll();
    }

    @Test
    void aMalformedFrameGivesBackWhatItsConnectionHeld() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        byte[] frame = send(3000);
        write(ch, frame, 0, 2000);
        assertEquals(FrameDecoder.PARTIAL_FRAME_FLOOR, budget.held());
        // a length beyond the decoder's limit after the frame: refused when the first completes
        byte[] tail = java.nio.ByteBuffer.allocate(8).putInt(MAX + 1).putInt(0).array();
        assertThrows(MalformedFrameException.class,
            () -> ch.writeInbound(pooled(RemotingFixtures.concat(Arrays.copyOfRange(frame, 2000, frame.length), tail))));
        releaseAll(ch);
        assertEquals(0, budget.held());
        ch.finishAndReleaseAll();
    }

    /** A read of {@code bytes} as the socket delivers it: in a buffer sized by the reads before it. */
    private static void read(EmbeddedChannel ch, byte[] frame, int from, int to, int bufferCapacity) {
        io.netty.buffer.ByteBuf b = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(bufferCapacity);
        b.writeBytes(frame, from, to - from);
        ch.writeInbound(b);
    }

    @Test
    void aTrickleOfSmallReadsIntoLargeBuffersPinsWhatItBrought() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        byte[] frame = send(500_000);
        // the slow sender of issue 27: a header and 2 KB, then a byte at a time, each read in a 32 KiB buffer
        read(ch, frame, 0, 2300, 4096);
        int at = 2300;
        for (int i = 0; i < 20; i++, at++) {
            read(ch, frame, at, at + 1, 32 * 1024);
        }
        long held = budget.held();
        assertTrue(held <= 4096 + 20 * 16, "kept reads copied into buffers of their size: " + held + " bytes pinned");
        assertTrue(held >= at, "at least what arrived: " + held);
        read(ch, frame, at, frame.length, frame.length - at);
        RemotingFrame whole = (RemotingFrame) ch.readInbound();
        try {
            byte[] got = new byte[whole.content().readableBytes()];
            whole.content().getBytes(whole.content().readerIndex(), got);
            assertTrue(Arrays.equals(frame, got), "the frame arrives intact");
        } finally {
            whole.release();
        }
        assertEquals(0, budget.held());
        assertFalse(ch.finish());
    }

    @Test
    void theStartOfASmallFrameLeftInALargeReadBufferCountsItsCapacityThenIsCompacted() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        byte[] a = send(1000);
        byte[] b = send(5000);
        byte[] both = RemotingFixtures.concat(a, b);
        read(ch, both, 0, a.length + 10, 64 * 1024);
        assertEquals(1, releaseAll(ch));
        assertEquals(64 * 1024, budget.held(), "10 bytes hold the 64 KiB buffer they came in");
        read(ch, both, a.length + 10, a.length + 20, 64 * 1024);
        assertEquals(FrameDecoder.PARTIAL_FRAME_FLOOR, budget.held(), "compacted at the next read");
        read(ch, both, a.length + 20, both.length, 64 * 1024);
        assertEquals(1, releaseAll(ch));
        assertEquals(0, budget.held());
        assertFalse(ch.finish());
    }

    @Test
    void fullReadsOfALargeFrameAreChainedAsTheyCame() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(1 << 20);
        EmbeddedChannel ch = channel(budget);
        byte[] frame = send(300_000);
        read(ch, frame, 0, 65_536, 65_536);
        read(ch, frame, 65_536, 131_072, 65_536);
        assertEquals(131_072, budget.held(), "full buffers: what they pin is what arrived");
        read(ch, frame, 131_072, frame.length, 262_144);
        assertEquals(1, releaseAll(ch));
        assertEquals(0, budget.held());
        assertFalse(ch.finish());
    }

    @Test
    void theLimitCanChangeWhileBytesAreHeld() {
        IncompleteFrameBudget budget = new IncompleteFrameBudget(10);
        assertTrue(budget.tryTake(8));
        budget.limit(4);
        assertFalse(budget.tryTake(1), "over the new limit until enough is given back");
        budget.giveBack(8);
        assertTrue(budget.tryTake(4));
        assertEquals(4, budget.held());
        assertThrows(IllegalArgumentException.class, () -> budget.limit(-1));
    }
}
