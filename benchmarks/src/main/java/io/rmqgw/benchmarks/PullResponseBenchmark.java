package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.PullResponseHeader;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
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
 * A pull response header re-encoded both ways: {@code JSON} = a JSON header (a broker answering in
 * JSON) re-encoded as binary, {@code ROCKETMQ} = a binary header re-encoded as JSON (mirror mode toward
 * a JSON client). Variants as in {@link SendV2Benchmark} ({@code rocketmqRemoting}: 5.4.0,
 * {@code rocketmqRemoting497}: 4.9.7, both on the same bytes). {@code gatewayFrame} is what the gateway
 * does with a pull answer ({@code StoredRecordsHandler}: no typed view): {@code FrameDecoder.parse} and
 * the frame head re-encoded in one pass; {@code gatewayTyped} reads the typed fields (next/min/max
 * offset, suggested broker) and writes the head from the typed header, as a rebuilt answer would.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
// jackson's parser and the codec take several seconds of C2 work before they settle on a 2-core machine
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
// netty 4.1.119 gives pooled-buffer thread caches and batched recycling only to event-loop (FastThreadLocal)
// threads by default; the gateway decodes on event loops, so the benchmark thread gets them too (4.9.7's netty
// 4.1.65 gives them anyway)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Dio.netty.recycler.batchFastThreadLocalOnly=false", "-Xms1g", "-Xmx1g"})
public class PullResponseBenchmark {

    @Param({"JSON", "ROCKETMQ"})
    public SerializeType from;

    private SerializeType to;
    private ByteBuf wire;
    private ByteBuf out;
    private Object legacyWire;
    private Object legacyOut;
    private Object legacyTo;

    @Setup(Level.Trial)
    public void setUp() throws Throwable {
        to = from == SerializeType.JSON ? SerializeType.ROCKETMQ : SerializeType.JSON;
        wire = Wire.frame(Wire.pullResponse(), from);
        out = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        legacyWire = LegacyRemoting.directBuffer(Wire.bytes(wire));
        legacyOut = LegacyRemoting.directBuffer(4096);
        legacyTo = LegacyRemoting.serializeType(to.name());
        rocketmqRemoting();
        RemotingCommand theirs = SendV2Benchmark.decodeHead(out.copy());
        rocketmqRemoting497();
        RemotingCommand legacy = SendV2Benchmark.decodeHead(Unpooled.wrappedBuffer(LegacyRemoting.bytes(legacyOut)));
        gatewayFrame();
        RemotingCommand ours = SendV2Benchmark.decodeHead(out.copy());
        gatewayTyped();
        RemotingCommand typed = SendV2Benchmark.decodeHead(out.copy());
        for (RemotingCommand x : new RemotingCommand[] {ours, typed, legacy}) {
            if (!theirs.getExtFields().equals(x.getExtFields()) || theirs.getOpaque() != x.getOpaque()) {
                throw new IllegalStateException("outputs differ: " + theirs.getExtFields() + " / " + x.getExtFields());
            }
        }
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

    @Benchmark
    public long gatewayFrame() {
        RemotingFrame frame = FrameDecoder.parse(wire.retainedDuplicate());
        try {
            out.clear();
            return HeaderTranscoder.writeTranscodedHead(frame, to, out);
        } finally {
            frame.release();
        }
    }

    @Benchmark
    public long gatewayTyped() {
        RemotingFrame frame = FrameDecoder.parse(wire.retainedDuplicate());
        try {
            return typed(frame);
        } finally {
            frame.release();
        }
    }

    private long typed(RemotingFrame frame) {
        PullResponseHeader h = (PullResponseHeader) HeaderTranscoder.decodeResponse(frame, RequestCode.PULL_MESSAGE);
        try {
            long offsets = h.nextBeginOffset() + h.minOffset() + h.maxOffset() + h.suggestWhichBrokerId();
            out.clear();
            return offsets + HeaderTranscoder.writeFrameHead(h, to, frame.bodyLength(), out);
        } finally {
            h.release();
        }
    }
}
