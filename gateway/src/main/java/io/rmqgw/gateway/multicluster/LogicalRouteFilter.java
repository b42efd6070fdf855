package io.rmqgw.gateway.multicluster;

import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.config.LogicalTopicConfig;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.routing.BrokerAddressRewriter;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.MalformedRouteBodyException;
import io.rmqgw.routing.RouteUnion;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GET_ROUTEINFO_BY_TOPIC for a logical topic, on the name-server role: answered by the gateway with the union of
 * its clusters' routes, broker addresses replaced by the gateway's listeners (bound first, as for any route), and
 * without the clusters that are down while another is not. Other topics go on to the name servers as before.
 */
final class LogicalRouteFilter implements RequestFilter {

    private static final Logger log = LoggerFactory.getLogger(LogicalRouteFilter.class);

    private final LogicalTopics feature;
    private final BrokerListeners brokers;
    private final ClusterView cluster;

    LogicalRouteFilter(LogicalTopics feature, BrokerListeners brokers, ClusterView cluster) {
        this.feature = feature;
        this.brokers = brokers;
        this.cluster = cluster;
    }

    @Override
    public RemotingFrame filter(Exchange exchange, RemotingFrame request) {
        LogicalTopicConfig topic;
        try {
            RemotingHeader header = HeaderCodec.decodeHeader(request);
            Map<String, String> ext = header.extFields();
            topic = ext == null ? null : feature.topic(ext.get("topic"));
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
        if (topic == null) {
            return request;
        }
        request.release();
        feature.routes().fetch(topic, feature.clusters(), exchange.loop()).addListener(f -> {
            if (!f.isSuccess()) {
                exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] logical topic " + topic.topic()
                    + ": " + f.cause().getMessage());
                return;
            }
            @SuppressWarnings("unchecked")
            Optional<UnionRoute> union = (Optional<UnionRoute>) f.getNow();
            if (union.isEmpty()) {
                exchange.answerError(ResponseCode.TOPIC_NOT_EXIST, "No topic route info in name server for the topic: "
                    + topic.topic() + " (logical topic: none of clusters " + topic.clusters() + " has it)");
                return;
            }
            answer(exchange, union.get());
        });
        return null;
    }

    private void answer(Exchange exchange, UnionRoute union) {
        byte[] shown = RouteUnion.without(union.body(), feature.downBrokers(union));
        try {
            cluster.learnRoute(union.topic(), shown);
        } catch (MalformedRouteBodyException e) {
            log.warn("cluster view did not learn the union of {}: {}", union.topic(), e.getMessage());
        }
        Set<String> addresses = new HashSet<>(BrokerAddressRewriter.brokerAddresses(shown));
        CompletableFuture<?>[] binds = addresses.stream().map(brokers::ensure).toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(binds).whenComplete((ignored, failure) -> {
            if (failure != null) {
                exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] no listener for a broker of "
                    + union.topic() + ": " + failure.getMessage());
                return;
            }
            byte[] rewritten = BrokerAddressRewriter.rewrite(shown, brokers::advertised).body();
            exchange.metrics().routeRewritten();
            exchange.answer(Frames.encode(exchange.alloc(), RemotingHeader.response(exchange.opaque(),
                ResponseCode.SUCCESS, null), exchange.answerEncoding(), Unpooled.wrappedBuffer(rewritten)));
        });
    }

    @Override
    public String toString() {
        return "logical-topics route";
    }
}
