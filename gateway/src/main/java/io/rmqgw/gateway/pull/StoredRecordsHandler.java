package io.rmqgw.gateway.pull;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestHandler;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * Requests answered with stored message records (pop, query by key, view by id): the STOREHOST of
 * every record is rewritten to the gateway's address for its broker, in place (it sits outside
 * the body CRC and the frame is the gateway's), so the offsetMsgIds clients derive lead back here.
 */
public class StoredRecordsHandler implements RequestHandler {

    private final StoreHostMapper storeHosts;
    private final boolean longPolling;

    public StoredRecordsHandler(StoreHostMapper storeHosts, boolean longPolling) {
        this.storeHosts = storeHosts;
        this.longPolling = longPolling;
    }

    @Override
    public boolean longPolling() {
        return longPolling;
    }

    @Override
    public ByteBuf onResponse(Exchange exchange, RemotingFrame response) {
        if (response.code() == ResponseCode.SUCCESS && response.bodyLength() > 0) {
            StoredRecords.rewriteStoreHosts(response.bodySlice(), storeHosts);
        }
        return exchange.forClient(response, null);
    }
}
