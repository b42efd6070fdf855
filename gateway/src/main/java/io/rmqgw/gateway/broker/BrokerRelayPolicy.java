package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderKind;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.PullRequestHeader;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.edge.NameRefusal;
import io.rmqgw.gateway.relay.RelayContext;
import io.rmqgw.gateway.relay.RelayPolicy;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.UpstreamSettings;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker role: a client connection on a broker's gateway port relays to that broker. Frames
 * pass unchanged except where a broker names itself to the client: offsetMsgIds in send answers
 * and store hosts in message records, which are rewritten to the gateway's port for the broker so
 * that query-by-id and everything derived from ids come back through the gateway.
 */
final class BrokerRelayPolicy implements RelayPolicy {

    private static final Logger log = LoggerFactory.getLogger(BrokerRelayPolicy.class);

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
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        EdgeSettings edge = session.edge();
        int code = request.code();
        if (HeaderKind.forRequest(code) != HeaderKind.GENERIC) {
            if (edge.names() == null && (edge.upstreamEncoding() == null || edge.upstreamEncoding() == request.encoding())) {
                return request.content();
            }
            // one decode serves the name check and the re-encoding
            CommandHeader header = decodeOrRelease(request);
            NameRefusal refusal = null;
            if (edge.names() != null) {
                if (header instanceof SendRequestHeader send) {
                    refusal = NameGuard.checkSend(send, edge);
                } else if (header instanceof PullRequestHeader pull) {
                    refusal = NameGuard.checkPull(pull, edge);
                }
            }
            if (refusal != null) {
                header.release();
                refuse(session, request, refusal);
                return null;
            }
            return session.reencodeForUpstream(request, header);
        }
        if (edge.names() != null) {
            NameRefusal refusal;
            try {
                refusal = NameGuard.checkOther(request, edge);
            } catch (RuntimeException e) {
                request.release();
                throw e;
            }
            if (refusal != null) {
                refuse(session, request, refusal);
                return null;
            }
        }
        return session.reencodeForUpstream(request, null);
    }

    /** The typed header; a frame that cannot be decoded is released before the pipeline closes the connection. */
    private static CommandHeader decodeOrRelease(RemotingFrame request) {
        try {
            return HeaderTranscoder.decodeRequest(request);
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
    }

    /** Answers a request with a bad name as a broker would, and never forwards it. Takes ownership. */
    private void refuse(RelaySession session, RemotingFrame request, NameRefusal refusal) {
        try {
            metrics.nameRejected(refusal.check());
            if (request.isOneway()) {
                log.warn("client {}: oneway request code {} refused: {}", session.clientAddress(), request.code(),
                    refusal.remark());
                return;
            }
            session.answerLocally(Frames.errorResponse(session.client().alloc(), request.opaque(),
                session.answerEncoding(request.encoding()), refusal.code(), refusal.remark()));
        } finally {
            request.release();
        }
    }

    @Override
    public ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response,
                              SerializeType requestEncoding) {
        switch (requestCode) {
            case RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE,
                 RequestCode.SEND_REPLY_MESSAGE, RequestCode.SEND_REPLY_MESSAGE_V2 -> {
                return sendAnswer(session, requestCode, response, requestEncoding);
            }
            case RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE, RequestCode.POP_MESSAGE,
                 RequestCode.QUERY_MESSAGE, RequestCode.VIEW_MESSAGE_BY_ID -> {
                if (response.code() == ResponseCode.SUCCESS && response.bodyLength() > 0) {
                    // in place: store hosts sit outside the body CRC, and the frame is ours
                    StoredRecords.rewriteStoreHosts(response.bodySlice(), storeHosts);
                }
                return session.reencodeForClient(response, null, requestEncoding);
            }
            default -> {
                return session.reencodeForClient(response, null, requestEncoding);
            }
        }
    }

    /** A send answer names the stored message by offsetMsgId(s) in {@code msgId}: point them at the gateway. */
    private ByteBuf sendAnswer(RelaySession session, int requestCode, RemotingFrame response, SerializeType requestEncoding) {
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

    @Override
    public ByteBuf onUpstreamRequest(RelaySession session, RemotingFrame request) {
        switch (request.code()) {
            case RequestCode.CHECK_TRANSACTION_STATE -> {
                if (request.bodyLength() > 0) {
                    StoredRecords.rewriteStoreHosts(request.bodySlice(), storeHosts);
                }
                return checkBackRequest(session, request);
            }
            case RequestCode.CONSUME_MESSAGE_DIRECTLY -> {
                if (request.bodyLength() > 0) {
                    StoredRecords.rewriteStoreHosts(request.bodySlice(), storeHosts);
                }
                return session.reencodeForClient(request, null, session.clientEncoding());
            }
            default -> {
                return session.reencodeForClient(request, null, session.clientEncoding());
            }
        }
    }

    /** A transaction check-back names the half message by {@code offsetMsgId}: point it at the gateway. */
    private ByteBuf checkBackRequest(RelaySession session, RemotingFrame request) {
        CommandHeader header;
        try {
            header = HeaderTranscoder.decode(request, HeaderKind.GENERIC);
        } catch (MalformedFrameException e) {
            return request.content();
        }
        String id = header.get(OFFSET_MSG_ID);
        String rewritten = id == null ? null : MessageIds.rewriteList(id, storeHosts);
        if (rewritten == null || rewritten.equals(id)) {
            return session.reencodeForClient(request, header, session.clientEncoding());
        }
        header.put(OFFSET_MSG_ID, rewritten);
        return session.rebuildForClient(request, header, session.clientEncoding());
    }

    @Override
    public String toString() {
        return "broker " + brokerAddress;
    }
}
