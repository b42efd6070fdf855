package io.rmqgw.gateway.multicluster;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.config.ClusterConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.LogicalTopicConfig;
import io.rmqgw.gateway.core.Feature;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.Role;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.routing.RouteUnion;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logical topics over several clusters ({@code clusters:}, {@code logical-topics:}), the feature: clients get the
 * union of the clusters' routes ({@link LogicalRouteFilter}), so producers and consumers reach every cluster through
 * the gateway's listeners with their real queue ids (offsets stay in each cluster's brokers); sends are steered by
 * the brokers' health ({@link SendSteering}, {@link ClusterHealth}), which answers and failures of sends and
 * probes keep. Everything durable stays in the clusters; the health is per gateway and soft.
 */
public final class LogicalTopics implements Feature {

    private static final Logger log = LoggerFactory.getLogger(LogicalTopics.class);

    /** How often brokers that are not plainly well (or not heard from) are probed, and unions refreshed. */
    static final long TICK_MILLIS = 250;
    /** A broker not heard from for this long is probed even when well (its latency stays known). */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** Unions are asked for again this often (clients ask every 30 s). */
    static final int REFRESH_TICKS = 20;
    static final long PROBE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** The settings in force: clusters by name and logical topics by topic. */
    private record Settings(Map<String, ClusterConfig> clusters, Map<String, LogicalTopicConfig> topics) {
        static Settings of(GatewayConfig config) {
            Map<String, LogicalTopicConfig> topics = new HashMap<>();
            config.logicalTopics().forEach(t -> topics.put(t.topic(), t));
            return new Settings(config.clusters(), Map.copyOf(topics));
        }
    }

    private final RelayContext context;
    private final UpstreamPool pool;
    private final BrokerListeners brokers;
    private final UnionRoutes routes;
    private final ClusterHealth health = new ClusterHealth();
    private final LogicalTopicMeters meters;
    private final LogicalRouteFilter routeFilter;
    private final Set<String> probing = ConcurrentHashMap.newKeySet();
    private final Set<String> refreshing = ConcurrentHashMap.newKeySet();
    private final Map<String, BrokerHealth.State> clusterStates = new ConcurrentHashMap<>();
    private volatile Settings settings;
    private ScheduledFuture<?> ticks;
    private int tick;

    public LogicalTopics(GatewayConfig config, RelayContext context, UpstreamPool pool, BrokerListeners brokers) {
        this.context = context;
        this.pool = pool;
        this.brokers = brokers;
        this.routes = new UnionRoutes(pool, () -> context.upstream().requestTimeoutNanos(), () -> settings.clusters());
        this.meters = new LogicalTopicMeters(context.metrics().registry());
        this.routeFilter = new LogicalRouteFilter(this, brokers, context.cluster());
        apply(Settings.of(config));
    }

    @Override
    public String name() {
        return "logical-topics";
    }

    /**
     * While some logical topic is configured: its routes, those of retry and dead-letter topics and the cluster list
     * on the name-server role; its sends on every broker role.
     */
    @Override
    public void register(Role role, String upstream, HandlerTable.Builder table) {
        if (!active()) {
            return;
        }
        if (role == Role.NAMESRV) {
            table.filter(routeFilter, RequestCode.GET_ROUTEINFO_BY_TOPIC, RequestCode.GET_BROKER_CLUSTER_INFO);
        } else if (role == Role.BROKER) {
            table.filter(new SendSteering(this, upstream), SendSteering.CODES);
            table.filter(new RenamedBrokerAnswers(this, upstream), RenamedBrokerAnswers.GET_TOPIC_STATS_INFO,
                RenamedBrokerAnswers.GET_CONSUME_STATS);
        }
    }

    @Override
    public synchronized boolean reload(GatewayConfig next) {
        Settings replacement = Settings.of(next);
        if (replacement.equals(settings)) {
            return false;
        }
        apply(replacement);
        return true;
    }

    private synchronized void apply(Settings next) {
        settings = next;
        routes.retain(next.topics().keySet());
        Set<String> clusters = new HashSet<>(next.clusters().keySet());
        clusters.add(LogicalTopicConfig.DEFAULT_CLUSTER);
        for (String c : clusters) {
            meters.cluster(c, name -> health.clusterWeight(name, System.nanoTime()),
                name -> health.clusterState(name, System.nanoTime()).name().toLowerCase(java.util.Locale.ROOT));
        }
        if (active() && ticks == null) {
            ticks = context.transport().workers().next().scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS,
                TimeUnit.MILLISECONDS);
        } else if (!active() && ticks != null) {
            ticks.cancel(false);
            ticks = null;
        }
        if (active()) {
            log.info("logical topics: {} over clusters {}", next.topics().keySet(), clusters);
        }
    }

    /** Whether some logical topic is configured. */
    public boolean active() {
        return !settings.topics().isEmpty();
    }

    /** The logical topic named {@code topic}, or null. */
    LogicalTopicConfig topic(String topic) {
        return topic == null ? null : settings.topics().get(topic);
    }

    /**
     * The clusters whose routes of {@code topic} clients get together: a logical topic's, every cluster for a retry
     * or dead-letter topic; null for any other topic (the name servers of {@code default} answer it).
     */
    List<String> clustersOf(String topic) {
        LogicalTopicConfig logical = topic(topic);
        if (logical != null) {
            return logical.clusters();
        }
        return RetryTopics.spansClusters(topic) && active() ? routes.allClusters() : null;
    }

    Map<String, ClusterConfig> clusters() {
        return settings.clusters();
    }

    UnionRoutes routes() {
        return routes;
    }

    ClusterHealth health() {
        return health;
    }

    LogicalTopicMeters meters() {
        return meters;
    }

    UpstreamPool pool() {
        return pool;
    }

    StoreHostMapper storeHosts() {
        return brokers.storeHosts();
    }

    long requestTimeoutNanos() {
        return context.upstream().requestTimeoutNanos();
    }

    /** The shown names of the union's brokers that are down, while some broker of it is not. */
    Set<String> downBrokers(UnionRoute union) {
        long now = System.nanoTime();
        Set<String> down = new HashSet<>();
        for (RouteUnion.Broker b : union.brokers()) {
            if (b.master() != null && health.state(b.master(), now) == BrokerHealth.State.DOWN) {
                down.add(b.shownName());
            }
        }
        return down.size() < union.brokers().size() ? down : Set.of();
    }

    /** Puts {@code topic}'s union together in the background (a send came before any route request did). */
    void refreshSoon(LogicalTopicConfig topic) {
        if (refreshing.add(topic.topic())) {
            routes.fetch(topic.topic(), topic.clusters(), context.transport().workers().next())
                .addListener(f -> refreshing.remove(topic.topic()));
        }
    }

    /** Probes the brokers that need it, refreshes the unions now and then, and counts failovers and failbacks. */
    private void tick() {
        try {
            Settings s = settings;
            if (++tick % REFRESH_TICKS == 0) {
                routes.refreshBrokerNames(context.transport().workers().next());
                s.topics().values().forEach(this::refreshSoon);
            }
            long now = System.nanoTime();
            long fastest = health.fastest();
            Set<String> seen = new HashSet<>();
            for (UnionRoute union : routes.all().values()) {
                for (RouteUnion.Broker b : union.brokers()) {
                    if (b.master() == null || !seen.add(b.master())) {
                        continue;
                    }
                    BrokerHealth h = health.of(b.cluster(), b.master(), now);
                    meters.broker(b.cluster(), b.master(), address -> health.share(address, System.nanoTime()));
                    if (h.wantsProbe(now, IDLE_NANOS, fastest)) {
                        probe(h, union.topic());
                    }
                }
            }
            health.retain(seen);
            for (String cluster : clustersOf(s)) {
                noteState(cluster, health.clusterState(cluster, now));
            }
        } catch (RuntimeException e) {
            log.warn("logical topics: health tick failed", e);
        }
    }

    private static Set<String> clustersOf(Settings s) {
        Set<String> all = new HashSet<>(s.clusters().keySet());
        all.add(LogicalTopicConfig.DEFAULT_CLUSTER);
        return all;
    }

    private void noteState(String cluster, BrokerHealth.State now) {
        BrokerHealth.State before = clusterStates.put(cluster, now);
        if (before == null || before == now) {
            return;
        }
        if (now == BrokerHealth.State.DOWN) {
            meters.failover(cluster);
            log.warn("cluster {} is down: sends of its logical topics go to the other clusters", cluster);
        } else if (now == BrokerHealth.State.UP && before == BrokerHealth.State.DOWN) {
            meters.failback(cluster);
            log.info("cluster {} is up again: its logical topics' sends return to it", cluster);
        } else {
            log.info("cluster {} is {} (was {})", cluster, now, before);
        }
    }

    /** GET_MAX_OFFSET of queue 0: cheap, answered by the broker itself, needs no group. */
    private void probe(BrokerHealth h, String topic) {
        if (!probing.add(h.address)) {
            return;
        }
        EventExecutor loop = context.transport().workers().next();
        long sent = System.nanoTime();
        long timeout = Math.min(PROBE_TIMEOUT_NANOS, context.upstream().requestTimeoutNanos());
        pool.broker(h.address).request(RequestCode.GET_MAX_OFFSET, Map.of("topic", topic, "queueId", "0"), null,
            timeout, loop).addListener(f -> {
                probing.remove(h.address);
                long now = System.nanoTime();
                if (f.isSuccess()) {
                    RemotingFrame answer = (RemotingFrame) f.getNow();
                    int code = answer.code();
                    answer.release();
                    if (code == ResponseCode.SYSTEM_BUSY || code == ResponseCode.SYSTEM_ERROR) {
                        h.failed(BrokerHealth.Failure.REFUSED, now, false);
                    } else {
                        h.answered(now - sent, now, false);
                    }
                } else {
                    h.failed(f.cause() instanceof io.rmqgw.gateway.pool.UpstreamException u
                        && u.reason() == io.rmqgw.gateway.pool.UpstreamException.Reason.TIMEOUT
                        ? BrokerHealth.Failure.TIMEOUT : BrokerHealth.Failure.UNREACHABLE, now, false);
                }
            });
    }

    /** Stops probing (the gateway is stopping). */
    @Override
    public synchronized void close() {
        if (ticks != null) {
            ticks.cancel(false);
            ticks = null;
        }
    }
}
