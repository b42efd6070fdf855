package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.edge.NameRefusal;
import io.rmqgw.gateway.edge.NameRule;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forwarding a client request to its broker with the edge's checks: names checked, a bad name
 * answered as the broker would and never forwarded, the header decoded at most once.
 */
final class Forwarding {

    private static final Logger log = LoggerFactory.getLogger(Forwarding.class);
    /** RocketMQ's ResponseCode.SYSTEM_BUSY: clients back off and retry. */
    private static final int SYSTEM_BUSY = 2;

    private Forwarding() {
    }

    /**
     * A request with a typed header (sends, pulls): when names are checked, topic labels are on or
     * the encoding changes, one decode serves all three (sends whose names can be checked on the bytes skip it:
     * see the last overload); otherwise the bytes go as they came. Takes ownership of {@code request}; null when
     * refused.
     */
    static <H extends CommandHeader> ByteBuf typed(RelaySession session, RemotingFrame request, Class<H> type,
                                                   BiFunction<H, EdgeSettings, NameRefusal> rule,
                                                   Function<H, String> topic) {
        return typed(session, request, type, rule, topic, null);
    }

    /**
     * As {@link #typed(RelaySession, RemotingFrame, Class, BiFunction, Function)}; {@code busy} (null: none)
     * looks at a request whose names passed and returns the remark of a SYSTEM_BUSY answer (the gateway's rate
     * limits), or null to forward it. Takes ownership of {@code request}; null when refused.
     */
    static <H extends CommandHeader> ByteBuf typed(RelaySession session, RemotingFrame request, Class<H> type,
                                                   BiFunction<H, EdgeSettings, NameRefusal> rule,
                                                   Function<H, String> topic, Function<H, String> busy) {
        return typed(session, request, type, rule, topic, busy, null);
    }

    /**
     * As {@link #typed(RelaySession, RemotingFrame, Class, BiFunction, Function, Function)}; {@code taken} (null:
     * none) sees a request that passed the names and limits and may take it instead of forwarding (coalescing):
     * true when it took ownership of the request and will answer the client; false leaves it to be forwarded.
     */
    static <H extends CommandHeader> ByteBuf typed(RelaySession session, RemotingFrame request, Class<H> type,
                                                   BiFunction<H, EdgeSettings, NameRefusal> rule,
                                                   Function<H, String> topic, Function<H, String> busy,
                                                   Predicate<H> taken) {
        return typed(session, request, type, rule, topic, busy, taken, null);
    }

    /**
     * As {@link #typed(RelaySession, RemotingFrame, Class, BiFunction, Function, Function, Predicate)};
     * {@code namesValidInFrame} (null: none) tells, without a typed header, that the request's names pass
     * (false: check them on the typed header). When nothing else needs the typed header (no topic labels,
     * limits or taker), a request it passes is re-encoded from the bytes alone, as an untyped request is:
     * the typed decode is most of what the edge adds to a send.
     */
    static <H extends CommandHeader> ByteBuf typed(RelaySession session, RemotingFrame request, Class<H> type,
                                                   BiFunction<H, EdgeSettings, NameRefusal> rule,
                                                   Function<H, String> topic, Function<H, String> busy,
                                                   Predicate<H> taken,
                                                   BiPredicate<RemotingFrame, NameValidator> namesValidInFrame) {
        EdgeSettings edge = session.edge();
        GatewayMetrics metrics = session.metrics();
        boolean sameEncoding = edge.upstreamEncoding() == null || edge.upstreamEncoding() == request.encoding();
        boolean headerUnneeded = !metrics.topicLabelsEnabled() && busy == null && taken == null;
        if (edge.names() == null && sameEncoding && headerUnneeded) {
            return request.content();
        }
        if (headerUnneeded && namesValidInFrame != null && (edge.names() == null || namesValid(request, edge,
            namesValidInFrame))) {
            return session.reencodeForUpstream(request, null);
        }
        CommandHeader decoded;
        try {
            decoded = HeaderTranscoder.decodeRequest(request);
        } catch (RuntimeException e) {
            // undecodable: released here, the pipeline closes the connection with a counted reason
            request.release();
            throw e;
        }
        if (type.isInstance(decoded)) {
            H header = type.cast(decoded);
            metrics.topicRequest(metrics.topicLabelsEnabled() ? topic.apply(header) : null, request.code());
            NameRefusal refusal = edge.names() == null ? null : rule.apply(header, edge);
            if (refusal != null) {
                decoded.release();
                refuse(session, request, refusal);
                return null;
            }
            String busyRemark = busy == null ? null : busy.apply(header);
            if (busyRemark != null) {
                decoded.release();
                answerBusy(session, request, busyRemark);
                return null;
            }
            boolean tookIt;
            try {
                tookIt = taken != null && taken.test(header);
            } catch (RuntimeException e) {
                decoded.release();
                request.release();
                throw e;
            }
            if (tookIt) {
                decoded.release();
                return null;
            }
        }
        return session.reencodeForUpstream(request, decoded);
    }

    /** {@code check} on the request; released when it throws (the pipeline closes the connection with a counted reason). */
    private static boolean namesValid(RemotingFrame request, EdgeSettings edge,
                                      BiPredicate<RemotingFrame, NameValidator> check) {
        try {
            return check.test(request, edge.names());
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
    }

    /** A request whose names sit in its extFields or body: checked by {@code rule}. Takes ownership; null when refused. */
    static ByteBuf checked(RelaySession session, RemotingFrame request, NameRule rule) {
        return checked(session, request, rule, null);
    }

    /**
     * As {@link #checked(RelaySession, RemotingFrame, NameRule)}; {@code accepted} (may be null) sees the
     * request once its names passed, before it is forwarded (it must not keep or release it).
     */
    static ByteBuf checked(RelaySession session, RemotingFrame request, NameRule rule, Consumer<RemotingFrame> accepted) {
        if (refusedName(session, request, rule)) {
            return null;
        }
        if (accepted != null) {
            try {
                accepted.accept(request);
            } catch (RuntimeException e) {
                request.release();
                throw e;
            }
        }
        return session.reencodeForUpstream(request, null);
    }

    /**
     * Whether {@code request} was refused for a bad name (then answered as a broker answers it and
     * released); when names are not checked or pass, the request stays the caller's. Released when the
     * check throws.
     */
    static boolean refusedName(RelaySession session, RemotingFrame request, NameRule rule) {
        EdgeSettings edge = session.edge();
        if (edge.names() == null) {
            return false;
        }
        NameRefusal refusal;
        try {
            refusal = rule.check(request, edge);
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
        if (refusal == null) {
            return false;
        }
        refuse(session, request, refusal);
        return true;
    }

    /**
     * Answers SYSTEM_BUSY with {@code remark}, held by the session's refusal delay (a oneway request is dropped,
     * logged at debug). Takes ownership.
     */
    private static void answerBusy(RelaySession session, RemotingFrame request, String remark) {
        try {
            if (request.isOneway()) {
                log.debug("client {}: oneway request code {} dropped: {}", session.clientAddress(), request.code(),
                    remark);
                return;
            }
            session.answerRateLimited(Frames.errorResponse(session.client().alloc(), request.opaque(),
                session.answerEncoding(request.encoding()), SYSTEM_BUSY, remark));
        } finally {
            request.release();
        }
    }

    /** Answers a request with a bad name as a broker would, and never forwards it. Takes ownership. */
    private static void refuse(RelaySession session, RemotingFrame request, NameRefusal refusal) {
        try {
            session.metrics().nameRejected(refusal.check());
            if (request.isOneway()) {
                log.warn("client {}: oneway request code {} refused: {}", session.clientAddress(), request.code(),
                    refusal.remark());
                return;
            }
            session.answerLocally(Frames.errorResponse(session.client().alloc(), request.opaque(),
                session.answerEncoding(request.encoding()), refusal.code(), refusal.remark()));
        } finally {
            request.release();
        }
    }
}
