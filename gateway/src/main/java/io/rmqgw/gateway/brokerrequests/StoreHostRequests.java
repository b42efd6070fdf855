package io.rmqgw.gateway.brokerrequests;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderKind;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.core.ClientConnection;

/**
 * Requests a broker sends to a client that carry stored messages (transaction check-back,
 * CONSUME_MESSAGE_DIRECTLY): their records' store hosts, and the check-back's {@code offsetMsgId},
 * are pointed at the gateway as in answers.
 */
public final class StoreHostRequests {

    private static final String OFFSET_MSG_ID = "offsetMsgId";

    private final StoreHostMapper storeHosts;

    public StoreHostRequests(StoreHostMapper storeHosts) {
        this.storeHosts = storeHosts;
    }

    /** CHECK_TRANSACTION_STATE: the half message's record and its offsetMsgId. Takes ownership. */
    public ByteBuf checkBack(ClientConnection client, RemotingFrame request) {
        rewriteRecords(request);
        CommandHeader header;
        try {
            header = HeaderTranscoder.decode(request, HeaderKind.GENERIC);
        } catch (MalformedFrameException e) {
            return request.content();
        }
        String id = header.get(OFFSET_MSG_ID);
        String rewritten = id == null ? null : MessageIds.rewriteList(id, storeHosts);
        if (rewritten == null || rewritten.equals(id)) {
            return client.forClient(request, header);
        }
        header.put(OFFSET_MSG_ID, rewritten);
        return client.rebuiltForClient(request, header);
    }

    /** CONSUME_MESSAGE_DIRECTLY: the record to consume. Takes ownership. */
    public ByteBuf consumeDirectly(ClientConnection client, RemotingFrame request) {
        rewriteRecords(request);
        return client.forClient(request, null);
    }

    private void rewriteRecords(RemotingFrame request) {
        if (request.bodyLength() > 0) {
            StoredRecords.rewriteStoreHosts(request.bodySlice(), storeHosts);
        }
    }
}
