package io.rmqgw.gateway.fanout;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;
import io.rmqgw.routing.RouteDialect;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * GET_ROUTEINFO_BY_TOPIC with fan-out: the fan-out topic's route is answered by the gateway (no name
 * server asked, whether one is reachable or not) while fan-out is on; every other request goes to
 * {@code names}, the name-server role's own handler.
 */
public final class FanoutRouteHandler implements RequestHandler {

    private final Fanout fanout;
    private final RequestHandler names;

    public FanoutRouteHandler(Fanout fanout, RequestHandler names) {
        this.fanout = fanout;
        this.names = names;
    }

    /** The route request's topic and dialect, when it asks for the fan-out topic; else null. */
    private RouteDialect servedDialect(RemotingFrame request) {
        if (request.code() != RequestCode.GET_ROUTEINFO_BY_TOPIC) {
            return null;
        }
        RemotingHeader header = HeaderCodec.decodeHeader(request);
        Map<String, String> ext = header.extFields();
        String topic = ext == null ? null : ext.get("topic");
        return fanout.servesRoute(topic) ? RouteDialect.forRequest(header.version(), ext) : null;
    }

    @Override
    public Object requestContext(RemotingFrame request) {
        return names.requestContext(request);
    }

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        RouteDialect dialect;
        try {
            dialect = servedDialect(request);
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
        if (dialect == null) {
            return names.toUpstream(session, request);
        }
        int opaque = request.opaque();
        SerializeType encoding = session.answerEncoding(request.encoding());
        request.release();
        String now = fanout.listenerNow();
        if (now != null) {
            session.answerLocally(routeAnswer(session, opaque, encoding, now, dialect));
        } else {
            fanout.listener().whenComplete((address, failure) -> session.writeToClient(failure == null
                ? routeAnswer(session, opaque, encoding, address, dialect)
                : Frames.errorResponse(session.client().alloc(), opaque, encoding, RemotingSysResponseCode.SYSTEM_ERROR,
                    "fan-out broker has no listener: " + failure.getMessage())));
        }
        return null;
    }

    @Override
    public boolean answersAlone(RemotingFrame request) {
        try {
            return servedDialect(request) != null;
        } catch (RuntimeException e) {
            // an unreadable header: left to the usual path, which treats it as any unreadable frame
            return false;
        }
    }

    @Override
    public ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response,
                              SerializeType requestEncoding) {
        return names.onResponse(session, requestCode, context, response, requestEncoding);
    }

    @Override
    public ByteBuf answerWithoutUpstream(RelaySession session, RemotingFrame request, String reason) {
        RouteDialect dialect = servedDialect(request);
        String address = dialect == null ? null : fanout.listenerNow();
        if (address == null) {
            return names.answerWithoutUpstream(session, request, reason);
        }
        return routeAnswer(session, request.opaque(), session.answerEncoding(request.encoding()), address, dialect);
    }

    private ByteBuf routeAnswer(RelaySession session, int opaque, SerializeType encoding, String address,
                                RouteDialect dialect) {
        byte[] body = FanoutRoute.body(address, fanout.settings().queues(), dialect);
        return Frames.encode(session.client().alloc(), RemotingHeader.response(opaque, ResponseCode.SUCCESS, null),
            encoding, Unpooled.wrappedBuffer(body));
    }

    @Override
    public String toString() {
        return "fan-out route, else " + names;
    }
}
