package io.rmqgw.gateway.send;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendAnswerInPlace;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RequestHandler;

/**
 * Sends (their names, limits and coalescing are the role's filters): the answer's {@code msgId} (offsetMsgIds
 * naming the broker's store host) is rewritten to the gateway's port for the broker, so query-by-id and everything
 * derived from ids come back through the gateway. The request goes as its filters left it: re-encoded from the
 * header they decoded, or from the bytes alone.
 */
public final class SendHandler implements RequestHandler {

    private static final String MSG_ID = "msgId";

    private final StoreHostMapper storeHosts;

    public SendHandler(StoreHostMapper storeHosts) {
        this.storeHosts = storeHosts;
    }

    @Override
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        return exchange.forward(request);
    }

    /** A send streams through unless a filter reads its body (coalescing; see {@link HandlerTable#streams}). */
    @Override
    public boolean streamsBody(RemotingFrame head) {
        return true;
    }

    @Override
    public ByteBuf onResponse(Exchange exchange, RemotingFrame response) {
        // the usual answer: its ids rewritten where they lie (the same length), nothing decoded or rebuilt
        if (!response.content().isReadOnly() && exchange.reachesClientAsIs(response)
            && SendAnswerInPlace.rewriteMsgIds(response, storeHosts)) {
            return response.content();
        }
        CommandHeader header;
        try {
            header = HeaderTranscoder.decodeResponse(response, exchange.code());
        } catch (MalformedFrameException e) {
            // the client decodes what its broker sent; the gateway only declines to rewrite it
            return response.content();
        }
        String ids = header instanceof SendResponseHeader send ? send.msgId() : header.get(MSG_ID);
        String rewritten = ids == null ? null : MessageIds.rewriteList(ids, storeHosts);
        if (rewritten == null || rewritten.equals(ids)) {
            return exchange.forClient(response, header);
        }
        header.put(MSG_ID, rewritten);
        return exchange.rebuiltForClient(response, header);
    }
}
