package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session's answers to its client's requests, each exactly once whoever gives it ({@link Exchange#answer}): now,
 * flushed with the read burst, while its filters or handlers treat it; later for a request its handler deferred
 * (a fan-out, a route answer waiting for its listeners), which stays in flight until then; held for
 * {@code rate-limits.refusal-delay} when a rate limit refused it. On the session's event loop.
 */
final class Replies {

    private static final Logger log = LoggerFactory.getLogger(Replies.class);

    private final RelaySession session;
    private final RelayContext context;
    private final ClientWrites writes;
    private final ClientInput input;
    /** Rate-limit refusals held {@code rate-limits.refusal-delay} before they are written. */
    private final HeldRefusals heldRefusals;
    /** Requests whose handler answers later; readable from any thread (the drain's count). */
    private volatile int deferredAnswers;

    Replies(RelaySession session, RelayContext context, ClientWrites writes, ClientInput input) {
        this.session = session;
        this.context = context;
        this.writes = writes;
        this.input = input;
        this.heldRefusals = new HeldRefusals(this, session);
    }

    /** Requests deferred by their handler and not answered yet; readable from any thread. */
    int deferred() {
        return Math.max(0, deferredAnswers);
    }

    /** Rate-limit refusals held; readable from any thread. */
    int heldRefusals() {
        return heldRefusals.count();
    }

    /** The drain writes every held refusal now: it waits for nothing the session itself holds back. */
    void writeHeldRefusals() {
        heldRefusals.writeAll();
    }

    /** The client closed: nothing is answered any more. */
    void releaseHeldRefusals() {
        heldRefusals.releaseAll();
        deferredAnswers = 0;
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
                if (!session.isClosed()) {
                    log.error("client {}: {} answered again; the second answer is dropped", session.address(), exchange);
                }
            }
        }
    }

    /** After its handler returned without an answer to write: a request neither answered nor oneway is answered later. */
    void deferUnlessAnswered(RequestExchange exchange) {
        RequestExchange.Phase phase = exchange.phase;
        if ((phase == RequestExchange.Phase.TREATED || phase == RequestExchange.Phase.RESPONDING) && !exchange.oneway()) {
            exchange.phase = RequestExchange.Phase.DEFERRED;
            deferredAnswers++;
        } else if (phase != RequestExchange.Phase.FORWARDED) {
            exchange.phase = RequestExchange.Phase.DONE;
        }
    }

    /**
     * The SYSTEM_BUSY answer to a request a rate limit refused, held {@code rate-limits.refusal-delay} before it is
     * written, so that a client retrying at once (as RocketMQ producers retry SYSTEM_BUSY) cannot spin: answered
     * once, when due, or at once when the delay is 0, {@value HeldRefusals#MAX_HELD} refusals are held already or the
     * gateway drains. Only this small answer is held (the request is the caller's to release); a oneway request is
     * dropped, logged at debug. On the event loop.
     */
    void answerRateLimited(RequestExchange exchange, String remark) {
        assert session.loop().inEventLoop() : "answerRateLimited off the session's event loop";
        if (exchange.phase == RequestExchange.Phase.DONE) {
            return;
        }
        exchange.phase = RequestExchange.Phase.DONE;
        if (exchange.oneway()) {
            log.debug("client {}: oneway request code {} dropped: {}", session.address(), exchange.code(), remark);
            return;
        }
        ByteBuf answer = Frames.errorResponse(session.alloc(), exchange.opaque(), exchange.answerEncoding(),
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
}
