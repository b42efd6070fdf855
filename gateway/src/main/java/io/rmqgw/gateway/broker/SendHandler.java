package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendAnswerInPlace;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.coalesce.Coalescing;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;
import java.util.function.Supplier;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Sends: the topic and producer group are checked at the edge (typed header), and the answer's
 * {@code msgId} (offsetMsgIds naming the broker's store host) is rewritten to the gateway's port
 * for the broker, so query-by-id and everything derived from ids come back through the gateway.
 */
public final class SendHandler implements RequestHandler {

    private static final String MSG_ID = "msgId";

    private final StoreHostMapper storeHosts;
    private final boolean typedHeader;
    private final String brokerAddress;
    private final Supplier<Coalescing> coalescing;

    /**
     * @param typedHeader whether the request has the typed send header (SEND_MESSAGE, _V2, BATCH) whose
     *                    names are checked; reply sends carry it as generic extFields and go unchecked
     */
    public SendHandler(StoreHostMapper storeHosts, boolean typedHeader) {
        this.storeHosts = storeHosts;
        this.typedHeader = typedHeader;
        this.brokerAddress = null;
        this.coalescing = () -> null;
    }

    /**
     * Sends with the typed header to the broker at {@code brokerAddress}; {@code coalescing} (its value may be
     * null) may take single sends into the gateway's own batches instead of forwarding them.
     */
    public SendHandler(StoreHostMapper storeHosts, String brokerAddress, Supplier<Coalescing> coalescing) {
        this.storeHosts = storeHosts;
        this.typedHeader = true;
        this.brokerAddress = brokerAddress;
        this.coalescing = coalescing;
    }

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        if (!typedHeader) {
            return session.reencodeForUpstream(request, null);
        }
        RateLimits limits = session.rateLimits();
        Coalescing batches = coalescing.get();
        return Forwarding.typed(session, request, SendRequestHeader.class, NameGuard::checkSend,
            SendRequestHeader::topic, limits.active()
                ? header -> limits.admitSend(header.topic(), session.clientIdForLimits(),
                    session.sourceForLimits()) : null,
            batches != null && batches.active() ? header -> batches.offer(session, request, header, brokerAddress)
                : null, SendRequestHeader::namesValidInFrame);
    }

    /** A send streams through unless coalescing may take it into a batch of the gateway's (it reads the body). */
    @Override
    public boolean streamsBody(RelaySession session, RemotingFrame head) {
        Coalescing batches = typedHeader ? coalescing.get() : null;
        return batches == null || !batches.active();
    }

    @Override
    public ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response,
                              SerializeType requestEncoding) {
        // the usual answer: its ids rewritten where they lie (the same length), nothing decoded or rebuilt
        if (!response.content().isReadOnly() && session.reachesClientAsIs(response, requestEncoding)
            && SendAnswerInPlace.rewriteMsgIds(response, storeHosts)) {
            return response.content();
        }
        CommandHeader header;
        try {
            header = HeaderTranscoder.decodeResponse(response, requestCode);
        } catch (MalformedFrameException e) {
            // the client decodes what its broker sent; the gateway only declines to rewrite it
            return response.content();
        }
        String ids = header instanceof SendResponseHeader send ? send.msgId() : header.get(MSG_ID);
        String rewritten = ids == null ? null : MessageIds.rewriteList(ids, storeHosts);
        if (rewritten == null || rewritten.equals(ids)) {
            return session.reencodeForClient(response, header, requestEncoding);
        }
        header.put(MSG_ID, rewritten);
        return session.rebuildForClient(response, header, requestEncoding);
    }
}
