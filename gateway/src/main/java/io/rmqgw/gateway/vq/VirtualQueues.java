package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.core.Feature;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.Role;
import io.rmqgw.gateway.core.UpstreamRole;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.gateway.route.RouteQueries;
import io.rmqgw.gateway.route.RouteShaper;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.RouteDialect;
import io.rmqgw.routing.VirtualRoute;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Virtual queues, one per gateway: the groups opted in ({@code virtual-queues:}), the broker the gateway
 * serves for their topics ({@link #BROKER_NAME}, a local role bound with {@link BrokerListeners#ensureServed}),
 * one {@link VirtualConsumer} per group and topic, and the gateway's own membership of those groups on the
 * real brokers (one heartbeat per broker for all of them, as a client instance sends).
 *
 * <p><b>Threads.</b> Every consumer's state belongs to one event loop ({@link #loop}); handlers on client
 * connections hop onto it and answer through their {@code Exchange}. The configuration list is replaced whole
 * (volatile) by a reload.
 */
public final class VirtualQueues implements ServedGroups, Feature, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(VirtualQueues.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The served broker's name in the routes of virtual-queue topics. */
    public static final String BROKER_NAME = "rmqgw-vq";
    /** Its cluster name. */
    public static final String CLUSTER_NAME = "rmqgw";
    /** The key the client registry files the served broker's clients under. */
    public static final String REGISTRY_KEY = "virtual-broker:" + BROKER_NAME;
    private static final long HEARTBEAT_MILLIS = 10_000;
    /** How long a heartbeat asked for by a subscription change waits for more of them (clients join in bursts). */
    private static final long HEARTBEAT_SOON_MILLIS = 50;
    private static final AttributeKey<Set<String>> WATCHED_GROUPS = AttributeKey.valueOf("rmqgw.vq.groups");
    /** RemotingCommand's oneway flag bit. */
    private static final int ONEWAY_FLAG = 1 << 1;
    /** The version brokers write in their own requests to clients (any 4.x/5.x client reads a JSON header). */
    private static final int NOTIFY_VERSION = 0;

    private final BrokerListeners brokers;
    private final RelayContext context;
    private final UpstreamPool pool;
    private final RouteQueries routes;
    private final ClientRegistry clients;
    private final StoreHostMapper storeHosts;
    private final EventLoop loop;
    private final String clientId;
    private final UpstreamRole role;
    private final Bypass bypass;
    private final Map<String, VirtualConsumer> consumers = new ConcurrentHashMap<>();
    private volatile List<VirtualQueueConfig> settings;
    private volatile Set<String> groups;
    private ScheduledFuture<?> heartbeats;
    /** A {@link #heartbeatSoon} is scheduled (on {@link #loop}). */
    private boolean heartbeatPending;
    private volatile boolean closed;

    /** @param table the virtual broker's handler table around its family handlers (where the gateway registers codes) */
    public VirtualQueues(List<VirtualQueueConfig> settings, BrokerListeners brokers, RelayContext context,
                         UpstreamPool pool, RouteQueries routes, String advertised,
                         java.util.function.Function<VirtualBrokerHandlers, HandlerTable> table) {
        this.brokers = brokers;
        this.context = context;
        this.pool = pool;
        this.routes = routes;
        this.clients = context.clients();
        this.storeHosts = brokers.storeHosts();
        this.loop = context.transport().workers().next();
        this.clientId = advertised + "@rmqgw-" + ProcessHandle.current().pid();
        this.bypass = new Bypass(this);
        HandlerTable handlers = table.apply(VirtualBrokerHandlers.of(this, bypass));
        this.role = UpstreamRole.served(handlers, "virtual-queue broker " + BROKER_NAME);
        apply(Objects.requireNonNull(settings, "settings"));
    }

    // ---------------------------------------------------------------- settings

    /** Applies a reloaded list: new entries start, removed ones stop (their real commits pushed), changed ones restart. */
    public void settings(List<VirtualQueueConfig> next) {
        apply(next);
    }

    private synchronized void apply(List<VirtualQueueConfig> next) {
        Map<String, VirtualQueueConfig> wanted = new LinkedHashMap<>();
        for (VirtualQueueConfig c : next) {
            wanted.put(key(c.group(), c.topic()), c);
        }
        for (Map.Entry<String, VirtualConsumer> e : Map.copyOf(consumers).entrySet()) {
            VirtualQueueConfig w = wanted.get(e.getKey());
            if (w == null || !w.equals(e.getValue().config())) {
                consumers.remove(e.getKey());
                loop.execute(e.getValue()::close);
            }
        }
        for (Map.Entry<String, VirtualQueueConfig> e : wanted.entrySet()) {
            consumers.computeIfAbsent(e.getKey(), k -> new VirtualConsumer(e.getValue(), this));
        }
        Set<String> names = new LinkedHashSet<>();
        next.forEach(c -> names.add(c.group()));
        this.groups = Set.copyOf(names);
        this.settings = List.copyOf(next);
        if (!next.isEmpty()) {
            bindListener();
            if (heartbeats == null) {
                heartbeats = loop.scheduleWithFixedDelay(this::heartbeatAll, 0, HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS);
            }
            log.info("virtual queues for {}", next.stream().map(c -> c.group() + " on " + c.topic() + " (x"
                + c.perRealQueue() + ")").toList());
        }
    }

    public List<VirtualQueueConfig> settings() {
        return settings;
    }

    private static String key(String group, String topic) {
        return group + "\u0000" + topic;
    }

    // ---------------------------------------------------------------- what other parts ask

    @Override
    public String name() {
        return "virtual-queues";
    }

    /**
     * On a real broker's role while some group is served, the served groups' registrations stop at the gateway and
     * their members are its own.
     */
    @Override
    public void register(Role role, String upstream, HandlerTable.Builder table) {
        if (role == Role.BROKER && !settings.isEmpty()) {
            table.filter(new ServedGroupsFilter(this), RequestCode.HEART_BEAT, RequestCode.GET_CONSUMER_LIST_BY_GROUP);
        }
    }

    @Override
    public boolean reload(GatewayConfig next) {
        if (settings.equals(next.virtualQueues())) {
            return false;
        }
        settings(next.virtualQueues());
        return true;
    }

    @Override
    public boolean any() {
        return !groups.isEmpty();
    }

    /** Whether clients of {@code group} consume through virtual queues (on any topic). */
    @Override
    public boolean isServed(String group) {
        return group != null && groups.contains(group);
    }

    /** Whether {@code topic}'s route is answered with virtual queues. */
    public boolean servesTopic(String topic) {
        if (topic == null) {
            return false;
        }
        for (VirtualQueueConfig c : settings) {
            if (c.topic().equals(topic)) {
                return true;
            }
        }
        return false;
    }

    /** The consumer of {@code group} on {@code topic}, or null when that pair is not opted in. */
    public VirtualConsumer consumer(String group, String topic) {
        return group == null || topic == null ? null : consumers.get(key(group, topic));
    }

    /** Every consumer, for metrics and tests. */
    public List<VirtualConsumer> consumers() {
        return List.copyOf(consumers.values());
    }

    /** What the name-server role's route answers pass last: {@link #shapeRoute} while some topic is served, else nothing. */
    public RouteShaper routeShaper() {
        return settings.isEmpty() ? RouteShaper.NONE : this::shapeRoute;
    }

    /**
     * The route a client gets for a virtual-queue topic: the real brokers write-only, the gateway's own broker
     * with the virtual queues. Any other topic's body comes back as it is.
     *
     * @param body the route as rewritten for clients (gateway addresses)
     * @param real the route as the name server wrote it (counts the real readable queues)
     */
    public byte[] shapeRoute(String topic, RouteDialect dialect, byte[] body, byte[] real) {
        if (!servesTopic(topic)) {
            return body;
        }
        String address = listenerNow();
        if (address == null) {
            bindListener();
            return VirtualRoute.rewrite(body, null, dialect);
        }
        int readable = VirtualRoute.readableQueues(real);
        int count = 0;
        for (VirtualQueueConfig c : settings) {
            if (c.topic().equals(topic)) {
                VirtualConsumer consumer = consumer(c.group(), topic);
                int owned = consumer == null ? 0 : consumer.virtualQueueCount();
                // before the first rebalance: all the real queues, which a single gateway comes to own
                count = Math.max(count, owned > 0 ? owned : c.perRealQueue() * readable);
            }
        }
        // at least one virtual queue per real queue: groups not served here bypass, one virtual queue per real one
        count = Math.max(count, readable);
        return VirtualRoute.rewrite(body, new VirtualRoute.VirtualBroker(BROKER_NAME, CLUSTER_NAME, address, count),
            dialect);
    }

    /** Client ids of {@code group}'s consumers registered on the virtual broker (GET_CONSUMER_LIST_BY_GROUP). */
    @Override
    public List<String> memberIds(String group) {
        List<String> ids = new ArrayList<>();
        for (String id : new TreeSet<>(clients.clientsOfGroup(ClientRegistry.Role.CONSUMER, group))) {
            if (clients.connection(REGISTRY_KEY, id).isPresent()) {
                ids.add(id);
            }
        }
        return ids;
    }

    /** The served broker's advertised {@code host:port}, once its listeners are bound. */
    public CompletableFuture<String> listener() {
        return brokers.ensureServed(BROKER_NAME, role);
    }

    /** The served broker's advertised address if bound now, else null. */
    public String listenerNow() {
        CompletableFuture<String> f = listener();
        return f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
    }

    private void bindListener() {
        listener().whenComplete((address, failure) -> {
            if (failure != null) {
                log.warn("virtual-queue broker {} has no listener yet (the next route request tries again): {}",
                    BROKER_NAME, failure.getMessage());
            }
        });
    }

    /**
     * Tells {@code connection}'s group members when it goes: once per connection, after its first
     * registration in one of {@code joined}, which are told at once (a new member).
     */
    void watchMembers(Channel connection, Set<String> joined) {
        Set<String> known = connection.attr(WATCHED_GROUPS).setIfAbsent(ConcurrentHashMap.newKeySet());
        boolean first = known == null;
        Set<String> groupsOfConnection = connection.attr(WATCHED_GROUPS).get();
        for (String g : joined) {
            if (groupsOfConnection.add(g)) {
                membersChanged(g);
            }
        }
        if (first) {
            connection.closeFuture().addListener(f -> groupsOfConnection.forEach(this::membersChanged));
        }
    }

    /**
     * NOTIFY_CONSUMER_IDS_CHANGED to every member of {@code group} on the virtual broker, as a broker tells its
     * consumers: they rebalance over the virtual queues at once instead of within 20 s.
     */
    void membersChanged(String group) {
        if (closed) {
            return;
        }
        for (Channel ch : clients.connectionsOfGroup(ClientRegistry.Role.CONSUMER, group, REGISTRY_KEY)) {
            RemotingHeader notify = new RemotingHeader(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, LanguageCode.JAVA,
                NOTIFY_VERSION, 0, ONEWAY_FLAG, null, Map.of("consumerGroup", group));
            ch.writeAndFlush(Frames.encode(ch.alloc(), notify, SerializeType.JSON, null), ch.voidPromise());
        }
    }

    // ---------------------------------------------------------------- the gateway's membership on real brokers

    /**
     * A heartbeat to every master soon (on {@link #loop}), once for any number of calls meanwhile: a client's newer
     * retry-topic subscription must reach the brokers before its pulls of that topic, which they refuse as
     * SUBSCRIPTION_NOT_LATEST until then (the clients back off 3 s each time), not at the next periodic heartbeat.
     */
    void heartbeatSoon() {
        if (!heartbeatPending) {
            heartbeatPending = true;
            loop.schedule(() -> {
                heartbeatPending = false;
                heartbeatAll();
            }, HEARTBEAT_SOON_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Heartbeats every master broker of the virtual topics with all the groups (called on {@link #loop}). */
    void heartbeatAll() {
        if (closed || settings.isEmpty()) {
            return;
        }
        Set<String> masters = new TreeSet<>();
        for (VirtualQueueConfig c : settings) {
            ClusterView cluster = context.cluster();
            if (!cluster.knowsTopic(c.topic())) {
                routes.refresh(c.topic(), loop);
                continue;
            }
            for (ClusterView.QueueRef q : cluster.readableQueues(c.topic())) {
                cluster.masterAddress(q.brokerName()).ifPresent(masters::add);
            }
        }
        byte[] body = heartbeatBody();
        for (String master : masters) {
            heartbeat(master, body);
        }
    }

    /** Heartbeats one broker now (before a rebalance asks it for the group's members). */
    io.netty.util.concurrent.Future<RemotingFrame> heartbeat(String master, byte[] body) {
        var f = pool.broker(master).request(RequestCode.HEART_BEAT, null, Unpooled.wrappedBuffer(body),
            context.upstream().requestTimeoutNanos(), loop);
        f.addListener(done -> {
            if (done.isSuccess()) {
                ((RemotingFrame) done.getNow()).release();
            } else {
                log.debug("heartbeat to {} failed: {}", master, done.cause().getMessage());
            }
        });
        return f;
    }

    /** HeartbeatData: the gateway's client id, no producers, one consumer per virtual group (clustering). */
    byte[] heartbeatBody() {
        ObjectNode root = JSON.createObjectNode();
        root.put("clientID", clientId);
        root.putArray("producerDataSet");
        ArrayNode consumerData = root.putArray("consumerDataSet");
        Map<String, List<VirtualConsumer>> byGroup = new LinkedHashMap<>();
        for (VirtualConsumer c : consumers.values()) {
            byGroup.computeIfAbsent(c.config().group(), g -> new ArrayList<>()).add(c);
        }
        for (Map.Entry<String, List<VirtualConsumer>> e : byGroup.entrySet()) {
            ObjectNode cd = consumerData.addObject();
            cd.put("groupName", e.getKey());
            cd.put("consumeType", "CONSUME_PASSIVELY");
            cd.put("messageModel", "CLUSTERING");
            cd.put("consumeFromWhere", e.getValue().get(0).startPoint().consumeFromWhere);
            cd.put("unitMode", false);
            ArrayNode subs = cd.putArray("subscriptionDataSet");
            for (VirtualConsumer c : e.getValue()) {
                c.subscription().writeTo(subs.addObject(), c.config().topic());
            }
            // the group's retry topic, as its clients subscribe it (the newest version they sent): they pull it from
            // the real brokers themselves, which check that version against the gateway's
            Subscription retry = e.getValue().stream().map(VirtualConsumer::retrySubscription)
                .max(java.util.Comparator.comparingLong(Subscription::version)).orElse(Subscription.ALL);
            retry.writeTo(subs.addObject(), "%RETRY%" + e.getKey());
        }
        return root.toString().getBytes(StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- shared with consumers

    /** The event loop that owns every consumer's state (diagnostics and tests submit onto it). */
    public EventLoop loop() {
        return loop;
    }

    String clientId() {
        return clientId;
    }

    RelayContext context() {
        return context;
    }

    UpstreamPool pool() {
        return pool;
    }

    StoreHostMapper storeHosts() {
        return storeHosts;
    }

    RouteQueries routes() {
        return routes;
    }

    ClientRegistry clients() {
        return clients;
    }

    boolean closed() {
        return closed;
    }

    /**
     * The gateway stops: every consumer answers its held pulls (PULL_NOT_FOUND; clients pull again elsewhere)
     * and fetches nothing more; what was acknowledged is pushed. Waits at most 5 s for the loop.
     */
    public void drain() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        bypass.pulls().drain();
        loop.execute(() -> {
            try {
                consumers.values().forEach(VirtualConsumer::drain);
            } finally {
                done.complete(null);
            }
        });
        try {
            done.get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("virtual-queue consumers did not drain within 5 s: {}", e.toString());
        }
    }

    /**
     * The consumers' fetches and the bypass groups' pulls waiting at brokers (long polls, in the pool's in-flight
     * count, that deliver nothing once draining).
     */
    public int fetchesInFlight() {
        int n = bypass.pulls().inFlight();
        for (VirtualConsumer c : consumers.values()) {
            n += c.fetchesInFlight();
        }
        return n;
    }

    /** Stops every consumer, pushing their real commits; call before the pool closes. */
    @Override
    public void close() {
        closed = true;
        if (heartbeats != null) {
            heartbeats.cancel(false);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                // each on its own: one that throws must not leave the others' windows and leases unreleased
                consumers.forEach((key, consumer) -> {
                    try {
                        consumer.close();
                    } catch (RuntimeException e) {
                        log.warn("virtual queues: closing {} failed", key, e);
                    }
                });
            } finally {
                done.complete(null);
            }
        });
        try {
            done.get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("virtual-queue consumers did not stop within 5 s: {}", e.toString());
        }
    }
}
