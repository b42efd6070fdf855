package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A send frame arriving in socket-sized reads (64 KiB, as Netty's adaptive receive buffer reads at
 * most) through the gateway's {@link FrameDecoder}: {@code framed} with its cumulator (the reads of a
 * large frame chained), {@code merged} with Netty's default (every read after the first copied into
 * one growing buffer). Each operation allocates the read buffers and fills them, as a socket read
 * would, decodes, and releases the frame; the difference between the two is the copy.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Xms1g", "-Xmx1g"})
public class LargeFrameBenchmark {

    private static final int READ_SIZE = 64 * 1024;

    @Param({"1024", "102400"})
    public int bodySize;

    private byte[] wire;
    private EmbeddedChannel framed;
    private EmbeddedChannel merged;

    @Setup(Level.Trial)
    public void setUp() {
        wire = Wire.bytes(Wire.frame(Wire.sendV2(new byte[bodySize]), SerializeType.ROCKETMQ));
        framed = new EmbeddedChannel(new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME_LENGTH));
        merged = new EmbeddedChannel(new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME_LENGTH, Integer.MAX_VALUE));
        if (framed() != merged()) {
            throw new IllegalStateException("the two decoders disagree");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        framed.finishAndReleaseAll();
        merged.finishAndReleaseAll();
    }

    @Benchmark
    public long framed() {
        return decode(framed);
    }

    @Benchmark
    public long merged() {
        return decode(merged);
    }

    /** Feeds the frame in reads of at most 64 KiB; returns a checksum of the decoded frame. */
    private long decode(EmbeddedChannel channel) {
        // the head of the first read is where a socket read leaves it: at a frame boundary
        for (int at = 0; at < wire.length; at += READ_SIZE) {
            int n = Math.min(READ_SIZE, wire.length - at);
            ByteBuf read = PooledByteBufAllocator.DEFAULT.directBuffer(n);
            read.writeBytes(wire, at, n);
            channel.writeInbound(read);
        }
        RemotingFrame frame = channel.readInbound();
        try {
            ByteBuf content = frame.content();
            return frame.code() + frame.bodyLength() + content.getByte(content.writerIndex() - 1);
        } finally {
            frame.release();
        }
    }
}
