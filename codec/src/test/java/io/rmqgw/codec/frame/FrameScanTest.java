package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.frame;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static io.rmqgw.codec.frame.RemotingFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.json.BinaryToJson;
import io.rmqgw.codec.json.JsonToBinary;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The header scan a frame carries: reused while its transcoder still holds it, on its thread, and only then. */
class FrameScanTest {

    private static RemotingFrame json(String header) {
        return FrameDecoder.parse(pooled(frame(0, utf8(header), utf8("body"))));
    }

    @Test
    void theFrameDecodersScanIsCarriedAndReused() {
        RemotingFrame f = json("{\"code\":34,\"opaque\":5}");
        try {
            JsonToBinary t = JsonToBinary.get();
            assertSame(t, f.scan());
            long stamp = t.stamp();
            assertSame(t, HeaderCodec.transcoded(f));
            assertEquals(stamp, t.stamp(), "not transcoded again");
        } finally {
            f.release();
        }
    }

    @Test
    void aLaterTranscodeOnTheThreadEndsItAndTheFrameIsReadAgain() {
        RemotingFrame first = json("{\"code\":34,\"opaque\":5}");
        RemotingFrame second = json("{\"code\":11,\"opaque\":6}");
        try {
            assertNull(first.scan());
            JsonToBinary t = HeaderCodec.transcoded(first);
            assertEquals(5, t.opaque());
            assertSame(t, first.scan(), "carried from then on");
            assertNull(second.scan());
            JsonToBinary.get().forget();
            assertNull(first.scan());
        } finally {
            first.release();
            second.release();
        }
    }

    @Test
    void onAnotherThreadTheFrameIsReadWithThatThreadsTranscoder() throws Exception {
        RemotingFrame f = json("{\"code\":34,\"opaque\":5}");
        try {
            JsonToBinary mine = JsonToBinary.get();
            int opaque = CompletableFuture.supplyAsync(() -> {
                if (f.scan() != null) {
                    throw new AssertionError("another thread's transcoder");
                }
                JsonToBinary theirs = HeaderCodec.transcoded(f);
                assertNotSame(mine, theirs);
                return theirs.opaque();
            }).get();
            assertEquals(5, opaque);
            assertNull(f.scan(), "the other thread's result, which this thread does not read");
        } finally {
            f.release();
        }
    }

    @Test
    void aHeadCarriesItsFramesScanAndAReplacementDoesNot() {
        RemotingFrame f = json("{\"code\":34,\"opaque\":5}");
        RemotingFrame head = f.asHead(4);
        RemotingFrame copy = f.replace(Unpooled.EMPTY_BUFFER);
        try {
            assertSame(JsonToBinary.get(), head.scan());
            assertNull(copy.scan());
        } finally {
            f.release();
        }
    }

    @Test
    void aBinaryFramesLoadIsCarriedToo() {
        ByteBuf header = Unpooled.buffer().writeShort(34).writeByte(0).writeShort(1).writeInt(7).writeInt(0)
            .writeInt(0).writeInt(0);
        byte[] h = new byte[header.readableBytes()];
        header.readBytes(h);
        header.release();
        RemotingFrame f = FrameDecoder.parse(pooled(frame(1, h, utf8("body"))));
        try {
            BinaryToJson b = BinaryToJson.get();
            assertSame(b, f.scan());
            long stamp = b.stamp();
            assertSame(b, HeaderCodec.loaded(f));
            assertEquals(stamp, b.stamp());
            b.load(Unpooled.wrappedBuffer(h), 0, h.length); // another header loaded
            assertNull(f.scan());
            assertSame(b, HeaderCodec.loaded(f));
            assertSame(b, f.scan());
        } finally {
            f.release();
        }
    }
}
