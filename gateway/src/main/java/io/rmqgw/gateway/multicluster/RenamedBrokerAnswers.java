package io.rmqgw.gateway.multicluster;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.routing.RouteUnion;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * Admin reads whose answer names the broker (GET_CONSUME_STATS, GET_TOPIC_STATS_INFO: {@code mqadmin
 * consumerProgress}, {@code topicStatus}), on the role of a broker clients see under another name
 * ({@code CLUSTER-NAME}): asked on the gateway's pooled connection and answered with the shown name, so an admin tool
 * that merges every broker's answer keeps both clusters' queues apart. Other brokers' go on as they are.
 */
final class RenamedBrokerAnswers implements RequestFilter {

    static final int GET_TOPIC_STATS_INFO = 202;
    static final int GET_CONSUME_STATS = 208;

    private final LogicalTopics feature;
    private final String upstream;

    RenamedBrokerAnswers(LogicalTopics feature, String upstream) {
        this.feature = feature;
        this.upstream = upstream;
    }

    @Override
    public RemotingFrame filter(Exchange exchange, RemotingFrame request) {
        String shown = feature.routes().renamed(upstream);
        String real = feature.routes().realName(upstream);
        if (shown == null || real == null || exchange.oneway()) {
            return request;
        }
        RemotingHeader header;
        ByteBuf body;
        try {
            header = HeaderCodec.decodeHeader(request);
            body = request.bodyLength() > 0 ? Unpooled.wrappedBuffer(ByteBufUtil.getBytes(request.bodySlice())) : null;
        } finally {
            request.release();
        }
        feature.pool().broker(upstream).request(header.withExtFields(header.extFields()), body,
            feature.requestTimeoutNanos(), exchange.loop()).addListener(f -> {
                if (!f.isSuccess()) {
                    exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] broker " + upstream + ": "
                        + f.cause().getMessage());
                    return;
                }
                RemotingFrame response = (RemotingFrame) f.getNow();
                try {
                    RemotingHeader answer = HeaderCodec.decodeHeader(response);
                    byte[] bytes = response.bodyLength() > 0 ? ByteBufUtil.getBytes(response.bodySlice()) : null;
                    if (bytes != null && response.code() == ResponseCode.SUCCESS) {
                        bytes = RouteUnion.renameBroker(bytes, real, shown);
                    }
                    exchange.answer(Frames.encode(exchange.alloc(), new RemotingHeader(answer.code(), answer.language(),
                        answer.version(), exchange.opaque(), answer.flag(), answer.remark(), answer.extFields()),
                        exchange.answerEncoding(), bytes == null ? null : Unpooled.wrappedBuffer(bytes)));
                } finally {
                    response.release();
                }
            });
        return null;
    }

    @Override
    public String toString() {
        return "logical-topics renamed broker answers";
    }
}
