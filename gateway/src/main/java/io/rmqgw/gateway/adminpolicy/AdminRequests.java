package io.rmqgw.gateway.adminpolicy;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.config.AdminRequestsConfig;
import io.rmqgw.gateway.relay.LogRateLimiter;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;
import io.rmqgw.metrics.GatewayMetrics;
import java.time.Duration;
import java.util.Objects;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin-request policy of one gateway ({@code admin-requests}): which request codes clients may send through it
 * to name servers and brokers. It stands in front of the handler of every code no handler registered on the
 * name-server and broker ports ({@link #guard}; the registered codes are client traffic, see
 * {@code HandlerTablesAdminPolicyTest}), so sends, pulls and every other registered code never pass here. A refused
 * request is answered NO_PERMISSION (16) with a remark naming the setting that would allow it, never forwarded;
 * a refused oneway is dropped. Each is counted ({@code rmqgw_admin_requests_refused_total{kind}}, and
 * {@code rmqgw_requests_total{code,result="NO_PERMISSION"}}) and logged at WARN, at most 10 lines per 10 s.
 */
public final class AdminRequests {

    private static final Logger log = LoggerFactory.getLogger(AdminRequests.class);

    private final GatewayMetrics metrics;
    private final LogRateLimiter refusalLog = new LogRateLimiter(10, Duration.ofSeconds(10));
    private volatile AdminPolicy policy;

    public AdminRequests(AdminRequestsConfig config, GatewayMetrics metrics) {
        this.metrics = metrics;
        this.policy = new AdminPolicy(config);
    }

    /** The policy in force. */
    public AdminPolicy policy() {
        return policy;
    }

    /** Applies reloaded settings to every later request; whether they changed. */
    public boolean apply(AdminRequestsConfig config) {
        if (policy.config().equals(config)) {
            return false;
        }
        policy = new AdminPolicy(config);
        log.info("admin-requests: allow-all {}, allow-from {}, allow-unknown-codes {}", config.allowAll(),
            config.allowFrom(), config.allowUnknownCodes());
        return true;
    }

    /** {@code delegate} (the pass-through fallback of a role's handler table) behind this policy. */
    public RequestHandler guard(RequestHandler delegate) {
        return new Guard(Objects.requireNonNull(delegate, "delegate"));
    }

    /** Answers (or drops, when oneway) a refused request, counts and logs it. Takes ownership. */
    private void refuse(RelaySession session, RemotingFrame request, RequestKind kind, AdminPolicy in) {
        try {
            int code = request.code();
            RequestKinds.Entry entry = RequestKinds.entry(code);
            String name = entry == null ? "code " + code : code + " (" + entry.name() + ")";
            metrics.adminRequestRefused(kind.label());
            long suppressed = refusalLog.tryAcquire();
            if (suppressed != LogRateLimiter.SUPPRESS) {
                log.warn("client {} on {}: {}request {} refused: it {} ({} allows it){}", session.clientAddress(),
                    session.client().localAddress(), request.isOneway() ? "oneway " : "", name, kind.description(),
                    in.settingToAllow(kind), suppressed > 0 ? " (" + suppressed + " more such lines suppressed;"
                        + " rmqgw_admin_requests_refused_total counts each)" : "");
            }
            if (request.isOneway()) {
                return;
            }
            metrics.requestAnswered(code, ResponseCode.NO_PERMISSION);
            session.answerLocally(Frames.errorResponse(session.client().alloc(), request.opaque(),
                session.answerEncoding(request.encoding()), ResponseCode.NO_PERMISSION,
                "rmqgw refuses request code " + name + ": it " + kind.description() + "; " + in.settingToAllow(kind)
                    + " allows it"));
        } finally {
            request.release();
        }
    }

    /** The policy's check in front of a handler. */
    private final class Guard implements RequestHandler {

        private final RequestHandler delegate;

        Guard(RequestHandler delegate) {
            this.delegate = delegate;
        }

        @Override
        public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
            RequestKind kind = RequestKinds.of(request.code());
            AdminPolicy in = policy;
            if (in.allows(kind, session.client().remoteAddress())) {
                return delegate.toUpstream(session, request);
            }
            refuse(session, request, kind, in);
            return null;
        }

        /**
         * A code refused from every address is answered at once, without dialing an upstream. (A reload that allows
         * it between this and {@link #toUpstream} leaves that one request answered SYSTEM_ERROR by the session.)
         */
        @Override
        public boolean answersAlone(RemotingFrame request) {
            return policy.refusesEveryone(RequestKinds.of(request.code())) || delegate.answersAlone(request);
        }

        @Override
        public boolean streamsBody(RelaySession session, RemotingFrame head) {
            // a refused head has its body released unread as it arrives
            return delegate.streamsBody(session, head);
        }

        @Override
        public Object requestContext(RemotingFrame request) {
            return delegate.requestContext(request);
        }

        @Override
        public ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response,
                                  org.apache.rocketmq.remoting.protocol.SerializeType requestEncoding) {
            return delegate.onResponse(session, requestCode, context, response, requestEncoding);
        }

        @Override
        public boolean longPolling() {
            return delegate.longPolling();
        }

        @Override
        public boolean cutShortWhenDraining() {
            return delegate.cutShortWhenDraining();
        }

        @Override
        public ByteBuf answerWithoutUpstream(RelaySession session, RemotingFrame request, String reason) {
            return delegate.answerWithoutUpstream(session, request, reason);
        }

        @Override
        public String toString() {
            return "admin-request policy in front of " + delegate;
        }
    }
}
