package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.relay.RelayContext;
import io.rmqgw.gateway.relay.RelayPolicy;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.UpstreamSettings;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * The broker role: a client connection on a broker's gateway port relays to that broker. Frames
 * pass unchanged except where a broker names itself to the client: offsetMsgIds in send answers
 * and store hosts in message records, which are rewritten to the gateway's port for the broker so
 * that query-by-id and everything derived from ids come back through the gateway.
 */
final class BrokerRelayPolicy implements RelayPolicy {

    private static final String MSG_ID = "msgId";
    private static final String OFFSET_MSG_ID = "offsetMsgId";

    private final String brokerAddress;
    private final List<String> targets;
    private final StoreHostMapper storeHosts;
    private final GatewayMetrics metrics;
    private final RelayContext context;

    BrokerRelayPolicy(String brokerAddress, StoreHostMapper storeHosts, RelayContext context) {
        this.brokerAddress = brokerAddress;
        this.targets = List.of(brokerAddress);
        this.storeHosts = storeHosts;
        this.metrics = context.metrics();
        this.context = context;
    }

    @Override
    public String role() {
        return "broker";
    }

    @Override
    public List<String> upstreamTargets() {
        return targets;
    }

    @Override
    public void upstreamResult(String target, boolean connected) {
        metrics.brokerUp(target, connected);
    }

    @Override
    public String describe(String target) {
        return "broker " + target;
    }

    @Override
    public long timeoutNanos(int requestCode) {
        UpstreamSettings settings = context.upstream();
        return isLongPolling(requestCode) ? settings.longPollTimeoutNanos() : settings.requestTimeoutNanos();
    }

    private static boolean isLongPolling(int code) {
        return code == RequestCode.PULL_MESSAGE || code == RequestCode.LITE_PULL_MESSAGE || code == RequestCode.POP_MESSAGE;
    }

    @Override
    public ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response) {
        switch (requestCode) {
            case RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE,
                 RequestCode.SEND_REPLY_MESSAGE, RequestCode.SEND_REPLY_MESSAGE_V2 -> {
                return rewriteIdField(session, response, MSG_ID);
            }
            case RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE, RequestCode.POP_MESSAGE,
                 RequestCode.QUERY_MESSAGE, RequestCode.VIEW_MESSAGE_BY_ID -> {
                if (response.code() == ResponseCode.SUCCESS && response.bodyLength() > 0) {
                    // in place: store hosts sit outside the body CRC, and the frame is ours
                    StoredRecords.rewriteStoreHosts(response.bodySlice(), storeHosts);
                }
                return response.content();
            }
            default -> {
                return response.content();
            }
        }
    }

    @Override
    public ByteBuf onUpstreamRequest(RelaySession session, RemotingFrame request) {
        switch (request.code()) {
            case RequestCode.CHECK_TRANSACTION_STATE -> {
                if (request.bodyLength() > 0) {
                    StoredRecords.rewriteStoreHosts(request.bodySlice(), storeHosts);
                }
                return rewriteIdField(session, request, OFFSET_MSG_ID);
            }
            case RequestCode.CONSUME_MESSAGE_DIRECTLY -> {
                if (request.bodyLength() > 0) {
                    StoredRecords.rewriteStoreHosts(request.bodySlice(), storeHosts);
                }
                return request.content();
            }
            default -> {
                return request.content();
            }
        }
    }

    /**
     * Send answers carry offsetMsgId(s) in {@code msgId}, check-back requests in {@code offsetMsgId}:
     * point them at the gateway. Takes ownership of {@code frame}.
     */
    private ByteBuf rewriteIdField(RelaySession session, RemotingFrame frame, String field) {
        RemotingHeader header;
        try {
            header = HeaderCodec.decodeHeader(frame);
        } catch (MalformedFrameException e) {
            // the client decodes what its broker sent; the gateway only declines to rewrite it
            return frame.content();
        }
        Map<String, String> ext = header.extFields();
        String ids = ext == null ? null : ext.get(field);
        if (ids == null) {
            return frame.content();
        }
        String rewritten = MessageIds.rewriteList(ids, storeHosts);
        if (rewritten.equals(ids)) {
            return frame.content();
        }
        Map<String, String> fields = new LinkedHashMap<>(ext);
        fields.put(field, rewritten);
        try {
            return Frames.withHeader(session.client().alloc(), frame, header.withExtFields(fields), frame.encoding());
        } finally {
            frame.release();
        }
    }

    @Override
    public String toString() {
        return "broker " + brokerAddress;
    }
}
