package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's client requests on their way: each becomes an {@link Exchange}, passes the role's filters once, then
 * goes through its handler to the connected upstream, is served here (a role without upstream), waits for the dial
 * its arrival started, or is answered without an upstream. While the gateway drains, new requests get SYSTEM_BUSY.
 * On the session's event loop.
 */
final class ClientRequests {

    private static final Logger log = LoggerFactory.getLogger(ClientRequests.class);
    /** While no upstream answers, a request dials again at most this often; the rest get the error at once. */
    private static final long REDIAL_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final RelaySession session;
    private final RelayContext context;
    /** Whose table a request is dispatched by: read per request, since a reload may rebuild it. */
    private final UpstreamRole role;
    private final String roleLabel;
    private final UpstreamLink link;
    private final UpstreamAnswers answers;
    private final ClientWrites writes;
    private final ClientInput input;
    private final GatewayMetrics metrics;
    private final Channel client;
    private final String clientAddress;
    /**
     * Requests that need the upstream, read while a dial is under way: the one that started it and those read in
     * the same burst (the client is not read meanwhile: a frame too long to store whole could only stream).
     */
    private final ArrayDeque<RequestExchange> waiting = new ArrayDeque<>();

    ClientRequests(RelaySession session, RelayContext context, UpstreamRole role, UpstreamLink link,
                   UpstreamAnswers answers, ClientWrites writes, ClientInput input) {
        this.session = session;
        this.context = context;
        this.role = role;
        this.roleLabel = role.handlers().role().label();
        this.link = link;
        this.answers = answers;
        this.writes = writes;
        this.input = input;
        this.metrics = context.metrics();
        this.client = session.channel();
        this.clientAddress = session.address();
    }

    /** A frame read from the client (its decoder's output). */
    void read(RemotingFrame frame) {
        if (owesAnswer(frame)) {
            input.owe();
        }
        relay(frame);
    }

    /** Whether requests wait for a dial. */
    boolean waiting() {
        return !waiting.isEmpty();
    }

    /**
     * The gateway stops: requests read while a dial was under way never went upstream and get SYSTEM_BUSY.
     */
    void drainStarted() {
        for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
            waited.releaseHeader();
            waited.phase = RequestExchange.Phase.DONE;
            refuseDraining(waited.takeHeld());
        }
    }

    /** The client closed: what waits for the dial is released. */
    void closed() {
        for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
            waited.takeHeld().release();
            waited.releaseHeader();
        }
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
            session.failed(client, "client", e);
        }
        session.clientReadComplete();
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

    /**
     * Whether a large request streams through (asked by the client's frame decoder once its header arrived):
     * only a request with an answer, relayed now to a connected upstream by a handler that leaves its body as it
     * is. Everything else keeps being stored whole.
     */
    boolean mayStream(RemotingFrame head) {
        return streamsOpen() && !head.isOneway() && role.handlers().streams(head);
    }

    /** Whether any request could stream now: a first request, for one, waits for its dial and is stored whole. */
    boolean streamsOpen() {
        return link.state() instanceof SessionState.Connected && waiting.isEmpty() && !input.ended()
            && !input.draining(context.draining());
    }

    private void fromClient(RemotingFrame frame) {
        assert client.eventLoop().inEventLoop() : "client frame off the session's event loop";
        if (frame.isResponse()) {
            // the client's answer to a broker's request (check-back, running info)
            Channel upstream = link.channel();
            if (upstream != null) {
                link.write(upstream, session.reencodeForUpstream(frame, null));
            } else {
                log.debug("client {} answered opaque {} but its upstream is gone", clientAddress, frame.opaque());
                frame.release();
            }
            return;
        }
        if (input.draining(context.draining()) && !(frame.isOneway()
            && (link.state() instanceof SessionState.Connected || link.state() instanceof SessionState.Local))) {
            // a oneway holds nothing up and is still relayed; every other new request stays out of upstream
            refuseDraining(frame);
            return;
        }
        RequestExchange exchange = new RequestExchange(session, frame, System.nanoTime());
        HandlerTable handlers = role.handlers();
        exchange.handler(handlers.request(frame.code()));
        session.latestEncoding(frame.encoding());
        RemotingFrame admitted = filtered(handlers, exchange, frame);
        if (admitted != null) {
            proceed(exchange, admitted);
        } else {
            exchange.releaseHeader();
            session.deferUnlessAnswered(exchange);
        }
    }

    /**
     * The request after the role's filters for its code, in order, once per request (before any dial): null when
     * one answered, dropped or took it.
     */
    private RemotingFrame filtered(HandlerTable handlers, RequestExchange exchange, RemotingFrame frame) {
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
            session.deferUnlessAnswered(exchange);
        } else if (exchange.oneway()) {
            exchange.phase = RequestExchange.Phase.DONE;
            metrics.oneway(code);
            link.write(upstream, link.headWithBody(out, streamed, upstream));
        } else {
            long sent = System.nanoTime();
            UpstreamSettings settings = context.upstream();
            long timeout = handler.longPolling() ? settings.longPollTimeoutNanos() : settings.requestTimeoutNanos();
            exchange.forwarded(sent, sent + timeout);
            answers.forwarded(exchange);
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
                clientAddress, code, roleLabel);
            exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, roleLabel + " cannot serve request code " + code);
        }
        session.deferUnlessAnswered(exchange);
    }

    private void answerWithoutUpstream(RequestExchange exchange, RemotingFrame frame, String reason) {
        try {
            if (frame.isOneway()) {
                // a oneway request has no answer to carry the failure: say so by closing the connection
                log.warn("client {}: oneway request code {} dropped: {}", clientAddress, frame.code(), reason);
                context.metrics().connectionClosed(roleLabel, CloseReason.ONEWAY_WITHOUT_UPSTREAM);
                session.closeAfterBurst();
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
                answer = Frames.errorResponse(client.alloc(), frame.opaque(), session.answerEncoding(frame.encoding()),
                    RemotingSysResponseCode.SYSTEM_ERROR, reason);
            }
            writes.composed(answer);
            input.answered();
        } finally {
            frame.release();
        }
    }

    /** A request that arrived while the gateway drains: SYSTEM_BUSY at once, never upstream. Takes ownership. */
    private void refuseDraining(RemotingFrame frame) {
        if (frame.isOneway()) {
            log.debug("client {}: oneway request code {} dropped: the gateway is draining", clientAddress,
                frame.code());
            frame.release();
            return;
        }
        answerBusy(frame, RelaySession.DRAINING_REMARK);
    }

    /** Answers a request (not oneway) SYSTEM_BUSY with {@code remark}. Takes ownership. */
    private void answerBusy(RemotingFrame frame, String remark) {
        try {
            metrics.requestAnswered(frame.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            writes.composed(Frames.errorResponse(client.alloc(), frame.opaque(), session.answerEncoding(frame.encoding()),
                RemotingSysResponseCode.SYSTEM_BUSY, remark));
            input.answered();
        } finally {
            frame.release();
        }
    }
}
