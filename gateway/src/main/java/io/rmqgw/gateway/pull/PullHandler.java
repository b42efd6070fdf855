package io.rmqgw.gateway.pull;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.core.Exchange;

/**
 * Pulls (names and limits are the role's filters): held as long polls, store hosts rewritten in the records, sent
 * as their filters left them.
 */
public class PullHandler extends StoredRecordsHandler {

    public PullHandler(StoreHostMapper storeHosts) {
        super(storeHosts, true);
    }

    /** A long poll a draining gateway need not wait out: the client pulls the same offset again elsewhere. */
    @Override
    public boolean cutShortWhenDraining() {
        return true;
    }

    @Override
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        return exchange.forward(request);
    }
}
