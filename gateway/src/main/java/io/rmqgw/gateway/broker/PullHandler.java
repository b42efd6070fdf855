package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.PullRequestHeader;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.relay.RelaySession;

/** Pulls: topic and consumer group checked at the edge, held as long polls, store hosts rewritten in the records. */
public final class PullHandler extends StoredRecordsHandler {

    public PullHandler(StoreHostMapper storeHosts) {
        super(storeHosts, true);
    }

    /** A long poll a draining gateway need not wait out: the client pulls the same offset again elsewhere. */
    @Override
    public boolean cutShortWhenDraining() {
        return true;
    }

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        RateLimits limits = session.rateLimits();
        return Forwarding.typed(session, request, PullRequestHeader.class, NameGuard::checkPull, PullRequestHeader::topic,
            limits.limitsPulls() ? header -> limits.admitPull(header.topic()) : null);
    }
}
