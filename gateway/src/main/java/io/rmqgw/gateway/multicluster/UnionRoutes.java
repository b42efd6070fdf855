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
import io.rmqgw.routing.MalformedRouteBodyException;
import io.rmqgw.routing.RouteUnion;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the clusters' name servers say, put together: the routes of logical topics (and of retry and dead-letter
 * topics, which a group's consumers of a logical topic have on every cluster) and the clusters' broker lists. Each
 * cluster's name servers are asked in parallel on the gateway's pooled connections ({@code default}'s on the pool's
 * name-server connection, the others' tried in their order). The last answer of each cluster is kept and used while
 * its name servers cannot be reached, so a cluster whose name servers are down keeps its queues; a cluster that
 * answers that it has no such topic drops out. Broker names are shown the same in every union ({@link #naming}).
 */
final class UnionRoutes {

    private static final Logger log = LoggerFactory.getLogger(UnionRoutes.class);

    /** What one cluster gave: a body, none (it has no such topic), or nothing heard (and nothing kept). */
    private record Answer(String cluster, byte[] body, boolean unknownTopic) {
    }

    private final UpstreamPool pool;
    private final LongSupplier requestTimeoutNanos;
    private final Supplier<Map<String, ClusterConfig>> clusters;
    private final ConcurrentMap<String, byte[]> lastAnswers = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, UnionRoute> unions = new ConcurrentHashMap<>();
    /** The broker names of each cluster, from its cluster info and routes: what decides the names shown. */
    private final ConcurrentMap<String, Set<String>> brokerNames = new ConcurrentHashMap<>();
    /** Each broker address seen: its cluster and real name. */
    private final ConcurrentMap<String, List<String>> brokerAt = new ConcurrentHashMap<>();

    UnionRoutes(UpstreamPool pool, LongSupplier requestTimeoutNanos, Supplier<Map<String, ClusterConfig>> clusters) {
        this.pool = pool;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.clusters = clusters;
    }

    /** Every cluster, {@code default} first, then those of {@code clusters:} in their order. */
    List<String> allClusters() {
        List<String> all = new ArrayList<>();
        all.add(LogicalTopicConfig.DEFAULT_CLUSTER);
        all.addAll(clusters.get().keySet());
        return all;
    }

    /**
     * The names clients see: {@code default}'s brokers keep theirs; a broker of another cluster whose name a broker of
     * an earlier cluster (in {@link #allClusters} order) has is shown as {@code CLUSTER-NAME}. The same in every
     * union, and on every gateway with the same clusters.
     */
    RouteUnion.Naming naming() {
        return new BrokerNaming(allClusters(), brokerNames);
    }

    /**
     * The name clients see for the broker at {@code address} when it differs from its own, else null (its own, or an
     * address never seen in a route or cluster list).
     */
    String renamed(String address) {
        List<String> clusterAndName = brokerAt.get(address);
        if (clusterAndName == null) {
            return null;
        }
        String shown = naming().shown(clusterAndName.get(0), clusterAndName.get(1));
        return shown.equals(clusterAndName.get(1)) ? null : shown;
    }

    /** The real name of the broker at {@code address}, or null. */
    String realName(String address) {
        List<String> clusterAndName = brokerAt.get(address);
        return clusterAndName == null ? null : clusterAndName.get(1);
    }

    /** The latest union of {@code topic}, or null while none was made. */
    UnionRoute latest(String topic) {
        return unions.get(topic);
    }

    Map<String, UnionRoute> all() {
        return unions;
    }

    /** Forgets what it kept for topics not in {@code topics} (retry and dead-letter topics are kept). */
    void retain(Set<String> topics) {
        unions.keySet().removeIf(t -> !topics.contains(t) && !RetryTopics.spansClusters(t));
        lastAnswers.keySet().removeIf(k -> {
            String topic = k.substring(k.indexOf('\n') + 1);
            return !topic.isEmpty() && !topics.contains(topic) && !RetryTopics.spansClusters(topic);
        });
    }

    /**
     * Asks every cluster of {@code topic} ({@code clusterList}, in order of preference) and completes on
     * {@code replyOn} with the union, empty when no cluster has the topic; fails when no cluster answered and none
     * had answered before.
     */
    Future<Optional<UnionRoute>> fetch(String topic, List<String> clusterList, EventExecutor replyOn) {
        Promise<Optional<UnionRoute>> result = replyOn.newPromise();
        Runnable routes = () -> askAll(clusterList, RequestCode.GET_ROUTEINFO_BY_TOPIC, topic, replyOn)
            .addListener(f -> completeRoute(topic, clusterList, (Answer[]) f.getNow(), result));
        if (allClusters().stream().allMatch(brokerNames::containsKey)) {
            routes.run();
        } else {
            // the names shown depend on every cluster's brokers: learn them before the first union
            refreshBrokerNames(replyOn).addListener(f -> routes.run());
        }
        return result;
    }

    /** Asks every cluster for its brokers again; completes (never fails) once each answered or failed. */
    Future<byte[]> refreshBrokerNames(EventExecutor replyOn) {
        Promise<byte[]> done = replyOn.newPromise();
        List<String> all = allClusters();
        askAll(all, RequestCode.GET_BROKER_CLUSTER_INFO, "", replyOn).addListener(f -> {
            Answer[] answers = (Answer[]) f.getNow();
            List<RouteUnion.Part> parts = new ArrayList<>();
            for (Answer a : answers) {
                if (a.body() == null) {
                    brokerNames.putIfAbsent(a.cluster(), Set.of());
                    continue;
                }
                try {
                    Set<String> names = RouteUnion.brokerNames(a.body());
                    RouteUnion.brokerAddresses(a.body()).forEach((name, addresses) -> addresses.forEach(address ->
                        brokerAt.put(address, List.of(a.cluster(), name))));
                    brokerNames.compute(a.cluster(), (c, old) -> {
                        Set<String> both = old == null ? new HashSet<>() : new HashSet<>(old);
                        both.addAll(names);
                        return Set.copyOf(both);
                    });
                    parts.add(new RouteUnion.Part(a.cluster(), a.body()));
                } catch (MalformedRouteBodyException e) {
                    log.warn("cluster {}: unreadable cluster info: {}", a.cluster(), e.getMessage());
                }
            }
            done.trySuccess(parts.isEmpty() ? null : RouteUnion.clusterInfo(parts, naming()));
        });
        return done;
    }

    private void completeRoute(String topic, List<String> clusterList, Answer[] answers,
                               Promise<Optional<UnionRoute>> result) {
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
                unions.remove(topic);
                result.trySuccess(Optional.empty());
            } else {
                result.tryFailure(new IllegalStateException("no name server of clusters " + clusterList
                    + " answered for the route of " + topic));
            }
            return;
        }
        try {
            RouteUnion.Result union = RouteUnion.of(parts, naming());
            for (RouteUnion.Broker b : union.brokers()) {
                b.addresses().values().forEach(address -> brokerAt.put(address, List.of(b.cluster(), b.realName())));
                brokerNames.compute(b.cluster(), (c, old) -> old == null ? Set.of(b.realName())
                    : old.contains(b.realName()) ? old : addTo(old, b.realName()));
            }
            UnionRoute route = UnionRoute.of(topic, clusterList, union);
            unions.put(topic, route);
            result.trySuccess(Optional.of(route));
        } catch (RuntimeException e) {
            result.tryFailure(e);
        }
    }

    private static Set<String> addTo(Set<String> names, String name) {
        Set<String> more = new HashSet<>(names);
        more.add(name);
        return Set.copyOf(more);
    }

    /** Asks each of {@code clusterList} with {@code code} ({@code topic} empty: no topic field). */
    private Future<Answer[]> askAll(List<String> clusterList, int code, String topic, EventExecutor replyOn) {
        Promise<Answer[]> all = replyOn.newPromise();
        Answer[] answers = new Answer[clusterList.size()];
        AtomicInteger left = new AtomicInteger(clusterList.size());
        Map<String, ClusterConfig> configured = clusters.get();
        for (int i = 0; i < clusterList.size(); i++) {
            int index = i;
            String cluster = clusterList.get(i);
            ClusterConfig c = configured.get(cluster);
            Promise<Answer> one = replyOn.newPromise();
            ask(cluster, code, topic, c == null ? null : c.namesrv(), 0, one, replyOn);
            one.addListener(f -> {
                answers[index] = (Answer) f.getNow();
                if (left.decrementAndGet() == 0) {
                    all.trySuccess(answers);
                }
            });
        }
        return all;
    }

    /** {@code namesrv} null for {@code default}: the pool's name-server connection (with its own failover). */
    private void ask(String cluster, int code, String topic, List<HostPort> namesrv, int index, Promise<Answer> answer,
                     EventExecutor replyOn) {
        UpstreamConnection connection = namesrv == null ? pool.namesrv() : pool.broker(namesrv.get(index).toString());
        // standard JSON, quoted integer keys: what the union is written in
        Map<String, String> ext = topic.isEmpty() ? null : Map.of("topic", topic, "acceptStandardJsonOnly", "true");
        String key = cluster + "\n" + topic;
        connection.request(code, ext, null, requestTimeoutNanos.getAsLong(), replyOn).addListener(f -> {
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
                    log.warn("cluster {}: name server answered request {} ({}) with code {}", cluster, code, topic,
                        frame.code());
                } finally {
                    frame.release();
                }
            } else if (namesrv != null && index + 1 < namesrv.size()) {
                ask(cluster, code, topic, namesrv, index + 1, answer, replyOn);
                return;
            } else {
                log.debug("cluster {}: no name server answered request {} ({}): {}", cluster, code, topic,
                    f.cause().getMessage());
            }
            answer.trySuccess(new Answer(cluster, lastAnswers.get(key), false));
        });
    }
}
