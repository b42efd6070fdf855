package io.rmqgw.gateway.adminpolicy;

import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.config.AdminRequestsConfig;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.LogRateLimiter;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.metrics.GatewayMetrics;
import java.time.Duration;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin-request policy of one gateway ({@code admin-requests}): which request codes clients may send through it
 * to name servers and brokers. It stands in front of the handler of every code no handler registered on the
 * name-server and broker ports ({@link #filter}; the registered codes are client traffic, see
 * {@code RequestKindsTest}), so sends, pulls and every other registered code never pass here. It runs before any
 * upstream is dialed, so a refused request never opens a connection. A refused
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

    /** The policy as the filter of every code no handler is registered for, on the name-server and broker roles. */
    public RequestFilter filter() {
        return this::admitted;
    }

    /** The request, or null when the policy refused it (answered or dropped). */
    private RemotingFrame admitted(Exchange exchange, RemotingFrame request) {
        RequestKind kind = RequestKinds.of(exchange.code());
        AdminPolicy in = policy;
        if (in.allows(kind, exchange.client().channel().remoteAddress())) {
            return request;
        }
        refuse(exchange, request, kind, in);
        return null;
    }

    /** Answers (or drops, when oneway) a refused request, counts and logs it. Takes ownership. */
    private void refuse(Exchange exchange, RemotingFrame request, RequestKind kind, AdminPolicy in) {
        try {
            int code = request.code();
            RequestKinds.Entry entry = RequestKinds.entry(code);
            String name = entry == null ? "code " + code : code + " (" + entry.name() + ")";
            metrics.adminPolicy().refused(kind.label());
            long suppressed = refusalLog.tryAcquire();
            if (suppressed != LogRateLimiter.SUPPRESS) {
                log.warn("client {} on {}: {}request {} refused: it {} ({} allows it){}", exchange.client().address(),
                    exchange.client().channel().localAddress(), request.isOneway() ? "oneway " : "", name, kind.description(),
                    in.settingToAllow(kind), suppressed > 0 ? " (" + suppressed + " more such lines suppressed;"
                        + " rmqgw_admin_requests_refused_total counts each)" : "");
            }
            if (request.isOneway()) {
                return;
            }
            metrics.requestAnswered(code, ResponseCode.NO_PERMISSION);
            exchange.answerError(ResponseCode.NO_PERMISSION, "rmqgw refuses request code " + name + ": it " + kind.description() + "; " + in.settingToAllow(kind)
                    + " allows it");
        } finally {
            request.release();
        }
    }
}
