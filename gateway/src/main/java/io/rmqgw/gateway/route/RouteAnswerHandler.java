package io.rmqgw.gateway.route;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderKind;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestHandler;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.BrokerAddressRewriter;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.MalformedRouteBodyException;
import io.rmqgw.routing.RouteCache;
import io.rmqgw.routing.RouteDialect;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GET_ROUTEINFO_BY_TOPIC and GET_BROKER_CLUSTER_INFO: the answer comes back with every broker
 * address replaced by the gateway's listener for that broker, in the JSON dialect the name server
 * chose for this client. Listeners are bound before the answer is released, so a client never
 * dials a port not yet open. Route answers are cached and served while fresh when no name server
 * can be reached.
 */
public final class RouteAnswerHandler implements RequestHandler {

    private static final Logger log = LoggerFactory.getLogger(RouteAnswerHandler.class);

    /** What a route request needs remembered to cache its answer. */
    private record RouteRequest(String topic, RouteDialect dialect) {
    }

    private static final Object CLUSTER_REQUEST = new Object();

    private final BrokerListeners brokers;
    private final RouteCache routes;
    private final ClusterView cluster;
    private final GatewayMetrics metrics;
    private final RouteShaper shaper;

    /** @param shaper changes topic routes last (virtual queues); {@link RouteShaper#NONE} for none */
    public RouteAnswerHandler(BrokerListeners brokers, RouteCache routes, ClusterView cluster, GatewayMetrics metrics,
                              RouteShaper shaper) {
        this.brokers = brokers;
        this.routes = routes;
        this.cluster = cluster;
        this.metrics = metrics;
        this.shaper = shaper;
    }

    /** What the answer needs kept: the route request's topic and dialect, or that it asked for the cluster. */
    @Override
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        try {
            exchange.keep(request.code() == RequestCode.GET_ROUTEINFO_BY_TOPIC ? routeRequest(request) : CLUSTER_REQUEST);
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
        return exchange.forward(request);
    }

    private static RouteRequest routeRequest(RemotingFrame request) {
        RemotingHeader header = HeaderCodec.decodeHeader(request);
        Map<String, String> ext = header.extFields();
        String topic = ext == null ? null : ext.get("topic");
        return new RouteRequest(topic, RouteDialect.forRequest(header.version(), ext));
    }

    @Override
    public ByteBuf onResponse(Exchange exchange, RemotingFrame response) {
        Object context = exchange.kept();
        if (context instanceof RouteRequest route && route.topic() != null
            && response.code() == ResponseCode.TOPIC_NOT_EXIST) {
            cluster.forgetTopic(route.topic());
        }
        if (context == null || response.code() != ResponseCode.SUCCESS || response.bodyLength() == 0) {
            return exchange.forClient(response, null);
        }
        SerializeType answerEncoding = exchange.answerEncoding();
        byte[] body = ByteBufUtil.getBytes(response.bodySlice());
        Set<String> found;
        try {
            found = BrokerAddressRewriter.brokerAddresses(body);
        } catch (RuntimeException e) {
            response.release();
            log.warn("unreadable route answer for client {}: {}", exchange.client().address(), e.getMessage());
            return Frames.errorResponse(exchange.alloc(), response.opaque(), answerEncoding,
                RemotingSysResponseCode.SYSTEM_ERROR, "gateway could not read the name server's answer: " + e.getMessage());
        }
        learn(context, body);
        CompletableFuture<?>[] binds = found.stream().map(brokers::ensure).toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(binds).whenComplete((ignored, failure) -> {
            try {
                if (failure != null) {
                    exchange.answer(Frames.errorResponse(exchange.alloc(), response.opaque(), answerEncoding,
                        RemotingSysResponseCode.SYSTEM_ERROR, rootMessage(failure)));
                    return;
                }
                byte[] rewritten = BrokerAddressRewriter.rewrite(body, brokers::advertised).body();
                if (context instanceof RouteRequest route && route.topic() != null) {
                    try {
                        rewritten = shaper.shape(route.topic(), route.dialect(), rewritten, body);
                    } catch (MalformedRouteBodyException e) {
                        exchange.answer(Frames.errorResponse(exchange.alloc(), response.opaque(),
                            answerEncoding, RemotingSysResponseCode.SYSTEM_ERROR,
                            "gateway could not read the name server's answer: " + e.getMessage()));
                        return;
                    }
                }
                metrics.routeRewritten();
                if (context instanceof RouteRequest route && route.topic() != null) {
                    routes.put(route.topic(), route.dialect(), rewritten);
                }
                exchange.answer(withBody(exchange, response, Unpooled.wrappedBuffer(rewritten),
                    exchange.clientTarget(response.encoding())));
            } finally {
                response.release();
            }
        });
        return null;
    }

    /** The cluster view learns the answer as the name server wrote it (real addresses). */
    private void learn(Object context, byte[] body) {
        try {
            if (context instanceof RouteRequest route) {
                if (route.topic() != null) {
                    cluster.learnRoute(route.topic(), body);
                }
            } else {
                cluster.learnClusterInfo(body);
            }
        } catch (MalformedRouteBodyException e) {
            // the client still gets the answer it can read; only the gateway's own view goes without
            log.warn("cluster view did not learn a name-server answer: {}", e.getMessage());
        }
    }

    @Override
    public ByteBuf answerWithoutUpstream(Exchange exchange, RemotingFrame request, String reason) {
        if (request.code() != RequestCode.GET_ROUTEINFO_BY_TOPIC) {
            return null;
        }
        RouteRequest route = routeRequest(request);
        Optional<byte[]> cached = route.topic() == null ? Optional.empty() : routes.getFresh(route.topic(), route.dialect());
        if (cached.isEmpty()) {
            return null;
        }
        metrics.routeServedFromCache();
        return Frames.encode(exchange.alloc(), RemotingHeader.response(request.opaque(), ResponseCode.SUCCESS, null),
            exchange.answerEncoding(), Unpooled.wrappedBuffer(cached.get()));
    }

    /** The answer with its header as the name server wrote it (re-encoded if the client needs another encoding). */
    private ByteBuf withBody(Exchange exchange, RemotingFrame response, ByteBuf body, SerializeType target) {
        if (target == response.encoding()) {
            return Frames.withBody(exchange.alloc(), response, body);
        }
        CommandHeader header = HeaderTranscoder.decode(response, HeaderKind.GENERIC);
        try {
            if (!header.canEncode(target)) {
                return Frames.withBody(exchange.alloc(), response, body);
            }
            metrics.headerConverted(response.encoding(), target);
            return HeaderTranscoder.encodeFrame(exchange.alloc(), header, target, body);
        } finally {
            header.release();
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }
}
