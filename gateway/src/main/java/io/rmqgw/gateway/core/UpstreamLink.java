package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.rmqgw.codec.frame.BodyChunk;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.metrics.ListenerMeters;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's upstream connection: where it stands ({@link SessionState}), the dial that opens it (the role's
 * targets in order, the first that connects used), what is written to it and when it is flushed, the body of a frame
 * streaming through, and what its answers tell (the broker's version). Dialed onto the client's event loop, which
 * owns every field here.
 */
final class UpstreamLink {

    private static final Logger log = LoggerFactory.getLogger(UpstreamLink.class);

    private final RelaySession session;
    private final RelayContext context;
    private final UpstreamRole role;
    private final ListenerMeters meters;
    private final ReadGate reads;
    private final StringBuilder connectFailures = new StringBuilder(64);
    private SessionState state = new SessionState.Accepted();
    /** The MQVersion ordinal on the connection's latest answer that set one; 0 while none did. */
    private int version;
    private boolean needsFlush;
    /**
     * The upstream that took the head of the frame now streaming through, so its body follows; null when none
     * streams or its body is discarded (the head was answered here, or that upstream is gone).
     */
    private Channel streamTo;
    /** Why the upstream connection ended, when it said so (a TLS refusal); for the answers it leaves owed. */
    private String ended;

    UpstreamLink(RelaySession session, RelayContext context, UpstreamRole role, ListenerMeters meters, ReadGate reads) {
        this.session = session;
        this.context = context;
        this.role = role;
        this.meters = meters;
        this.reads = reads;
    }

    SessionState state() {
        return state;
    }

    /** The connected upstream's channel, or null. */
    Channel channel() {
        return state instanceof SessionState.Connected c ? c.channel() : null;
    }

    /** The role has no upstream: the gateway serves every request. */
    void local() {
        state = state.local();
    }

    /** Dials the role's targets afresh (the first request, or one after the redial interval). */
    void dial() {
        connectFailures.setLength(0);
        dial(role.upstreamTargets(), 0);
    }

    private void dial(List<String> targets, int index) {
        if (state instanceof SessionState.Closed) {
            return;
        }
        if (index >= targets.size()) {
            unavailable(targets.isEmpty() ? "no upstream configured" : connectFailures.toString());
            return;
        }
        String target = targets.get(index);
        state = state.dialing(target);
        reads.dialing(true);
        role.upstreamDialing(target);
        context.dialer().dial(target, session.channel().eventLoop(), context.upstream().connectTimeoutMillis(),
            new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    ch.pipeline().addLast("meters", meters.upstreamHandler());
                    ch.pipeline().addLast("frames", new FrameDecoder(context.maxFrameLength()));
                    ch.pipeline().addLast("relay", new UpstreamSide(session));
                }
            }).addListener((ChannelFutureListener) f -> {
                if (state instanceof SessionState.Closed) {
                    role.upstreamResult(target, f.isSuccess()); // what the dial learned still counts for the next
                    f.channel().close();
                    return;
                }
                if (f.isSuccess()) {
                    role.upstreamResult(target, true);
                    state = state.connected(f.channel());
                    version = 0;
                    reads.upstream(f.channel());
                    session.dialSettled();
                    reads.dialing(false);
                } else {
                    role.upstreamResult(target, false);
                    if (connectFailures.length() > 0) {
                        connectFailures.append("; ");
                    }
                    connectFailures.append(role.describe(target)).append(" unreachable: ")
                        .append(Addresses.describe(f.cause()));
                    dial(targets, index + 1);
                }
            });
    }

    private void unavailable(String reason) {
        log.warn("client {}: {}", session.address(), reason);
        context.metrics().upstreamFailure(UpstreamFailure.CONNECT_FAILED);
        state = state.unavailable(reason, System.nanoTime());
        session.dialSettled();
        reads.dialing(false);
    }

    /** Writes {@code out} to the connected upstream, flushed with the burst. Takes ownership. */
    void write(Channel upstream, ByteBuf out) {
        upstream.write(out, upstream.voidPromise());
        needsFlush = true;
    }

    /** Writes {@code out} to the connected upstream and flushes at once (a request resent). Takes ownership. */
    void writeAndFlush(ByteBuf out) {
        Channel upstream = channel();
        if (upstream == null) {
            out.release();
            throw new IllegalStateException("no upstream connected");
        }
        upstream.writeAndFlush(out, upstream.voidPromise());
    }

    void flush() {
        if (needsFlush && state instanceof SessionState.Connected c) {
            needsFlush = false;
            c.channel().flush();
        }
    }

    /**
     * The bytes a handler returned for a streamed head: its length prefix made the whole frame's (the header may
     * have changed size), and the upstream noted as where the body goes.
     */
    ByteBuf headWithBody(ByteBuf out, int bodyLength, Channel upstream) {
        if (bodyLength > 0) {
            out.setInt(out.readerIndex(), out.readableBytes() - 4 + bodyLength);
            streamTo = upstream;
            context.metrics().frameStreamed();
        }
        return out;
    }

    /** A head not taken by an upstream (refused, answered here, dropped): its body is discarded as it arrives. */
    void headNotStreamed() {
        streamTo = null;
    }

    /** Body bytes of the frame streaming through: on to the upstream that took its head, or released. */
    void bodyChunk(BodyChunk chunk) {
        Channel to = streamTo;
        if (chunk.last()) {
            streamTo = null;
        }
        if (to != null && state instanceof SessionState.Connected c && c.channel() == to) {
            to.write(chunk.content(), to.voidPromise());
            needsFlush = true;
        } else {
            chunk.release();
        }
    }

    /** An answer arrived: what its version says of the broker. */
    void answered(int answerVersion) {
        if (answerVersion != 0) {
            version = answerVersion;
        }
    }

    int version() {
        return version;
    }

    /** How remarks name the connected upstream (or "upstream"). */
    String describe() {
        return state instanceof SessionState.Connected c ? role.describe(c.target()) : "upstream";
    }

    /** The upstream said why it ends (a TLS refusal). */
    void ended(String why) {
        this.ended = why;
    }

    /**
     * {@code upstream} closed: the reason its requests fail, or null when it is not this link's connection. Requests
     * still arriving before the client's close get this error, not a fresh dial.
     */
    String lost(Channel upstream) {
        if (!(state instanceof SessionState.Connected c) || c.channel() != upstream) {
            return null;
        }
        String reason = "connection to " + role.describe(c.target()) + " closed" + (ended == null ? "" : " (" + ended + ")");
        state = state.lost(reason, System.nanoTime());
        reads.upstream(null);
        return reason;
    }

    /** The client closed: so does the upstream connection. */
    void closed() {
        SessionState before = state;
        state = state.closed();
        if (before instanceof SessionState.Connected c) {
            c.channel().close();
        }
    }
}
