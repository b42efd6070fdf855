package io.rmqgw.gateway.relay;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.BodyChunk;
import io.rmqgw.codec.frame.FrameBudgetExceededException;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.edge.HeaderUpgrade;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.ListenerMeters;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection and the upstream connection dialed for it (opaques pass through, so the
 * upstream's own requests reach this client). Both channels live on the client's event loop,
 * which owns every field here: no locks. Each request is treated by the handler its code is
 * registered with in the role's {@link HandlerTable}; unregistered codes pass through as the bytes
 * they arrived as. Where the upstream stands is a {@link SessionState}; reading on each side is
 * decided by the {@link ReadGate} alone, so a slow peer never grows the gateway's memory.
 */
public final class RelaySession implements ClientConnection {

    private static final Logger log = LoggerFactory.getLogger(RelaySession.class);
    /** While no upstream answers, a request dials again at most this often; the rest get the error at once. */
    private static final long REDIAL_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long REFUSAL_WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final AtomicLong lastRefusalWarnNanos = new AtomicLong(System.nanoTime() - REFUSAL_WARN_INTERVAL_NANOS);
    /** What a request gets once the gateway stops; RocketMQ clients retry SYSTEM_BUSY on another broker. */
    static final String DRAINING_REMARK = "rmqgw is draining (stopping); retry another address";

    private final RelayContext context;
    private final UpstreamRole role;
    private final HandlerTable handlers;
    private final ListenerMeters meters;
    private final GatewayMetrics metrics;
    private final Channel client;
    private final String clientAddress;
    /** The client's source address, as the address rate limits see it. */
    private final RateLimits.Source source;
    private final PendingRequests pending = new PendingRequests();
    /** The upstream connection: its state, dial, writes and what its answers tell. */
    private final UpstreamLink link;
    /** The timeouts' scan. */
    private final SessionSweep sweep;
    /** The client's input and the answers it is owed. */
    private final ClientInput input;
    /** What the session writes to its client: the bound on its own answers, flushes, the idle and unwritable clocks. */
    private final ClientWrites writes;
    /** Rate-limit refusals held {@code rate-limits.refusal-delay} before they are written. */
    private final HeldRefusals heldRefusals = new HeldRefusals(this);
    /**
     * Requests that need the upstream, read while a dial is under way: the one that started it and those read in
     * the same burst (the client is not read meanwhile: a frame too long to store whole could only stream).
     */
    private final ArrayDeque<RequestExchange> waiting = new ArrayDeque<>();
    private final ReadGate reads;
    /** The client's frame decoder: the sweep asks it how long its frame has been arriving. */
    private final FrameDecoder clientFrames;

    /** The header encoding of the client's latest request: what a mirroring answer uses. */
    private SerializeType clientEncoding;
    private boolean closeAfterBurst;
    /**
     * Requests whose handler took them without forwarding or answering at once: it answers later through
     * {@link Exchange#answer} (a fan-out, a route answer waiting for its listeners). In flight like pending ones.
     */
    private volatile int deferredAnswers;

    private RelaySession(RelayContext context, UpstreamRole role, ListenerMeters meters, Channel client) {
        this.context = context;
        this.role = role;
        this.handlers = role.handlers();
        this.meters = meters;
        this.metrics = context.metrics();
        this.client = client;
        this.clientAddress = Addresses.of(client.remoteAddress());
        this.source = RateLimits.Source.of(client.remoteAddress());
        this.reads = new ReadGate(client);
        this.input = new ClientInput(client);
        this.link = new UpstreamLink(this, context, role, meters, reads);
        this.sweep = new SessionSweep(this, client, context, reads, handlers.role().label());
        this.writes = new ClientWrites(client, context, metrics, handlers.role().label());
        this.clientFrames = client.pipeline().get(FrameDecoder.class);
    }

    /** The session of an accepted client channel, or null before it is active (tests and diagnostics). */
    static RelaySession of(Channel client) {
        ClientSide side = client.pipeline().get(ClientSide.class);
        return side == null ? null : side.session;
    }

    @Override
    public Channel channel() {
        return client;
    }

    @Override
    public String address() {
        return clientAddress;
    }

    /** Requests forwarded and not answered yet, and those a handler will answer later; readable from any thread. */
    int inFlight() {
        return pending.size() + Math.max(0, deferredAnswers) + heldRefusals.count();
    }

    /** Requests forwarded upstream and not answered yet (no deferred ones); readable from any thread. */
    int forwardedInFlight() {
        return pending.size();
    }

    /** Bytes queued to the client and not yet taken by its socket; readable from any thread. */
    long queuedBytes() {
        return writes.queuedBytes();
    }

    /** The state of this session's upstream (tests and diagnostics; exact on the event loop). */
    SessionState state() {
        return link.state();
    }

    @Override
    public SerializeType latestEncoding() {
        return clientEncoding;
    }

    @Override
    public ByteBuf forClient(RemotingFrame frame, CommandHeader decoded) {
        return reencodeForClient(frame, decoded, clientEncoding);
    }

    @Override
    public ByteBuf rebuiltForClient(RemotingFrame frame, CommandHeader header) {
        return rebuildForClient(frame, header, clientEncoding);
    }

    /** The encoding for the gateway's own answer to a request sent in {@code requestEncoding}. */
    private SerializeType answerEncoding(SerializeType requestEncoding) {
        return context.edge().towardClient(requestEncoding, requestEncoding);
    }

    /**
     * A client request's bytes in the upstream header encoding. Takes ownership of {@code frame}
     * and {@code decoded} (its header if the handler already decoded it, or null).
     */
    ByteBuf reencodeForUpstream(RemotingFrame frame, CommandHeader decoded) {
        return HeaderUpgrade.reencode(client.alloc(), metrics, frame, decoded, context.edge().upstreamEncoding());
    }

    /**
     * An upstream frame's bytes in the encoding this client should get; {@code requestEncoding} is
     * how the client sent the request being answered (or its latest request). Takes ownership of
     * {@code frame} and {@code decoded}.
     */
    ByteBuf reencodeForClient(RemotingFrame frame, CommandHeader decoded, SerializeType requestEncoding) {
        SerializeType target = context.edge().towardClient(requestEncoding, frame.encoding());
        return HeaderUpgrade.reencode(client.alloc(), metrics, frame, decoded, target);
    }

    /**
     * An upstream frame rebuilt with a changed {@code header}, in the encoding this client should
     * get. Takes ownership of {@code frame} and {@code header}.
     */
    ByteBuf rebuildForClient(RemotingFrame frame, CommandHeader header, SerializeType requestEncoding) {
        SerializeType target = context.edge().towardClient(requestEncoding, frame.encoding());
        return HeaderUpgrade.rebuild(client.alloc(), metrics, frame, header, target);
    }

    /**
     * {@code exchange}'s answer, exactly once (on the event loop): now, flushed with the read burst, while its
     * filters, handler or response handler treat it; flushed at once when its handler deferred it. A second answer,
     * or one to a request given up already (timed out, its connection closed), is released. Takes ownership.
     */
    void answer(RequestExchange exchange, ByteBuf answer) {
        switch (exchange.phase) {
            case TREATED, RESPONDING -> {
                exchange.phase = RequestExchange.Phase.DONE;
                if (exchange.oneway()) {
                    answer.release();
                    return;
                }
                writes.composed(answer);
                input.answered();
            }
            case DEFERRED -> {
                exchange.phase = RequestExchange.Phase.DONE;
                if (deferredAnswers > 0) {
                    deferredAnswers--;
                }
                writes.composed(answer);
                writes.flush();
                input.answered();
                input.closeIfAnswered();
            }
            case FORWARDED, DONE -> {
                answer.release();
                if (!(link.state() instanceof SessionState.Closed)) {
                    log.error("client {}: {} answered again; the second answer is dropped", clientAddress, exchange);
                }
            }
        }
    }

    /** After its handler returned without an answer to write: a request neither answered nor oneway is answered later. */
    private void deferUnlessAnswered(RequestExchange exchange) {
        RequestExchange.Phase phase = exchange.phase;
        if ((phase == RequestExchange.Phase.TREATED || phase == RequestExchange.Phase.RESPONDING) && !exchange.oneway()) {
            exchange.phase = RequestExchange.Phase.DEFERRED;
            deferredAnswers++;
        } else if (phase != RequestExchange.Phase.FORWARDED) {
            exchange.phase = RequestExchange.Phase.DONE;
        }
    }

    @Override
    public String idForLimits() {
        String id = context.clients().clientIdOf(client);
        return id != null ? id : "unidentified@" + source.ip();
    }

    @Override
    public RateLimits.Source sourceForLimits() {
        return source;
    }

    /**
     * The SYSTEM_BUSY answer to a request a rate limit refused, held {@code rate-limits.refusal-delay} before it is
     * written, so that a client retrying at once (as RocketMQ producers retry SYSTEM_BUSY) cannot spin: answered
     * once, when due, or at once when the delay is 0, {@value HeldRefusals#MAX_HELD} refusals are held already or the
     * gateway drains. Only this small answer is held (the request is the caller's to release); a oneway request is
     * dropped, logged at debug. On the event loop.
     */
    void answerRateLimited(RequestExchange exchange, String remark) {
        assert client.eventLoop().inEventLoop() : "answerRateLimited off the session's event loop";
        if (exchange.phase == RequestExchange.Phase.DONE) {
            return;
        }
        exchange.phase = RequestExchange.Phase.DONE;
        if (exchange.oneway()) {
            log.debug("client {}: oneway request code {} dropped: {}", clientAddress, exchange.code(), remark);
            return;
        }
        ByteBuf answer = Frames.errorResponse(client.alloc(), exchange.opaque(), exchange.answerEncoding(),
            RemotingSysResponseCode.SYSTEM_BUSY, remark);
        if (!heldRefusals.hold(answer, context.rateLimits().refusalDelayNanos(), context.draining())) {
            writes.composed(answer);
            input.answered();
        }
    }

    /** A held refusal written by the drain (flushed with it). */
    void heldRefusalWritten(ByteBuf answer) {
        writes.composed(answer);
        input.answered();
    }

    /** A held refusal's delay is over: written and flushed. */
    void heldRefusalDue(ByteBuf answer) {
        heldRefusalWritten(answer);
        writes.flush();
        input.closeIfAnswered();
    }

    /** The settings this session's frames are treated with (current at the time of the call). */
    EdgeSettings edge() {
        return context.edge();
    }

    GatewayMetrics metrics() {
        return metrics;
    }

    // ---- drain ----

    /**
     * The gateway stops (on this session's loop, after {@link RelayContext#draining()} turned true): requests
     * read while a dial was under way never went upstream and get SYSTEM_BUSY, and so do long polls that
     * lose nothing by it; requests already upstream are left to finish.
     */
    void drainStarted() {
        // held rate-limit refusals go out now: the drain waits for nothing the session itself holds back
        heldRefusals.writeAll();
        for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
            waited.releaseHeader();
            waited.phase = RequestExchange.Phase.DONE;
            refuseDraining(waited.takeHeld());
        }
        for (RequestExchange p : pending.removeIf(p -> p.handler().cutShortWhenDraining())) {
            p.phase = RequestExchange.Phase.DONE;
            metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            writes.composed(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                RemotingSysResponseCode.SYSTEM_BUSY, DRAINING_REMARK));
            input.answered();
        }
        writes.flush();
    }

    /** A request that arrived while the gateway drains: SYSTEM_BUSY at once, never upstream. Takes ownership. */
    private void refuseDraining(RemotingFrame frame) {
        if (frame.isOneway()) {
            log.debug("client {}: oneway request code {} dropped: the gateway is draining", clientAddress,
                frame.code());
            frame.release();
            return;
        }
        answerBusy(frame, DRAINING_REMARK);
    }

    /** Answers a request (not oneway) SYSTEM_BUSY with {@code remark}. Takes ownership. */
    private void answerBusy(RemotingFrame frame, String remark) {
        try {
            metrics.requestAnswered(frame.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            writes.composed(Frames.errorResponse(client.alloc(), frame.opaque(), answerEncoding(frame.encoding()),
                RemotingSysResponseCode.SYSTEM_BUSY, remark));
            input.answered();
        } finally {
            frame.release();
        }
    }

    /** Closes the client once what is queued to it is written (the upstream closes with it). */
    void closeAfterWrites(String reason) {
        client.eventLoop().execute(() -> {
            log.debug("closing {}: {}", clientAddress, reason);
            writes.flush();
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        });
    }

    // ---- upstream dialing ----

    /** The session of a client connection now active: registered, its timeouts watched, nothing dialed yet. */
    static RelaySession start(RelayContext context, UpstreamRole role, ListenerMeters meters, Channel client) {
        RelaySession session = new RelaySession(context, role, meters, client);
        session.start();
        return session;
    }

    /** A frame read from the client (its decoder's output). */
    void read(RemotingFrame frame) {
        if (owesAnswer(frame)) {
            input.owe();
        }
        relay(frame);
    }

    /** The client's frame decoder: the sweep asks it how long its frame has been arriving. */
    FrameDecoder clientFrames() {
        return clientFrames;
    }

    /** Whether a malformed frame ended the client's input: nothing more is relayed. */
    boolean inputEnded() {
        return input.ended();
    }

    /** A head not taken by an upstream (refused, answered here, dropped): its body is discarded as it arrives. */
    void headNotStreamed() {
        link.headNotStreamed();
    }

    /** The client connection closed: so does the upstream one. */
    void clientClosed() {
        closed();
    }

    void upstreamReadComplete() {
        writes.flush();
        input.closeIfAnswered();
    }

    void upstreamWritabilityChanged() {
        if (!(link.state() instanceof SessionState.Closed)) {
            reads.upstreamWritabilityChanged();
        }
    }

    private void start() {
        context.register(this);
        sweep.start();
        if (role.local()) {
            link.local();
        }
        // nothing is dialed before the client's first request needs it: idle clients hold no upstream
        reads.dialing(false);
    }

    /**
     * Treats the requests read while dialing, once the dial settled (outside any read burst, so this
     * flushes and closes as a burst's end would). A frame that cannot be decoded closes the connection
     * as it would have in the pipeline.
     */
    void dialSettled() {
        try {
            for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
                RemotingFrame frame = waited.takeHeld();
                boolean owed = owesAnswer(frame);
                try {
                    proceed(waited, frame);
                } catch (RuntimeException e) {
                    if (owed) {
                        input.answered();
                    }
                    throw e;
                }
            }
        } catch (RuntimeException e) {
            // the frames read after the one that failed are dropped, as they would have been in the pipeline
            for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
                RemotingFrame frame = waited.takeHeld();
                if (owesAnswer(frame)) {
                    input.answered();
                }
                frame.release();
                waited.releaseHeader();
            }
            failed(client, "client", e);
        }
        clientReadComplete();
    }

    /** {@link #fromClient} for a frame already counted in {@link ClientInput#owed}: one that fails is owed nothing. */
    private void relay(RemotingFrame frame) {
        boolean owed = owesAnswer(frame);
        try {
            fromClient(frame);
        } catch (RuntimeException e) {
            if (owed) {
                input.answered();
            }
            throw e;
        }
    }

    private static boolean owesAnswer(RemotingFrame frame) {
        return !frame.isResponse() && !frame.isOneway();
    }

    // ---- client -> upstream ----

    /** Body bytes of the frame streaming through: on to the upstream that took its head, or released. */
    void bodyChunk(BodyChunk chunk) {
        link.bodyChunk(chunk);
    }

    /**
     * Whether a large request streams through (asked by the client's frame decoder once its header arrived):
     * only a request with an answer, relayed now to a connected upstream by a handler that leaves its body as it
     * is. Everything else keeps being stored whole.
     */
    boolean mayStream(RemotingFrame head) {
        return streamsOpen() && !head.isOneway() && handlers.streams(head);
    }

    /** Whether any request could stream now: a first request, for one, waits for its dial and is stored whole. */
    boolean streamsOpen() {
        return link.state() instanceof SessionState.Connected && waiting.isEmpty() && !input.ended() && !context.draining();
    }

    private void fromClient(RemotingFrame frame) {
        assert client.eventLoop().inEventLoop() : "client frame off the session's event loop";
        if (frame.isResponse()) {
            // the client's answer to a broker's request (check-back, running info)
            Channel upstream = link.channel();
            if (upstream != null) {
                link.write(upstream, reencodeForUpstream(frame, null));
            } else {
                log.debug("client {} answered opaque {} but its upstream is gone", clientAddress, frame.opaque());
                frame.release();
            }
            return;
        }
        if (context.draining() && !(frame.isOneway()
            && (link.state() instanceof SessionState.Connected || link.state() instanceof SessionState.Local))) {
            // a oneway holds nothing up and is still relayed; every other new request stays out of upstream
            refuseDraining(frame);
            return;
        }
        RequestExchange exchange = new RequestExchange(this, frame, System.nanoTime());
        exchange.handler(handlers.request(frame.code()));
        clientEncoding = frame.encoding();
        RemotingFrame admitted = filtered(exchange, frame);
        if (admitted != null) {
            proceed(exchange, admitted);
        } else {
            exchange.releaseHeader();
            deferUnlessAnswered(exchange);
        }
    }

    /**
     * The request after the role's filters for its code, in order, once per request (before any dial): null when
     * one answered, dropped or took it.
     */
    private RemotingFrame filtered(RequestExchange exchange, RemotingFrame frame) {
        RemotingFrame request = frame;
        for (RequestFilter filter : handlers.filters(frame.code())) {
            try {
                request = filter.filter(exchange, request);
            } catch (RuntimeException e) {
                exchange.releaseHeader();
                throw e;
            }
            if (request == null) {
                return null;
            }
        }
        return request;
    }

    /** A request its filters admitted: to the upstream through its handler, served here, or waiting for a dial. */
    private void proceed(RequestExchange exchange, RemotingFrame frame) {
        int streamed = frame.streamedBodyLength();
        boolean waits = false;
        SessionState state = link.state();
        try {
            if (state instanceof SessionState.Connected c) {
                forward(c.channel(), exchange, frame, streamed);
            } else if (streamed > 0) {
                // a head is offered only while connected: its body cannot wait for a dial
                answerWithoutUpstream(exchange, frame, "no upstream connection for a request streaming through");
            } else if (state instanceof SessionState.Local) {
                serveLocally(exchange, frame);
            } else if (state instanceof SessionState.Accepted) {
                // the first request that needs the upstream: it waits for the dial, like the ones read with it
                waits = waitForDial(exchange, frame);
                link.dial();
            } else if (state instanceof SessionState.Unavailable u) {
                if (System.nanoTime() - u.sinceNanos() >= REDIAL_INTERVAL_NANOS) {
                    // the upstream may be back: this request waits for a fresh dial, like the first one did
                    waits = waitForDial(exchange, frame);
                    link.dial();
                } else {
                    answerWithoutUpstream(exchange, frame, u.reason());
                }
            } else if (state instanceof SessionState.Connecting) {
                waits = waitForDial(exchange, frame);
            } else {
                exchange.phase = RequestExchange.Phase.DONE;
                frame.release();
            }
        } finally {
            if (!waits) {
                exchange.releaseHeader();
            }
        }
    }

    private boolean waitForDial(RequestExchange exchange, RemotingFrame frame) {
        exchange.hold(frame);
        waiting.add(exchange);
        return true;
    }

    /** The request's handler gives the bytes for {@code upstream} (or answers it): sent, and pending if answered. */
    private void forward(Channel upstream, RequestExchange exchange, RemotingFrame frame, int streamed) {
        RequestHandler handler = exchange.handler();
        int code = exchange.code();
        ByteBuf out = handler.toUpstream(exchange, frame);
        if (out == null) {
            deferUnlessAnswered(exchange);
        } else if (exchange.oneway()) {
            exchange.phase = RequestExchange.Phase.DONE;
            metrics.oneway(code);
            link.write(upstream, link.headWithBody(out, streamed, upstream));
        } else {
            long sent = System.nanoTime();
            UpstreamSettings settings = context.upstream();
            long timeout = handler.longPolling() ? settings.longPollTimeoutNanos() : settings.requestTimeoutNanos();
            exchange.forwarded(sent, sent + timeout);
            pending.add(exchange);
            link.write(upstream, link.headWithBody(out, streamed, upstream));
        }
    }

    /**
     * A role without upstream: the handler answers (now or later through {@link Exchange#answer}).
     */
    private void serveLocally(RequestExchange exchange, RemotingFrame frame) {
        int code = frame.code();
        ByteBuf out = exchange.handler().toUpstream(exchange, frame);
        if (out != null) {
            // a handler that answers alone forwarded: there is nowhere to forward to
            out.release();
            log.error("client {}: handler of request code {} forwarded on {} a request it answers alone",
                clientAddress, code, handlers.role().label());
            exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, handlers.role().label() + " cannot serve request code " + code);
        }
        deferUnlessAnswered(exchange);
    }

    private void answerWithoutUpstream(RequestExchange exchange, RemotingFrame frame, String reason) {
        try {
            if (frame.isOneway()) {
                // a oneway request has no answer to carry the failure: say so by closing the connection
                log.warn("client {}: oneway request code {} dropped: {}", clientAddress, frame.code(), reason);
                context.metrics().connectionClosed(handlers.role().label(), CloseReason.ONEWAY_WITHOUT_UPSTREAM);
                closeAfterBurst = true;
                return;
            }
            long start = System.nanoTime();
            exchange.phase = RequestExchange.Phase.DONE;
            ByteBuf answer = exchange.handler().answerWithoutUpstream(exchange, frame, reason);
            if (answer != null) {
                metrics.requestCompleted(frame.code(), RemotingSysResponseCode.SUCCESS, System.nanoTime() - start, -1);
            } else {
                metrics.requestAnswered(frame.code(), RemotingSysResponseCode.SYSTEM_ERROR);
                // the connection stays open: clients retry on it at once, and a close would lose that retry
                answer = Frames.errorResponse(client.alloc(), frame.opaque(), answerEncoding(frame.encoding()),
                    RemotingSysResponseCode.SYSTEM_ERROR, reason);
            }
            writes.composed(answer);
            input.answered();
        } finally {
            frame.release();
        }
    }

    /** The client's write buffer crossed a water mark: reads follow, and the unwritable clock starts or stops. */
    void clientWritabilityChanged() {
        writes.writabilityChanged();
        reads.clientWritabilityChanged();
    }

    void clientReadComplete() {
        writes.active();
        link.flush();
        writes.flush();
        if (closeAfterBurst) {
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
        input.closeIfAnswered();
    }

    // ---- upstream -> client ----

    void fromUpstream(RemotingFrame frame) {
        // the upstream channel was dialed onto the client's loop: one loop owns both sides
        assert client.eventLoop().inEventLoop() : "upstream frame off the session's event loop";
        ByteBuf out;
        boolean response = frame.isResponse();
        if (response) {
            RequestExchange p = pending.remove(frame.opaque());
            if (p == null) {
                // answered already (timed out) or never asked: nobody waits for it
                log.debug("client {}: dropping late or unknown response opaque {}", clientAddress, frame.opaque());
                frame.release();
                return;
            }
            link.answered(frame.version());
            long received = System.nanoTime();
            int result = frame.code();
            p.phase = RequestExchange.Phase.RESPONDING;
            out = p.handler().onResponse(p, frame);
            if (p.phase == RequestExchange.Phase.FORWARDED) {
                return; // sent again by its handler: the next answer is the client's
            }
            role.upstreamAnswered();
            if (out == null) {
                deferUnlessAnswered(p);
            } else {
                p.phase = RequestExchange.Phase.DONE;
            }
            metrics.requestCompleted(p.code(), result,
                (p.sentNanos - p.startNanos()) + (System.nanoTime() - received), received - p.sentNanos);
        } else {
            out = handlers.upstreamRequest(frame.code()).toClient(this, frame);
        }
        if (out != null) {
            writes.relayed(out);
            if (response) {
                input.answered();
            }
        }
    }

    /** {@link Exchange#resend}: on the event loop, from the request's response handler. Takes ownership. */
    void resend(RequestExchange exchange, ByteBuf request) {
        if (exchange.phase != RequestExchange.Phase.RESPONDING || link.channel() == null) {
            request.release();
            throw new IllegalStateException("resend of " + exchange + " outside its response handler");
        }
        long sent = System.nanoTime();
        exchange.forwarded(sent, sent + (exchange.deadlineNanos - exchange.sentNanos));
        pending.add(exchange);
        link.writeAndFlush(request);
    }

    int upstreamVersion() {
        return link.version();
    }

    /** The connected upstream's channel, or null. */
    Channel upstreamChannel() {
        return link.channel();
    }

    void upstreamLost(Channel upstream) {
        String reason = link.lost(upstream);
        if (reason == null) {
            return;
        }
        // counted before any answer goes out: whoever reads the answers may look at the metric next
        context.metrics().connectionClosed(handlers.role().label(), CloseReason.UPSTREAM_CLOSED);
        List<RequestExchange> orphans = pending.drain();
        try {
            if (!orphans.isEmpty()) {
                context.metrics().upstreamFailure(UpstreamFailure.CONNECTION_LOST);
                for (RequestExchange p : orphans) {
                    p.phase = RequestExchange.Phase.DONE;
                    input.answered();
                    metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_ERROR);
                    writes.composed(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                        RemotingSysResponseCode.SYSTEM_ERROR, reason + " before answering request code " + p.code()));
                }
            }
        } finally {
            // an answer that could not be allocated still closes the client, which then knows its requests failed
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** The sweep's due checks of the session's own: overdue answers, the client's write and idle clocks, timeouts. */
    void timeoutsDue() {
        closeIfAnswersAreOverdue();
        writes.closeIfUnwritableTooLong();
        if (writes.idleTooLong()) {
            idle();
        }
        if (pending.size() == 0) {
            return;
        }
        List<RequestExchange> expired = pending.expire(System.nanoTime());
        if (expired.isEmpty()) {
            return;
        }
        String target = link.describe();
        for (RequestExchange p : expired) {
            p.phase = RequestExchange.Phase.DONE;
            input.answered();
            context.metrics().upstreamFailure(UpstreamFailure.TIMEOUT);
            metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - p.startNanos());
            writes.composed(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                RemotingSysResponseCode.SYSTEM_BUSY,
                target + " did not answer request code " + p.code() + " within " + waitedMillis + " ms"));
        }
        writes.flush();
        input.closeIfAnswered();
    }

    /**
     * No traffic either way for {@code downstream.idle-timeout} (as brokers close all-idle connections): closed unless
     * a request is still in flight (a consumer waiting on a long poll gets its answer within it).
     */
    private void idle() {
        if (pending.size() > 0 || !waiting.isEmpty() || deferredAnswers > 0) {
            return;
        }
        log.info("closing client {}: no traffic for {}", clientAddress, context.downstream().idleTimeout());
        metrics.connectionClosed(handlers.role().label(), CloseReason.IDLE);
        client.close();
    }

    private void closed() {
        link.closed();
        sweep.stop();
        pending.drain();
        deferredAnswers = 0;
        heldRefusals.releaseAll();
        for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
            waited.takeHeld().release();
            waited.releaseHeader();
        }
        context.unregister(this);
    }

    void failed(Channel channel, String side, Throwable cause) {
        String tlsRefusal = channel == client ? null : Dialer.tlsRefusal(cause);
        if (cause instanceof MalformedFrameException m) {
            boolean answersOwed = channel == client && input.owed() > 0;
            PeerCloses.logClose(context.peerCloseLog(), side, channel, m.getMessage(), answersOwed);
            context.metrics().decodeError(m.reason());
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.MALFORMED_FRAME);
            if (channel == client) {
                input.end();
                return;
            }
        } else if (cause instanceof FrameBudgetExceededException b && channel == client) {
            PeerCloses.logClose(context.peerCloseLog(), side, channel, "downstream.incomplete-frame-budget: " + b.getMessage(), input.owed() > 0);
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.INCOMPLETE_FRAME_BUDGET);
            input.end();
            return;
        } else if (AllocationFailures.isAllocationFailure(cause)) {
            // Netty closes a channel whose read found no memory; any other allocation closes it here. The others go on.
            context.allocationFailures().record();
            PeerCloses.logClose(context.peerCloseLog(), side, channel, "no memory for it: " + cause, false);
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.ALLOCATION_FAILED);
        } else if (tlsRefusal != null) {
            link.ended(tlsRefusal);
            log.warn("client {}: upstream {}: {}", clientAddress, Addresses.of(channel.remoteAddress()), tlsRefusal);
        } else if (cause instanceof IOException) {
            log.debug("{} connection {}: {}", side, Addresses.of(channel.remoteAddress()), cause.toString());
        } else {
            log.warn("closing {} connection {}", side, Addresses.of(channel.remoteAddress()), cause);
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.INTERNAL_ERROR);
        }
        channel.close();
    }

    /** Answers still owed long after the client's input ended: each gets SYSTEM_ERROR, then the close. */
    private void closeIfAnswersAreOverdue() {
        if (!input.overdue(context.upstream().requestTimeoutNanos())) {
            return;
        }
        for (RequestExchange p : pending.drain()) {
            p.phase = RequestExchange.Phase.DONE;
            metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_ERROR);
            client.write(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                RemotingSysResponseCode.SYSTEM_ERROR, "request code " + p.code()
                    + " not answered in time; the gateway closes this connection after its malformed frame"),
                client.voidPromise());
        }
        input.answeredAll();
        input.closeIfAnswered();
    }

}
