package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests a session forwarded upstream and what answers them: the upstream's answer through the request's
 * handler, or the gateway's own when the upstream does not answer in time, its connection is lost, the client's
 * input ended long ago, or the gateway drains (long polls only). Also relays the requests the upstream sends the
 * client. On the session's event loop.
 */
final class UpstreamAnswers {

    private static final Logger log = LoggerFactory.getLogger(UpstreamAnswers.class);

    private final RelaySession session;
    private final RelayContext context;
    private final UpstreamRole role;
    private final UpstreamLink link;
    private final ClientWrites writes;
    private final ClientInput input;
    private final GatewayMetrics metrics;
    private final PendingRequests pending = new PendingRequests();

    UpstreamAnswers(RelaySession session, RelayContext context, UpstreamRole role, UpstreamLink link,
                    ClientWrites writes, ClientInput input) {
        this.session = session;
        this.context = context;
        this.role = role;
        this.link = link;
        this.writes = writes;
        this.input = input;
        this.metrics = context.metrics();
    }

    /** Requests awaiting their answer; readable from any thread. */
    int size() {
        return pending.size();
    }

    /** {@code exchange} went upstream: its answer (or its timeout) comes here. */
    void forwarded(RequestExchange exchange) {
        pending.add(exchange);
    }

    void fromUpstream(RemotingFrame frame) {
        // the upstream channel was dialed onto the client's loop: one loop owns both sides
        assert session.channel().eventLoop().inEventLoop() : "upstream frame off the session's event loop";
        ByteBuf out;
        boolean response = frame.isResponse();
        if (response) {
            RequestExchange p = pending.remove(frame.opaque());
            if (p == null) {
                // answered already (timed out) or never asked: nobody waits for it
                log.debug("client {}: dropping late or unknown response opaque {}", session.address(), frame.opaque());
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
                session.deferUnlessAnswered(p);
            } else {
                p.phase = RequestExchange.Phase.DONE;
            }
            metrics.requestCompleted(p.code(), result,
                (p.sentNanos - p.startNanos()) + (System.nanoTime() - received), received - p.sentNanos);
        } else {
            out = session.handlers().upstreamRequest(frame.code()).toClient(session, frame);
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

    /** The upstream connection closed with {@code reason}: every request it had gets SYSTEM_ERROR. */
    void lost(String reason) {
        List<RequestExchange> orphans = pending.drain();
        if (orphans.isEmpty()) {
            return;
        }
        metrics.upstreamFailure(UpstreamFailure.CONNECTION_LOST);
        for (RequestExchange p : orphans) {
            answerOwn(p, RemotingSysResponseCode.SYSTEM_ERROR, reason + " before answering request code " + p.code());
        }
    }

    /** Requests past their deadline get SYSTEM_BUSY naming the upstream; whether any did. */
    boolean expire() {
        if (pending.size() == 0) {
            return false;
        }
        List<RequestExchange> expired = pending.expire(System.nanoTime());
        if (expired.isEmpty()) {
            return false;
        }
        String target = link.describe();
        for (RequestExchange p : expired) {
            metrics.upstreamFailure(UpstreamFailure.TIMEOUT);
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - p.startNanos());
            answerOwn(p, RemotingSysResponseCode.SYSTEM_BUSY,
                target + " did not answer request code " + p.code() + " within " + waitedMillis + " ms");
        }
        return true;
    }

    /** Long polls that lose nothing by it get SYSTEM_BUSY with {@code remark} when the gateway drains. */
    void cutShortForDrain(String remark) {
        for (RequestExchange p : pending.removeIf(p -> p.handler().cutShortWhenDraining())) {
            answerOwn(p, RemotingSysResponseCode.SYSTEM_BUSY, remark);
        }
    }

    /** Answers still owed long after a malformed frame ended the client's input: each gets SYSTEM_ERROR. */
    void giveUpAfterMalformedFrame() {
        for (RequestExchange p : pending.drain()) {
            p.phase = RequestExchange.Phase.DONE;
            metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_ERROR);
            // past the bound of composed answers too: the connection closes after them
            session.channel().write(Frames.errorResponse(session.alloc(), p.opaque(), p.answerEncoding(),
                RemotingSysResponseCode.SYSTEM_ERROR, "request code " + p.code()
                    + " not answered in time; the gateway closes this connection after its malformed frame"),
                session.channel().voidPromise());
        }
    }

    /** The client closed: nothing is answered any more. */
    void drop() {
        pending.drain();
    }

    /** The gateway's own answer to a forwarded request that got none. */
    private void answerOwn(RequestExchange p, int code, String remark) {
        p.phase = RequestExchange.Phase.DONE;
        input.answered();
        metrics.requestAnswered(p.code(), code);
        writes.composed(Frames.errorResponse(session.alloc(), p.opaque(), p.answerEncoding(), code, remark));
    }
}
