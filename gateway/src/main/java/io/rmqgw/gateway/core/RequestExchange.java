package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCounted;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.metrics.GatewayMetrics;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The session's exchange: one per client request, from its arrival to its answer, and the entry of
 * {@link PendingRequests} while the upstream has it. Its {@link Phase} tells where the answer stands, so that
 * each request is answered exactly once whoever answers it (the upstream, the handler now or later, a timeout,
 * the drain). Fields are the session's event loop's.
 */
final class RequestExchange implements Exchange {

    /** Where the request's answer stands. */
    enum Phase {
        /** Its filters and handler treat it now. */
        TREATED,
        /** Forwarded upstream: the upstream's answer (or a timeout) is its answer. */
        FORWARDED,
        /** The upstream answered and the handler treats the answer now. */
        RESPONDING,
        /** Its handler answers it later ({@link Exchange#answer}). */
        DEFERRED,
        /** Answered (or given up with its connection). */
        DONE
    }

    private final RelaySession session;
    private final int opaque;
    private final int code;
    private final SerializeType encoding;
    private final boolean oneway;
    private final long startNanos;
    private final EdgeSettings edge;
    private RequestHandler handler = RequestHandler.PASS_THROUGH;
    private Object context;
    /** The header decoded for the exchange ({@link #header}), owned until forwarded or released. */
    private CommandHeader decoded;
    /** A request read while its upstream is dialed: waits here for {@link RelaySession} to go on with it. */
    private RemotingFrame waiting;
    Phase phase = Phase.TREATED;
    long sentNanos;
    long deadlineNanos;

    RequestExchange(RelaySession session, RemotingFrame request, long startNanos) {
        this.session = session;
        this.opaque = request.opaque();
        this.code = request.code();
        this.encoding = request.encoding();
        this.oneway = request.isOneway();
        this.startNanos = startNanos;
        this.edge = session.edge();
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
        return session;
    }

    @Override
    public EdgeSettings edge() {
        return edge;
    }

    @Override
    public GatewayMetrics metrics() {
        return session.metrics();
    }

    @Override
    public SerializeType answerEncoding() {
        return edge.towardClient(encoding, encoding);
    }

    @Override
    public void keep(Object kept) {
        this.context = kept;
    }

    @Override
    public Object kept() {
        return context;
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
        return session.reencodeForUpstream(request, header);
    }

    /** The header decoded for the exchange and not forwarded: released once the request was treated. */
    void releaseHeader() {
        if (decoded != null) {
            decoded.release();
            decoded = null;
        }
    }

    /** Keeps {@code request} while its upstream is dialed. */
    void hold(RemotingFrame request) {
        this.waiting = request;
    }

    /** The request held while dialing, now the caller's. */
    RemotingFrame takeHeld() {
        RemotingFrame r = waiting;
        waiting = null;
        return r;
    }

    @Override
    public ByteBuf forUpstream(RemotingFrame frame, CommandHeader decoded) {
        return session.reencodeForUpstream(frame, decoded);
    }

    @Override
    public ByteBuf forClient(RemotingFrame frame, CommandHeader decoded) {
        return session.reencodeForClient(frame, decoded, encoding);
    }

    @Override
    public ByteBuf rebuiltForClient(RemotingFrame frame, CommandHeader header) {
        return session.rebuildForClient(frame, header, encoding);
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
    public int upstreamVersion() {
        return session.upstreamVersion();
    }

    @Override
    public <T> Attribute<T> upstreamAttr(AttributeKey<T> key) {
        Channel upstream = session.upstreamChannel();
        return upstream == null ? null : upstream.attr(key);
    }

    @Override
    public void resend(ByteBuf request) {
        session.resend(this, request);
    }

    @Override
    public void answer(ByteBuf answer) {
        if (session.loop().inEventLoop()) {
            session.answer(this, answer);
        } else {
            session.loop().execute(() -> session.answer(this, answer));
        }
    }

    @Override
    public void answerError(int errorCode, String remark) {
        if (oneway) {
            return;
        }
        answer(Frames.errorResponse(alloc(), opaque, answerEncoding(), errorCode, remark));
    }

    @Override
    public void answerRateLimited(String remark) {
        session.answerRateLimited(this, remark);
    }

    RequestHandler handler() {
        return handler;
    }

    void handler(RequestHandler treatedBy) {
        this.handler = treatedBy;
    }

    long startNanos() {
        return startNanos;
    }

    /** Forwarded at {@code sent}: answered by the upstream before {@code deadline} or by the timeout scan. */
    void forwarded(long sent, long deadline) {
        this.phase = Phase.FORWARDED;
        this.sentNanos = sent;
        this.deadlineNanos = deadline;
    }

    /** The request ended without its handler taking back what it kept: a reference-counted one is released. */
    void releaseKept() {
        if (context instanceof ReferenceCounted kept) {
            context = null;
            kept.release();
        }
    }

    @Override
    public String toString() {
        return "request code " + code + " opaque " + opaque + " (" + phase + ")";
    }
}
