package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
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
 * A 4.9.7 client's JSON SEND_MESSAGE_V2 frame re-encoded as ROCKETMQ binary toward the broker.
 *
 * <ul>
 *   <li>{@code rocketmqRemoting}: {@code RemotingCommand.decode} (fastjson into a HashMap) +
 *       {@code fastEncodeHeader} in ROCKETMQ: what a rocketmq-remoting based proxy does per frame.</li>
 *   <li>{@code gatewayHeader}: the typed decode of the frame's header (the topic and group name
 *       checks the gateway makes included, on raw bytes) + the binary frame head written.</li>
 *   <li>{@code gatewayFrame}: the same, plus {@code FrameDecoder.parse} of the raw frame (the
 *       envelope read every frame gets in the gateway pipeline).</li>
 * </ul>
 * Every variant writes its output into the same reused pooled buffer; the body is never copied by
 * the gateway (it is forwarded as a slice), while RemotingCommand.decode copies it into a byte[].
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Xms1g", "-Xmx1g"})
public class SendV2Benchmark {

    @Param({"0", "4096"})
    public int bodySize;

    private ByteBuf wire;
    private ByteBuf out;
    private RemotingFrame parsed;

    @Setup(Level.Trial)
    public void setUp() {
        wire = Wire.frame(Wire.sendV2(bodySize == 0 ? null : new byte[bodySize]), SerializeType.JSON);
        out = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        parsed = FrameDecoder.parse(wire.retainedDuplicate());
        // sanity: both paths produce a frame rocketmq-remoting reads as the same command
        check();
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
        in.skipBytes(4); // NettyDecoder strips the length field
        RemotingCommand cmd = RemotingCommand.decode(in);
        cmd.setSerializeTypeCurrentRPC(SerializeType.ROCKETMQ);
        out.clear();
        cmd.fastEncodeHeader(out);
        return out.writerIndex();
    }

    @Benchmark
    public int gatewayHeader() {
        return gateway(parsed);
    }

    @Benchmark
    public int gatewayFrame() {
        RemotingFrame frame = FrameDecoder.parse(wire.retainedDuplicate());
        try {
            return gateway(frame);
        } finally {
            frame.release();
        }
    }

    private int gateway(RemotingFrame frame) {
        SendRequestHeader h = (SendRequestHeader) HeaderTranscoder.decodeRequest(frame);
        try {
            if (h.checkTopic(NameValidator.DEFAULT) != NameCheck.VALID || h.checkGroup(NameValidator.DEFAULT) != NameCheck.VALID) {
                throw new IllegalStateException("names");
            }
            out.clear();
            return HeaderTranscoder.writeFrameHead(h, SerializeType.ROCKETMQ, frame.bodyLength(), out);
        } finally {
            h.release();
        }
    }

    private void check() {
        try {
            rocketmqRemoting();
            ByteBuf theirs = out.copy();
            gatewayFrame();
            ByteBuf ours = out.copy();
            try {
                RemotingCommand a = decodeHead(theirs);
                RemotingCommand b = decodeHead(ours);
                if (!a.getExtFields().equals(b.getExtFields()) || a.getCode() != b.getCode() || a.getOpaque() != b.getOpaque()
                    || theirs.readableBytes() != ours.readableBytes()) {
                    throw new IllegalStateException("outputs differ: " + a.getExtFields() + " / " + b.getExtFields());
                }
            } finally {
                theirs.release();
                ours.release();
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Decodes a frame head (prefix + header, body not included) with rocketmq-remoting. */
    static RemotingCommand decodeHead(ByteBuf head) throws Exception {
        ByteBuf b = head.duplicate();
        int headerLength = b.getInt(4) & 0xFFFFFF;
        ByteBuf only = b.slice(4, 4 + headerLength);
        return RemotingCommand.decode(only);
    }
}
