package io.rmqgw.gateway.filters;

import io.rmqgw.codec.header.PullRequestHeader;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.limits.RateLimits;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;

/**
 * {@code rate-limits} on the broker ports, as filters: a request past a limit is answered SYSTEM_BUSY (held
 * {@code refusal-delay}), never forwarded, so the client backs off as from a busy broker. Each limit is one
 * volatile read while nothing is configured (a reload turns limits on and off).
 */
public final class RateLimitFilters {

    private RateLimitFilters() {
    }

    /** {@code per-client} and {@code per-address} {@code requests-per-second}: every code but heartbeats. */
    public static RequestFilter requests(RateLimits limits) {
        return (exchange, request) -> {
            if (!limits.limitsRequests() || exchange.oneway() || !RateLimits.countsAsRequest(exchange.code())) {
                return request;
            }
            String remark = limits.admitRequest(exchange.client().idForLimits(), exchange.client().sourceForLimits(),
                exchange.code());
            if (remark == null) {
                return request;
            }
            request.release();
            exchange.metrics().requestAnswered(exchange.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            exchange.answerRateLimited(remark);
            return null;
        };
    }

    /** Sends per topic, client and address (the typed send header's topic). */
    public static RequestFilter sends(RateLimits limits) {
        return (exchange, request) -> {
            if (!limits.active()) {
                return request;
            }
            SendRequestHeader header = exchange.header(request, SendRequestHeader.class);
            String remark = header == null ? null : limits.admitSend(header.topic(), exchange.client().idForLimits(),
                exchange.client().sourceForLimits());
            if (remark == null) {
                return request;
            }
            request.release();
            exchange.answerRateLimited(remark);
            return null;
        };
    }

    /** Pulls per topic. */
    public static RequestFilter pulls(RateLimits limits) {
        return (exchange, request) -> {
            if (!limits.limitsPulls()) {
                return request;
            }
            PullRequestHeader header = exchange.header(request, PullRequestHeader.class);
            String remark = header == null ? null : limits.admitPull(header.topic());
            if (remark == null) {
                return request;
            }
            request.release();
            exchange.answerRateLimited(remark);
            return null;
        };
    }
}
