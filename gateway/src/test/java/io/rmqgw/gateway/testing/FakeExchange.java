package io.rmqgw.gateway.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.gateway.core.ClientConnection;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.edge.HeaderReencoder;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.Wire;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * An {@link Exchange} without sockets, for handler and filter unit tests (as Kroxylicious' filter test support
 * does): what the handler answered, resent, kept and decoded is recorded; frames are real {@link RemotingFrame}s
 * decoded from wire bytes; a second answer fails the test. {@link #close()} releases what it recorded.
 */
public final class FakeExchange implements Exchange, AutoCloseable {

    private final EmbeddedChannel client = new EmbeddedChannel();
    private final EmbeddedChannel upstream = new EmbeddedChannel();
    private final GatewayMetrics metrics;
    private final EdgeSettings edge;
    private final int opaque;
    private final int code;
    private final SerializeType encoding;
    private final boolean oneway;
    private final List<ByteBuf> answers = new ArrayList<>();
    private final List<ByteBuf> resent = new ArrayList<>();
    private final List<String> rateLimited = new ArrayList<>();
    private Object kept;
    private CommandHeader decoded;
    private int upstreamVersion;
    private final Connection connection = new Connection();

    private FakeExchange(RemotingFrame request, EdgeSettings edge, GatewayMetrics metrics) {
        this.opaque = request.opaque();
        this.code = request.code();
        this.encoding = request.encoding();
        this.oneway = request.isOneway();
        this.edge = edge;
        this.metrics = metrics;
    }

    /** An exchange for {@code request} (not taken) with settings that change nothing. */
    public static FakeExchange of(RemotingFrame request) {
        return of(request, EdgeSettings.passThrough(), GatewayMetrics.inMemory());
    }

    public static FakeExchange of(RemotingFrame request, EdgeSettings edge, GatewayMetrics metrics) {
        return new FakeExchange(request, edge, metrics);
    }

    /** The frame {@code wire} bytes decode to (the caller's, to hand to a handler or release). */
    public static RemotingFrame frame(byte[] wire) {
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameDecoder(1 << 20));
        decoder.writeInbound(Unpooled.wrappedBuffer(wire));
        RemotingFrame frame = decoder.readInbound();
        decoder.finishAndReleaseAll();
        return frame;
    }

    /** The frame {@code buf} holds (taken). */
    public static RemotingFrame frame(ByteBuf buf) {
        try {
            byte[] bytes = new byte[buf.readableBytes()];
            buf.getBytes(buf.readerIndex(), bytes);
            return frame(bytes);
        } finally {
            buf.release();
        }
    }

    /** The answers given, parsed; each given at most once (the exchange fails the test on a second). */
    public List<Wire.Frame> answers() {
        return answers.stream().map(FakeExchange::parse).toList();
    }

    /** The bytes the handler resent upstream, parsed. */
    public List<Wire.Frame> resent() {
        return resent.stream().map(FakeExchange::parse).toList();
    }

    /** The remarks of rate-limit refusals. */
    public List<String> rateLimited() {
        return rateLimited;
    }

    public void upstreamVersion(int version) {
        this.upstreamVersion = version;
    }

    public static Wire.Frame parse(ByteBuf frame) {
        byte[] bytes = new byte[frame.readableBytes()];
        frame.getBytes(frame.readerIndex(), bytes);
        return Wire.parse(bytes);
    }

    @Override
    public int opaque() {
        return opaque;
    }

    @Override
    public int code() {
        return code;
    }

    @Override
    public SerializeType encoding() {
        return encoding;
    }

    @Override
    public boolean oneway() {
        return oneway;
    }

    @Override
    public ClientConnection client() {
        return connection;
    }

    @Override
    public EdgeSettings edge() {
        return edge;
    }

    @Override
    public GatewayMetrics metrics() {
        return metrics;
    }

    @Override
    public SerializeType answerEncoding() {
        return edge.towardClient(encoding, encoding);
    }

    @Override
    public void keep(Object context) {
        this.kept = context;
    }

    @Override
    public Object kept() {
        return kept;
    }

    @Override
    public <H extends CommandHeader> H header(RemotingFrame request, Class<H> type) {
        if (decoded == null) {
            try {
                decoded = HeaderTranscoder.decodeRequest(request);
            } catch (RuntimeException e) {
                request.release();
                throw e;
            }
        }
        return type.isInstance(decoded) ? type.cast(decoded) : null;
    }

    @Override
    public boolean headerDecoded() {
        return decoded != null;
    }

    @Override
    public ByteBuf forward(RemotingFrame request) {
        CommandHeader header = decoded;
        decoded = null;
        return forUpstream(request, header);
    }

    @Override
    public int upstreamVersion() {
        return upstreamVersion;
    }

    @Override
    public <T> Attribute<T> upstreamAttr(AttributeKey<T> key) {
        return upstream.attr(key);
    }

    @Override
    public void resend(ByteBuf request) {
        resent.add(request);
    }

    @Override
    public ByteBuf forUpstream(RemotingFrame frame, CommandHeader header) {
        return HeaderReencoder.reencode(client.alloc(), metrics, frame, header, edge.upstreamEncoding());
    }

    @Override
    public ByteBuf forClient(RemotingFrame frame, CommandHeader header) {
        return HeaderReencoder.reencode(client.alloc(), metrics, frame, header, clientTarget(frame.encoding()));
    }

    @Override
    public ByteBuf rebuiltForClient(RemotingFrame frame, CommandHeader header) {
        return HeaderReencoder.rebuild(client.alloc(), metrics, frame, header, clientTarget(frame.encoding()));
    }

    @Override
    public boolean reachesClientAsIs(RemotingFrame frame) {
        return clientTarget(frame.encoding()) == frame.encoding();
    }

    @Override
    public SerializeType clientTarget(SerializeType current) {
        return edge.towardClient(encoding, current);
    }

    @Override
    public void answer(ByteBuf answer) {
        if (!answers.isEmpty()) {
            answer.release();
            throw new AssertionError("answered twice: request code " + code + " opaque " + opaque);
        }
        if (oneway) {
            answer.release();
            return;
        }
        answers.add(answer);
    }

    @Override
    public void answerError(int errorCode, String remark) {
        if (!oneway) {
            answer(Frames.errorResponse(client.alloc(), opaque, answerEncoding(), errorCode, remark));
        }
    }

    @Override
    public void answerRateLimited(String remark) {
        rateLimited.add(remark);
        answerError(RemotingSysResponseCode.SYSTEM_BUSY, remark);
    }

    /** Releases what was recorded and a header still held. */
    @Override
    public void close() {
        answers.forEach(ByteBuf::release);
        resent.forEach(ByteBuf::release);
        if (decoded != null) {
            decoded.release();
        }
        if (kept instanceof ByteBuf b && b.refCnt() > 0) {
            b.release();
        }
        client.finishAndReleaseAll();
        upstream.finishAndReleaseAll();
    }

    /** The client connection: an embedded channel that is never written to. */
    private final class Connection implements ClientConnection {
        @Override
        public Channel channel() {
            return client;
        }

        @Override
        public String address() {
            return "127.0.0.1:50000";
        }

        @Override
        public SerializeType latestEncoding() {
            return encoding;
        }

        @Override
        public ByteBuf forClient(RemotingFrame frame, CommandHeader header) {
            return FakeExchange.this.forClient(frame, header);
        }

        @Override
        public ByteBuf rebuiltForClient(RemotingFrame frame, CommandHeader header) {
            return FakeExchange.this.rebuiltForClient(frame, header);
        }

        @Override
        public String idForLimits() {
            return "fake-client@127.0.0.1";
        }

        @Override
        public RateLimits.Source sourceForLimits() {
            return RateLimits.Source.of(new InetSocketAddress("127.0.0.1", 50000));
        }
    }
}
