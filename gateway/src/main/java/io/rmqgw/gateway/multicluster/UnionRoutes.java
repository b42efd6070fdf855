package io.rmqgw.gateway.multicluster;

import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.config.ClusterConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.LogicalTopicConfig;
import io.rmqgw.gateway.pool.UpstreamConnection;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.routing.RouteUnion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routes of logical topics: each cluster's name servers asked in parallel on the gateway's pooled connections
 * ({@code default}'s on the pool's name-server connection, the others' tried in their order), the answers put
 * together ({@link RouteUnion}). The last answer of each cluster is kept and used while its name servers cannot be
 * reached, so a cluster whose name servers are down keeps its queues; a cluster that answers that it has no such
 * topic drops out. The latest union of each topic is kept for the send steering.
 */
final class UnionRoutes {

    private static final Logger log = LoggerFactory.getLogger(UnionRoutes.class);

    /** What one cluster gave: its route body, none (it has no such topic), or nothing heard (and nothing kept). */
    private record Answer(String cluster, byte[] body, boolean unknownTopic) {
    }

    private final UpstreamPool pool;
    private final LongSupplier requestTimeoutNanos;
    private final ConcurrentMap<String, byte[]> lastAnswers = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, UnionRoute> unions = new ConcurrentHashMap<>();

    UnionRoutes(UpstreamPool pool, LongSupplier requestTimeoutNanos) {
        this.pool = pool;
        this.requestTimeoutNanos = requestTimeoutNanos;
    }

    /** The latest union of {@code topic}, or null while none was made. */
    UnionRoute latest(String topic) {
        return unions.get(topic);
    }

    Map<String, UnionRoute> all() {
        return unions;
    }

    /** Forgets what it kept for topics not in {@code topics}. */
    void retain(java.util.Set<String> topics) {
        unions.keySet().retainAll(topics);
        lastAnswers.keySet().removeIf(k -> !topics.contains(k.substring(k.indexOf('\n') + 1)));
    }

    /**
     * Asks every cluster of {@code topic} and completes on {@code replyOn} with the union, empty when no cluster has
     * the topic; fails when no cluster answered and none had answered before.
     */
    Future<Optional<UnionRoute>> fetch(LogicalTopicConfig topic, Map<String, ClusterConfig> clusters,
                                       EventExecutor replyOn) {
        Promise<Optional<UnionRoute>> result = replyOn.newPromise();
        List<String> names = topic.clusters();
        Answer[] answers = new Answer[names.size()];
        AtomicInteger left = new AtomicInteger(names.size());
        for (int i = 0; i < names.size(); i++) {
            int index = i;
            String cluster = names.get(i);
            Promise<Answer> one = replyOn.newPromise();
            ask(cluster, topic.topic(), addresses(cluster, clusters), 0, one, replyOn);
            one.addListener(f -> {
                answers[index] = (Answer) f.getNow();
                if (left.decrementAndGet() == 0) {
                    complete(topic, answers, result);
                }
            });
        }
        return result;
    }

    private void complete(LogicalTopicConfig topic, Answer[] answers, Promise<Optional<UnionRoute>> result) {
        List<RouteUnion.Part> parts = new ArrayList<>();
        boolean anyHeard = false;
        for (Answer a : answers) {
            if (a.body() != null) {
                parts.add(new RouteUnion.Part(a.cluster(), a.body()));
            }
            anyHeard |= a.body() != null || a.unknownTopic();
        }
        if (parts.isEmpty()) {
            if (anyHeard) {
                unions.remove(topic.topic());
                result.trySuccess(Optional.empty());
            } else {
                result.tryFailure(new IllegalStateException("no name server of clusters " + topic.clusters()
                    + " answered for the route of " + topic.topic()));
            }
            return;
        }
        try {
            UnionRoute union = UnionRoute.of(topic.topic(), topic.clusters(), RouteUnion.of(parts));
            unions.put(topic.topic(), union);
            result.trySuccess(Optional.of(union));
        } catch (RuntimeException e) {
            result.tryFailure(e);
        }
    }

    /** {@code null} for {@code default}: the pool's name-server connection (with its own failover). */
    private static List<HostPort> addresses(String cluster, Map<String, ClusterConfig> clusters) {
        ClusterConfig c = clusters.get(cluster);
        return c == null ? null : c.namesrv();
    }

    private void ask(String cluster, String topic, List<HostPort> namesrv, int index, Promise<Answer> answer,
                     EventExecutor replyOn) {
        UpstreamConnection connection = namesrv == null ? pool.namesrv() : pool.broker(namesrv.get(index).toString());
        // standard JSON, quoted integer keys: what the union is written in
        Map<String, String> ext = Map.of("topic", topic, "acceptStandardJsonOnly", "true");
        String key = cluster + "\n" + topic;
        connection.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, ext, null, requestTimeoutNanos.getAsLong(), replyOn)
            .addListener(f -> {
                if (f.isSuccess()) {
                    RemotingFrame frame = (RemotingFrame) f.getNow();
                    try {
                        if (frame.code() == ResponseCode.SUCCESS && frame.bodyLength() > 0) {
                            byte[] body = ByteBufUtil.getBytes(frame.bodySlice());
                            lastAnswers.put(key, body);
                            answer.trySuccess(new Answer(cluster, body, false));
                            return;
                        }
                        if (frame.code() == ResponseCode.TOPIC_NOT_EXIST) {
                            lastAnswers.remove(key);
                            answer.trySuccess(new Answer(cluster, null, true));
                            return;
                        }
                        log.warn("cluster {}: name server answered the route of {} with code {}", cluster, topic,
                            frame.code());
                    } finally {
                        frame.release();
                    }
                } else if (namesrv != null && index + 1 < namesrv.size()) {
                    ask(cluster, topic, namesrv, index + 1, answer, replyOn);
                    return;
                } else {
                    log.debug("cluster {}: no name server answered for the route of {}: {}", cluster, topic,
                        f.cause().getMessage());
                }
                byte[] kept = lastAnswers.get(key);
                answer.trySuccess(new Answer(cluster, kept, false));
            });
    }
}
