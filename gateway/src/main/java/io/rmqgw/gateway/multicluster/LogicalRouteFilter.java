package io.rmqgw.gateway.multicluster;

import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.routing.BrokerAddressRewriter;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.MalformedRouteBodyException;
import io.rmqgw.routing.RouteUnion;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On the name-server role: GET_ROUTEINFO_BY_TOPIC for a logical topic (or a retry or dead-letter topic, which spans
 * every cluster), answered by the gateway with the union of its clusters' routes, broker addresses replaced by the
 * gateway's listeners (bound first, as for any route), without the brokers that are down while another is not; and
 * GET_BROKER_CLUSTER_INFO, the union of every cluster's. Other topics go on to the name servers as before.
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
        if (request.code() == RequestCode.GET_BROKER_CLUSTER_INFO) {
            request.release();
            clusterInfo(exchange);
            return null;
        }
        String topic;
        List<String> clusters;
        try {
            RemotingHeader header = HeaderCodec.decodeHeader(request);
            Map<String, String> ext = header.extFields();
            topic = ext == null ? null : ext.get("topic");
            clusters = feature.clustersOf(topic);
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
        if (clusters == null) {
            return request;
        }
        request.release();
        feature.routes().fetch(topic, clusters, exchange.loop()).addListener(f -> {
            if (!f.isSuccess()) {
                exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] topic " + topic + " over clusters "
                    + clusters + ": " + f.cause().getMessage());
                return;
            }
            @SuppressWarnings("unchecked")
            Optional<UnionRoute> union = (Optional<UnionRoute>) f.getNow();
            if (union.isEmpty()) {
                exchange.answerError(ResponseCode.TOPIC_NOT_EXIST, "No topic route info in name server for the topic: "
                    + topic + " (none of clusters " + clusters + " has it)");
                return;
            }
            answer(exchange, union.get());
        });
        return null;
    }

    /** Every cluster's brokers, named as in the routes, behind the gateway's listeners. */
    private void clusterInfo(Exchange exchange) {
        feature.routes().refreshBrokerNames(exchange.loop()).addListener(f -> {
            byte[] union = (byte[]) f.getNow();
            if (union == null) {
                exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] no name server of clusters "
                    + feature.routes().allClusters() + " answered for the cluster list");
                return;
            }
            try {
                cluster.learnClusterInfo(union);
            } catch (MalformedRouteBodyException e) {
                log.warn("cluster view did not learn the clusters' union: {}", e.getMessage());
            }
            rewrittenAnswer(exchange, union, "the cluster list");
        });
    }

    private void answer(Exchange exchange, UnionRoute union) {
        byte[] shown = RouteUnion.without(union.body(), feature.downBrokers(union));
        try {
            cluster.learnRoute(union.topic(), shown);
        } catch (MalformedRouteBodyException e) {
            log.warn("cluster view did not learn the union of {}: {}", union.topic(), e.getMessage());
        }
        rewrittenAnswer(exchange, shown, union.topic());
    }

    /** Answers {@code body} with its broker addresses replaced by the gateway's listeners, bound first. */
    private void rewrittenAnswer(Exchange exchange, byte[] body, String what) {
        Set<String> addresses = new HashSet<>(BrokerAddressRewriter.brokerAddresses(body));
        CompletableFuture<?>[] binds = addresses.stream().map(brokers::ensure).toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(binds).whenComplete((ignored, failure) -> {
            if (failure != null) {
                exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] no listener for a broker of "
                    + what + ": " + failure.getMessage());
                return;
            }
            byte[] rewritten = BrokerAddressRewriter.rewrite(body, brokers::advertised).body();
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
