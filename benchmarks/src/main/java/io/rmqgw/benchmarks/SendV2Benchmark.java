package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * A 4.9.7 client's JSON SEND_MESSAGE_V2 frame re-encoded as ROCKETMQ binary toward the broker.
 *
 * <ul>
 *   <li>{@code rocketmqRemoting}: rocketmq-remoting 5.4.0's {@code RemotingCommand.decode} (fastjson2 into
 *       a HashMap) + {@code fastEncodeHeader} in ROCKETMQ: what a rocketmq-remoting based proxy does per
 *       frame.</li>
 *   <li>{@code rocketmqRemotingFramed}, {@code rocketmqRemoting497Framed}: the same with the frame handed over as
 *       rocketmq-remoting's NettyDecoder hands it (a retained slice, released after the decode), the frame
 *       handling the gateway variants include for their own frame.</li>
 *   <li>{@code rocketmqRemoting497}: the same with rocketmq-remoting 4.9.7 (fastjson 1.2.69, netty 4.1.65,
 *       in its own class loader: {@link LegacyRemoting}), what 4.9.x clients and brokers run, on the same
 *       bytes.</li>
 *   <li>{@code gatewayEnvelope}: {@code FrameDecoder.parse} alone, the read every frame gets: for a JSON
 *       header that is the single pass that also transcodes it to binary.</li>
 *   <li>{@code gatewayFrame}: what the gateway does with a send when names are checked and nothing else
 *       needs a typed header (the default; {@code SendHandler}): {@code FrameDecoder.parse}, the topic and group
 *       name checks on the parse's binary form ({@code SendRequestHeader.namesValidInFrame}), the binary frame
 *       head written from it.</li>
 *   <li>{@code gatewayTyped}: the same through the typed header ({@code Forwarding.typed}: what a send gets
 *       when coalescing, rate limits or topic labels need its fields, or a binary or long-named one).</li>
 *   <li>{@code gatewayUntyped}: a frame re-encoded with no typed view (names not checked; offset
 *       updates, heartbeats): {@code FrameDecoder.parse} + {@code HeaderTranscoder.writeTranscodedHead}.</li>
 * </ul>
 * The body is never copied by the gateway (it is forwarded as a slice), while RemotingCommand.decode copies it
 * into a byte[]. JMH settings and the rocketmq-remoting variants: {@link TranscodeBenchmark}.
 */
public class SendV2Benchmark extends TranscodeBenchmark {

    @Param({"0", "4096"})
    public int bodySize;

    @Setup(Level.Trial)
    public void setUp() throws Throwable {
        byte[] body = bodySize == 0 ? null : new byte[bodySize];
        setUpFrame(Wire.frame(Wire.sendV2(body), SerializeType.JSON), SerializeType.ROCKETMQ);
        // sanity: both paths produce a frame rocketmq-remoting reads as the same command
        check();
    }

    @Benchmark
    public int gatewayEnvelope() {
        return (int) Wire.withFrame(wire, null, (none, frame) -> frame.code());
    }

    @Benchmark
    public int gatewayUntyped() {
        return (int) Wire.withFrame(wire, this, SendV2Benchmark::untyped);
    }

    @Benchmark
    public int gatewayFrame() {
        return (int) Wire.withFrame(wire, this, SendV2Benchmark::gateway);
    }

    @Benchmark
    public int gatewayTyped() {
        return (int) Wire.withFrame(wire, this, SendV2Benchmark::typed);
    }

    private int gateway(RemotingFrame frame) {
        if (!SendRequestHeader.namesValidInFrame(frame, NameValidator.DEFAULT)) {
            throw new IllegalStateException("names");
        }
        return untyped(frame);
    }

    private int untyped(RemotingFrame frame) {
        out.clear();
        return HeaderTranscoder.writeTranscodedHead(frame, SerializeType.ROCKETMQ, out);
    }

    private int typed(RemotingFrame frame) {
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

    private void check() throws Throwable {
        rocketmqRemoting();
        ByteBuf theirs = out.copy();
        rocketmqRemoting497();
        ByteBuf legacy = Unpooled.wrappedBuffer(legacyBytes());
        gatewayTyped();
        ByteBuf typed = out.copy();
        gatewayFrame();
        ByteBuf ours = out.copy();
        gatewayUntyped();
        ByteBuf untyped = out.copy();
        try {
            RemotingCommand a = decodeHead(theirs);
            RemotingCommand b = decodeHead(ours);
            RemotingCommand c = decodeHead(legacy);
            RemotingCommand d = decodeHead(untyped);
            RemotingCommand e = decodeHead(typed);
            for (RemotingCommand x : new RemotingCommand[] {b, c, d, e}) {
                if (!a.getExtFields().equals(x.getExtFields()) || a.getCode() != x.getCode() || a.getOpaque() != x.getOpaque()) {
                    throw new IllegalStateException("outputs differ: " + a.getExtFields() + " / " + x.getExtFields());
                }
            }
            if (theirs.readableBytes() != ours.readableBytes() || legacy.readableBytes() != ours.readableBytes()
                || typed.readableBytes() != ours.readableBytes()) {
                throw new IllegalStateException("output lengths differ: " + theirs.readableBytes() + " / "
                    + legacy.readableBytes() + " / " + ours.readableBytes());
            }
        } finally {
            theirs.release();
            legacy.release();
            ours.release();
            typed.release();
            untyped.release();
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
