package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.edge.NameRule;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;

/** A request relayed as it is once its names pass {@code rule} (offsets, groups, heartbeats, locks). */
public record NameCheckedHandler(NameRule rule) implements RequestHandler {

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        return Forwarding.checked(session, request, rule);
    }
}
