package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A frame header re-encoded into another encoding: the rocketmq-remoting baselines (5.4.0, and 4.9.7 in its own
 * class loader: {@link LegacyRemoting}, both on the same bytes, each also with the frame taken as NettyDecoder
 * takes it), run by {@link SendV2Benchmark} and {@link PullResponseBenchmark} beside the gateway's variants (JMH
 * runs the benchmark methods of this class in each). Every variant writes into the same reused
 * pooled buffer {@link #out}.
 */
public abstract class TranscodeBenchmark extends ThroughputBenchmark {

    /** The whole frame as it arrives: pooled direct memory. */
    ByteBuf wire;
    /** The encoding the header is re-encoded into. */
    SerializeType to;
    ByteBuf out;
    private Object legacyWire;
    private Object legacyOut;
    private Object legacyTo;

    /** Sets the frame and the target encoding, and the buffers of both sides; a subclass's set-up calls it first. */
    void setUpFrame(ByteBuf wire, SerializeType to) throws Throwable {
        this.wire = wire;
        this.to = to;
        out = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        legacyWire = LegacyRemoting.directBuffer(Wire.bytes(wire));
        legacyOut = LegacyRemoting.directBuffer(4096);
        legacyTo = LegacyRemoting.serializeType(to.name());
    }

    /** What {@link #rocketmqRemoting497} wrote, read back. */
    byte[] legacyBytes() throws Throwable {
        return LegacyRemoting.bytes(legacyOut);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Throwable {
        wire.release();
        out.release();
        LegacyRemoting.release(legacyWire);
        LegacyRemoting.release(legacyOut);
    }

    @Benchmark
    public int rocketmqRemoting() throws Exception {
        return Wire.remotingTranscode(wire, to, out, false);
    }

    /** As {@link #rocketmqRemoting}, the frame taken as NettyDecoder takes it (a retained slice, released). */
    @Benchmark
    public int rocketmqRemotingFramed() throws Exception {
        return Wire.remotingTranscode(wire, to, out, true);
    }

    /** rocketmq-remoting 4.9.7 (fastjson 1.2.69) on the same bytes: see {@link LegacyRemoting}. */
    @Benchmark
    public int rocketmqRemoting497() throws Throwable {
        return LegacyRemoting.transcode(legacyWire, legacyOut, legacyTo, false);
    }

    @Benchmark
    public int rocketmqRemoting497Framed() throws Throwable {
        return LegacyRemoting.transcode(legacyWire, legacyOut, legacyTo, true);
    }
}
