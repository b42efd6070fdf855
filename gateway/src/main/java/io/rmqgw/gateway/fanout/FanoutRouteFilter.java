package io.rmqgw.gateway.fanout;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.routing.RouteDialect;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * GET_ROUTEINFO_BY_TOPIC for the fan-out topic, on the name-server role: answered by the gateway while fan-out is
 * on, no name server asked (whether one is reachable or not, and before any is dialed); every other route request
 * goes on to the route handler. While fan-out is off this is one volatile read.
 */
final class FanoutRouteFilter implements RequestFilter {

    private final Fanout fanout;

    FanoutRouteFilter(Fanout fanout) {
        this.fanout = fanout;
    }

    @Override
    public RemotingFrame filter(Exchange exchange, RemotingFrame request) {
        if (!fanout.settings().enabled()) {
            return request;
        }
        RouteDialect dialect;
        try {
            RemotingHeader header = HeaderCodec.decodeHeader(request);
            Map<String, String> ext = header.extFields();
            String topic = ext == null ? null : ext.get("topic");
            dialect = fanout.servesRoute(topic) ? RouteDialect.forRequest(header.version(), ext) : null;
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
        if (dialect == null) {
            return request;
        }
        request.release();
        String now = fanout.listenerNow();
        if (now != null) {
            exchange.answer(routeAnswer(exchange, now, dialect));
        } else {
            fanout.listener().whenComplete((address, failure) -> {
                if (failure == null) {
                    exchange.answer(routeAnswer(exchange, address, dialect));
                } else {
                    exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR,
                        "fan-out broker has no listener: " + failure.getMessage());
                }
            });
        }
        return null;
    }

    private ByteBuf routeAnswer(Exchange exchange, String address, RouteDialect dialect) {
        byte[] body = FanoutRoute.body(address, fanout.settings().queues(), dialect);
        return Frames.encode(exchange.alloc(), RemotingHeader.response(exchange.opaque(), ResponseCode.SUCCESS, null),
            exchange.answerEncoding(), Unpooled.wrappedBuffer(body));
    }

    @Override
    public String toString() {
        return "fan-out topic's route";
    }
}
