package io.rmqgw.benchmarks;

import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.PullResponseHeader;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * A pull response header re-encoded both ways: {@code JSON} = a JSON header (a broker answering in
 * JSON) re-encoded as binary, {@code ROCKETMQ} = a binary header re-encoded as JSON (mirror mode toward
 * a JSON client). Variants as in {@link SendV2Benchmark} (the rocketmq-remoting ones: {@link TranscodeBenchmark}).
 * {@code gatewayFrame} is what the gateway does with a pull answer ({@code StoredRecordsHandler}: no typed view):
 * {@code FrameDecoder.parse} and the frame head re-encoded in one pass; {@code gatewayTyped} reads the typed fields
 * (next/min/max offset, suggested broker) and writes the head from the typed header, as a rebuilt answer would.
 */
public class PullResponseBenchmark extends TranscodeBenchmark {

    @Param({"JSON", "ROCKETMQ"})
    public SerializeType from;

    @Setup(Level.Trial)
    public void setUp() throws Throwable {
        SerializeType other = from == SerializeType.JSON ? SerializeType.ROCKETMQ : SerializeType.JSON;
        setUpFrame(Wire.frame(Wire.pullResponse(), from), other);
        rocketmqRemoting();
        RemotingCommand theirs = SendV2Benchmark.decodeHead(out.copy());
        rocketmqRemoting497();
        RemotingCommand legacy = SendV2Benchmark.decodeHead(Unpooled.wrappedBuffer(legacyBytes()));
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

    @Benchmark
    public long gatewayFrame() {
        return Wire.withFrame(wire, this, PullResponseBenchmark::transcoded);
    }

    @Benchmark
    public long gatewayTyped() {
        return Wire.withFrame(wire, this, PullResponseBenchmark::typed);
    }

    private long transcoded(RemotingFrame frame) {
        out.clear();
        return HeaderTranscoder.writeTranscodedHead(frame, to, out);
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
