package io.rmqgw.routing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The cluster as the gateway learns it from name-server answers: brokers (name, cluster, id to
 * address) and, per topic, its queue data. Fed by GET_ROUTEINFO_BY_TOPIC bodies ({@link #learnRoute})
 * and GET_BROKER_CLUSTER_INFO bodies ({@link #learnClusterInfo}), in either JSON dialect; feed it the
 * bodies as the name server wrote them, before the gateway rewrites addresses.
 *
 * <p>Many readers, rare writers: the broker table is one immutable snapshot behind a volatile field,
 * replaced whole by a writer; topics are immutable records in a concurrent map. A body that cannot
 * be read throws {@link MalformedRouteBodyException} before anything changes.
 */
public final class ClusterView {

    /** {@code PermName}: bit 2 readable, bit 1 writable. */
    public static final int PERM_READ = 1 << 2;
    public static final int PERM_WRITE = 1 << 1;
    /** {@code MixAll.MASTER_ID}. */
    public static final long MASTER_ID = 0L;

    /** One broker's queue data for a topic, as QueueData carries it. */
    public record Queues(String brokerName, int readQueueNums, int writeQueueNums, int perm, int topicSysFlag) {

        public boolean readable() {
            return (perm & PERM_READ) != 0;
        }

        public boolean writable() {
            return (perm & PERM_WRITE) != 0;
        }
    }

    /** One message queue of a topic. */
    public record QueueRef(String brokerName, int queueId) {
    }

    /** A topic's queue data, sorted by broker name, and when it was learned. */
    public record TopicRoute(String topic, List<Queues> queues, Instant learnedAt) {

        public TopicRoute {
            queues = List.copyOf(queues);
        }
    }

    /** @param cluster null when no answer has named it yet */
    public record Broker(String name, String cluster, Map<Long, String> addresses) {

        public Broker {
            addresses = Map.copyOf(addresses);
        }

        public Optional<String> masterAddress() {
            return Optional.ofNullable(addresses.get(MASTER_ID));
        }
    }

    private record BrokerTable(Map<String, Broker> byName, Map<String, Set<String>> byCluster) {

        static final BrokerTable EMPTY = new BrokerTable(Map.of(), Map.of());

        /** Indexes brokers by cluster; {@code listed} adds names clusterAddrTable lists without a BrokerData. */
        static BrokerTable of(Map<String, Broker> byName, Map<String, Set<String>> listed) {
            Map<String, Set<String>> byCluster = new TreeMap<>();
            listed.forEach((cluster, names) -> byCluster.computeIfAbsent(cluster, c -> new TreeSet<>()).addAll(names));
            byName.values().stream().filter(b -> b.cluster() != null)
                .forEach(b -> byCluster.computeIfAbsent(b.cluster(), c -> new TreeSet<>()).add(b.name()));
            Map<String, Set<String>> frozen = new LinkedHashMap<>();
            byCluster.forEach((cluster, names) -> frozen.put(cluster, Set.copyOf(names)));
            return new BrokerTable(Map.copyOf(byName), Map.copyOf(frozen));
        }
    }

    private static final Comparator<Queues> BY_BROKER = Comparator.comparing(Queues::brokerName);

    private final Clock clock;
    private final ConcurrentHashMap<String, TopicRoute> topics = new ConcurrentHashMap<>();
    private final Object writeLock = new Object();
    private volatile BrokerTable brokers = BrokerTable.EMPTY;

    public ClusterView() {
        this(Clock.systemUTC());
    }

    /** @param clock stamps {@link TopicRoute#learnedAt}; tests pass a fixed one */
    public ClusterView(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    // ---- learning ----

    /**
     * Records a successful GET_ROUTEINFO_BY_TOPIC answer: replaces the topic's queue data and the
     * entries of the brokers it names (other brokers stay as they were).
     *
     * @throws MalformedRouteBodyException when the body is not a TopicRouteData object; nothing changes
     */
    public void learnRoute(String topic, byte[] body) {
        Objects.requireNonNull(topic, "topic");
        RouteBodyReader.Route route = RouteBodyReader.readRoute(Objects.requireNonNull(body, "body"));
        List<Queues> queues = new ArrayList<>(route.queues());
        queues.sort(BY_BROKER);
        synchronized (writeLock) {
            BrokerTable current = brokers;
            Map<String, Broker> byName = new HashMap<>(current.byName());
            for (Broker b : route.brokers()) {
                Broker known = byName.get(b.name());
                // A route's BrokerData normally names its cluster; keep what we knew if it did not.
                String cluster = b.cluster() != null ? b.cluster() : known == null ? null : known.cluster();
                byName.put(b.name(), new Broker(b.name(), cluster, b.addresses()));
            }
            if (!byName.equals(current.byName())) {
                brokers = BrokerTable.of(byName, Map.of());
            }
            topics.put(topic, new TopicRoute(topic, queues, clock.instant()));
        }
    }

    /** Reads the buffer's readable bytes without moving its indexes or releasing it. */
    public void learnRoute(String topic, ByteBuf body) {
        learnRoute(topic, ByteBufUtil.getBytes(body, body.readerIndex(), body.readableBytes(), false));
    }

    /**
     * Records a GET_BROKER_CLUSTER_INFO answer. It lists every broker the name server knows, so it
     * replaces the whole broker table: brokers it leaves out are forgotten, and their queues stop
     * counting as readable or writable. Topics are kept.
     *
     * @throws MalformedRouteBodyException when the body is not a ClusterInfo object; nothing changes
     */
    public void learnClusterInfo(byte[] body) {
        RouteBodyReader.Cluster info = RouteBodyReader.readClusterInfo(Objects.requireNonNull(body, "body"));
        Map<String, String> clusterOfListed = new HashMap<>();
        info.clusters().forEach((cluster, names) -> names.forEach(name -> clusterOfListed.put(name, cluster)));
        Map<String, Broker> byName = new HashMap<>();
        for (Broker b : info.brokers()) {
            String cluster = b.cluster() != null ? b.cluster() : clusterOfListed.get(b.name());
            byName.put(b.name(), new Broker(b.name(), cluster, b.addresses()));
        }
        clusterOfListed.forEach((name, cluster) -> byName.putIfAbsent(name, new Broker(name, cluster, Map.of())));
        BrokerTable table = BrokerTable.of(byName, info.clusters());
        synchronized (writeLock) {
            brokers = table;
        }
    }

    /** Reads the buffer's readable bytes without moving its indexes or releasing it. */
    public void learnClusterInfo(ByteBuf body) {
        learnClusterInfo(ByteBufUtil.getBytes(body, body.readerIndex(), body.readableBytes(), false));
    }

    /** The name server answered TOPIC_NOT_EXIST: the topic is gone from the cluster. */
    public void forgetTopic(String topic) {
        topics.remove(Objects.requireNonNull(topic, "topic"));
    }

    // ---- queries ----

    public boolean knowsTopic(String topic) {
        return topics.containsKey(topic);
    }

    /** The topic's queue data and when it was learned, to judge staleness by. */
    public Optional<TopicRoute> route(String topic) {
        return Optional.ofNullable(topics.get(topic));
    }

    /** Every queue data of the topic, by broker name; empty when the topic is unknown. */
    public List<Queues> queues(String topic) {
        TopicRoute route = topics.get(topic);
        return route == null ? List.of() : route.queues();
    }

    /**
     * The queues a producer may send to, as the client expands them: {@code writeQueueNums} queues
     * of each writable queue data whose broker has a known master. Order topics
     * ({@code orderTopicConf}) are not expanded from that configuration.
     */
    public List<QueueRef> writableQueues(String topic) {
        Map<String, Broker> known = brokers.byName();
        List<QueueRef> out = new ArrayList<>();
        for (Queues q : queues(topic)) {
            Broker b = known.get(q.brokerName());
            if (q.writable() && b != null && b.addresses().containsKey(MASTER_ID)) {
                expand(q.brokerName(), q.writeQueueNums(), out);
            }
        }
        return out;
    }

    /** The queues a consumer may pull from: {@code readQueueNums} queues of each readable queue data whose broker has any known address. */
    public List<QueueRef> readableQueues(String topic) {
        Map<String, Broker> known = brokers.byName();
        List<QueueRef> out = new ArrayList<>();
        for (Queues q : queues(topic)) {
            Broker b = known.get(q.brokerName());
            if (q.readable() && b != null && !b.addresses().isEmpty()) {
                expand(q.brokerName(), q.readQueueNums(), out);
            }
        }
        return out;
    }

    private static void expand(String brokerName, int count, List<QueueRef> out) {
        for (int i = 0; i < count; i++) {
            out.add(new QueueRef(brokerName, i));
        }
    }

    public Optional<Broker> broker(String brokerName) {
        return Optional.ofNullable(brokers.byName().get(brokerName));
    }

    public Optional<String> masterAddress(String brokerName) {
        return broker(brokerName).flatMap(Broker::masterAddress);
    }

    /** Broker id to address; empty when the broker is unknown. */
    public Map<Long, String> addresses(String brokerName) {
        return broker(brokerName).map(Broker::addresses).orElse(Map.of());
    }

    public Optional<String> clusterOf(String brokerName) {
        return broker(brokerName).map(Broker::cluster);
    }

    public Set<String> brokerNames(String cluster) {
        return brokers.byCluster().getOrDefault(cluster, Set.of());
    }

    public Set<String> clusters() {
        return brokers.byCluster().keySet();
    }

    /** Every known broker name. */
    public Set<String> brokerNames() {
        return brokers.byName().keySet();
    }
}
