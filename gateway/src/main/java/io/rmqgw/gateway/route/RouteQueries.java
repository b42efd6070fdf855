package io.rmqgw.gateway.route;

import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.routing.ClusterView;
import java.util.Map;
import java.util.Optional;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * The gateway's own route queries: asks a name server over the pooled connection and teaches the
 * {@link ClusterView} the answer, for handlers that need a topic's queues no client asked for yet.
 */
public final class RouteQueries {

    private final UpstreamPool pool;
    private final RelayContext context;
    private final ClusterView cluster;

    public RouteQueries(UpstreamPool pool, RelayContext context) {
        this.pool = pool;
        this.context = context;
        this.cluster = context.cluster();
    }

    /**
     * Refreshes {@code topic}: completes on {@code replyOn} with the route learned, or empty when the
     * name server knows no such topic (the view then forgets it); fails when no name server answered.
     */
    public Future<Optional<ClusterView.TopicRoute>> refresh(String topic, EventExecutor replyOn) {
        Promise<Optional<ClusterView.TopicRoute>> result = replyOn.newPromise();
        // standard JSON: the dialect old clients never get, so nothing here depends on fastjson's
        Map<String, String> ext = Map.of("topic", topic, "acceptStandardJsonOnly", "true");
        pool.namesrv().request(RequestCode.GET_ROUTEINFO_BY_TOPIC, ext, null,
            context.upstream().requestTimeoutNanos(), replyOn).addListener(f -> {
            if (!f.isSuccess()) {
                result.tryFailure(f.cause());
                return;
            }
            RemotingFrame answer = (RemotingFrame) f.getNow();
            try {
                if (answer.code() == ResponseCode.TOPIC_NOT_EXIST) {
                    cluster.forgetTopic(topic);
                    result.trySuccess(Optional.empty());
                } else if (answer.code() != ResponseCode.SUCCESS || answer.bodyLength() == 0) {
                    result.tryFailure(new IllegalStateException("name server answered the route of " + topic
                        + " with code " + answer.code()));
                } else {
                    cluster.learnRoute(topic, ByteBufUtil.getBytes(answer.bodySlice()));
                    result.trySuccess(cluster.route(topic));
                }
            } catch (RuntimeException e) {
                result.tryFailure(e);
            } finally {
                answer.release();
            }
        });
        return result;
    }
}
