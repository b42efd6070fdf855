package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.edge.NameRule;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * A request whose names must pass {@code rule} before {@code then} treats it (offsets, groups, heartbeats
 * and locks relayed as they are; route requests to the name servers answered by the route handler). A bad
 * name is answered at the edge with the code and remark a send with that name gets, and never forwarded.
 */
public record NameCheckedHandler(NameRule rule, RequestHandler then) implements RequestHandler {

    /** Relayed as it is once its names pass {@code rule}. */
    public NameCheckedHandler(NameRule rule) {
        this(rule, RequestHandler.PASS_THROUGH);
    }

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        return Forwarding.refusedName(session, request, rule) ? null : then.toUpstream(session, request);
    }

    @Override
    public Object requestContext(RemotingFrame request) {
        return then.requestContext(request);
    }

    @Override
    public ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response,
                              SerializeType requestEncoding) {
        return then.onResponse(session, requestCode, context, response, requestEncoding);
    }

    @Override
    public boolean longPolling() {
        return then.longPolling();
    }

    @Override
    public boolean answersAlone(RemotingFrame request) {
        return then.answersAlone(request);
    }

    @Override
    public ByteBuf answerWithoutUpstream(RelaySession session, RemotingFrame request, String reason) {
        return then.answerWithoutUpstream(session, request, reason);
    }
}
