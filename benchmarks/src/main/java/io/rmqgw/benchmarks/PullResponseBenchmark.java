package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
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
 * a JSON client). Variants as in {@link SendV2Benchmark}; the gateway reads the typed fields it uses
 * (next/min/max offset, suggested broker).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Xms1g", "-Xmx1g"})
public class PullResponseBenchmark {

    @Param({"JSON", "ROCKETMQ"})
    public SerializeType from;

    private SerializeType to;
    private ByteBuf wire;
    private ByteBuf out;
    private RemotingFrame parsed;

    @Setup(Level.Trial)
    public void setUp() {
        to = from == SerializeType.JSON ? SerializeType.ROCKETMQ : SerializeType.JSON;
        wire = Wire.frame(Wire.pullResponse(), from);
        out = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        parsed = FrameDecoder.parse(wire.retainedDuplicate());
        try {
            rocketmqRemoting();
            RemotingCommand theirs = SendV2Benchmark.decodeHead(out.copy());
            gatewayFrame();
            RemotingCommand ours = SendV2Benchmark.decodeHead(out.copy());
            if (!theirs.getExtFields().equals(ours.getExtFields()) || theirs.getOpaque() != ours.getOpaque()) {
                throw new IllegalStateException("outputs differ: " + theirs.getExtFields() + " / " + ours.getExtFields());
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        parsed.release();
        wire.release();
        out.release();
    }

    @Benchmark
    public int rocketmqRemoting() throws Exception {
        ByteBuf in = wire.duplicate();
        in.skipBytes(4);
        RemotingCommand cmd = RemotingCommand.decode(in);
        cmd.setSerializeTypeCurrentRPC(to);
        out.clear();
        cmd.fastEncodeHeader(out);
        return out.writerIndex();
    }

    @Benchmark
    public long gatewayHeader() {
        return gateway(parsed);
    }

    @Benchmark
    public long gatewayFrame() {
        RemotingFrame frame = FrameDecoder.parse(wire.retainedDuplicate());
        try {
            return gateway(frame);
        } finally {
            frame.release();
        }
    }

    private long gateway(RemotingFrame frame) {
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
