package io.rmqgw.routing;

import static io.rmqgw.routing.RouteParts.queue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.alibaba.fastjson2.JSONWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.rmqgw.routing.ClusterView.QueueRef;
import io.rmqgw.routing.ClusterView.Queues;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.Test;

class ClusterViewTest {

    private static final String A_MASTER = "10.0.0.1:10911";
    private static final String A_SLAVE = "10.0.0.2:10911";
    private static final String B_MASTER = "10.0.0.3:10911";
    private static final String C_MASTER = "10.0.1.1:10911";

    /** Every serialization a 4.9.x or 5.4.0 name server may answer with, by name. */
    private static final Map<String, Function<Object, byte[]>> DIALECTS = Map.of(
        "fastjson2 unquoted keys (5.4.0 encode())", ClusterViewTest::legacyFastjson2,
        "fastjson2 standard (5.4.0, version >= 401)", body -> ((org.apache.rocketmq.remoting.protocol.RemotingSerializable) body)
            .encode(JSONWriter.Feature.BrowserCompatible, JSONWriter.Feature.MapSortField),
        "fastjson1 unquoted keys (4.9.x encode())", body -> com.alibaba.fastjson.JSON.toJSONString(body)
            .getBytes(StandardCharsets.UTF_8),
        "fastjson1 standard (4.9.x, version >= 401)", body -> com.alibaba.fastjson.JSON.toJSONString(body,
            com.alibaba.fastjson.serializer.SerializerFeature.BrowserCompatible,
            com.alibaba.fastjson.serializer.SerializerFeature.QuoteFieldNames,
            com.alibaba.fastjson.serializer.SerializerFeature.MapSortField).getBytes(StandardCharsets.UTF_8));

    private static byte[] legacyFastjson2(Object body) {
        return ((org.apache.rocketmq.remoting.protocol.RemotingSerializable) body).encode();
    }


    private static BrokerData broker(String cluster, String name, Object... idsAndAddresses) {
        HashMap<Long, String> addrs = new HashMap<>();
        for (int i = 0; i < idsAndAddresses.length; i += 2) {
            addrs.put(((Number) idsAndAddresses[i]).longValue(), (String) idsAndAddresses[i + 1]);
        }
        return new BrokerData(cluster, name, addrs);
    }

    private static TopicRouteData route(List<QueueData> queues, List<BrokerData> brokers) {
        TopicRouteData route = new TopicRouteData();
        route.setQueueDatas(new ArrayList<>(queues));
        route.setBrokerDatas(new ArrayList<>(brokers));
        route.setFilterServerTable(new HashMap<>());
        return route;
    }

    /** TopicTest on broker-b (listed first, as name servers do not sort) and broker-a, both read-write. */
    private static TopicRouteData twoBrokerRoute() {
        return route(List.of(queue("broker-b", 4, 4, 6), queue("broker-a", 8, 8, 6)),
            List.of(broker("DefaultCluster", "broker-b", 0L, B_MASTER),
                broker("DefaultCluster", "broker-a", 0L, A_MASTER, 1L, A_SLAVE)));
    }

    private static ClusterInfo clusterInfo(List<BrokerData> brokers, Map<String, Set<String>> clusters) {
        ClusterInfo info = new ClusterInfo();
        Map<String, BrokerData> byName = new HashMap<>();
        brokers.forEach(b -> byName.put(b.getBrokerName(), b));
        info.setBrokerAddrTable(byName);
        Map<String, Set<String>> table = new HashMap<>();
        clusters.forEach((c, names) -> table.put(c, new HashSet<>(names)));
        info.setClusterAddrTable(table);
        return info;
    }

    private static List<QueueRef> refs(String brokerName, int count) {
        List<QueueRef> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(new QueueRef(brokerName, i));
        }
        return out;
    }

    private static List<QueueRef> concat(List<QueueRef> a, List<QueueRef> b) {
        List<QueueRef> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    @Test
    void learnsARouteInEveryDialect() {
        TopicRouteData route = twoBrokerRoute();
        DIALECTS.forEach((dialect, encode) -> {
            byte[] body = encode.apply(route);
            if (dialect.contains("unquoted")) {
                assertTrue(new String(body, StandardCharsets.UTF_8).contains("{0:\""), dialect + ": " + new String(body));
            }
            ClusterView view = new ClusterView();
            view.learnRoute("TopicTest", body);

            assertTrue(view.knowsTopic("TopicTest"), dialect);
            assertFalse(view.knowsTopic("Other"), dialect);
            assertEquals(List.of(new Queues("broker-a", 8, 8, 6, 0), new Queues("broker-b", 4, 4, 6, 0)),
                view.queues("TopicTest"), dialect);
            List<QueueRef> all = concat(refs("broker-a", 8), refs("broker-b", 4));
            assertEquals(all, view.writableQueues("TopicTest"), dialect);
            assertEquals(all, view.readableQueues("TopicTest"), dialect);
            assertEquals(Optional.of(A_MASTER), view.masterAddress("broker-a"), dialect);
            assertEquals(Map.of(0L, A_MASTER, 1L, A_SLAVE), view.addresses("broker-a"), dialect);
            assertEquals(Map.of(0L, B_MASTER), view.addresses("broker-b"), dialect);
            assertEquals(Optional.of("DefaultCluster"), view.clusterOf("broker-b"), dialect);
            assertEquals(Set.of("DefaultCluster"), view.clusters(), dialect);
            assertEquals(Set.of("broker-a", "broker-b"), view.brokerNames("DefaultCluster"), dialect);
            assertEquals(Set.of(), view.brokerNames("Elsewhere"), dialect);
            assertEquals(Optional.empty(), view.masterAddress("broker-x"), dialect);
            assertEquals(Map.of(), view.addresses("broker-x"), dialect);
        });
    }

    @Test
    void learnsClusterInfoInEveryDialect() {
        ClusterInfo info = clusterInfo(
            List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER, 1L, A_SLAVE),
                broker("DefaultCluster", "broker-b", 0L, B_MASTER),
                broker("OtherCluster", "broker-c", 0L, C_MASTER)),
            Map.of("DefaultCluster", Set.of("broker-a", "broker-b"), "OtherCluster", Set.of("broker-c")));
        DIALECTS.forEach((dialect, encode) -> {
            ClusterView view = new ClusterView();
            view.learnClusterInfo(encode.apply(info));

            assertEquals(Set.of("DefaultCluster", "OtherCluster"), view.clusters(), dialect);
            assertEquals(Set.of("broker-a", "broker-b"), view.brokerNames("DefaultCluster"), dialect);
            assertEquals(Set.of("broker-c"), view.brokerNames("OtherCluster"), dialect);
            assertEquals(Optional.of("OtherCluster"), view.clusterOf("broker-c"), dialect);
            assertEquals(Map.of(0L, A_MASTER, 1L, A_SLAVE), view.addresses("broker-a"), dialect);
            assertEquals(Optional.of(C_MASTER), view.masterAddress("broker-c"), dialect);
            assertEquals(Set.of("broker-a", "broker-b", "broker-c"), view.brokerNames(), dialect);
            assertFalse(view.knowsTopic("TopicTest"), "cluster info names no topics");
        });
    }

    @Test
    void clusterAddrTableNamesABrokerWithoutBrokerData() {
        ClusterInfo info = clusterInfo(List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER)),
            Map.of("DefaultCluster", Set.of("broker-a", "broker-b")));
        ClusterView view = new ClusterView();
        view.learnClusterInfo(info.encode());
        assertEquals(Set.of("broker-a", "broker-b"), view.brokerNames("DefaultCluster"));
        assertEquals(Optional.of("DefaultCluster"), view.clusterOf("broker-b"));
        assertEquals(Map.of(), view.addresses("broker-b"));
    }

    @Test
    void permsDecideReadableAndWritableQueues() {
        TopicRouteData readOnly = route(List.of(queue("broker-a", 8, 4, 4)),
            List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER)));
        TopicRouteData writeOnly = route(List.of(queue("broker-a", 8, 4, 2)),
            List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER)));
        TopicRouteData mixed = route(List.of(queue("broker-a", 2, 6, 6), queue("broker-b", 4, 4, 4)),
            List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER), broker("DefaultCluster", "broker-b", 0L, B_MASTER)));
        ClusterView view = new ClusterView();
        view.learnRoute("ReadOnly", legacyFastjson2(readOnly));
        view.learnRoute("WriteOnly", legacyFastjson2(writeOnly));
        view.learnRoute("Mixed", legacyFastjson2(mixed));

        assertEquals(List.of(), view.writableQueues("ReadOnly"));
        assertEquals(refs("broker-a", 8), view.readableQueues("ReadOnly"));
        assertEquals(refs("broker-a", 4), view.writableQueues("WriteOnly"));
        assertEquals(List.of(), view.readableQueues("WriteOnly"));
        assertEquals(refs("broker-a", 6), view.writableQueues("Mixed"), "writeQueueNums, not readQueueNums");
        assertEquals(concat(refs("broker-a", 2), refs("broker-b", 4)), view.readableQueues("Mixed"));
        assertEquals(List.of(), view.writableQueues("Unknown"));
        assertEquals(List.of(), view.queues("Unknown"));
    }

    @Test
    void aTopicDisappearsFromTheCluster() {
        ClusterView view = new ClusterView();
        view.learnRoute("TopicTest", legacyFastjson2(twoBrokerRoute()));
        view.learnRoute("Survivor", legacyFastjson2(twoBrokerRoute()));

        // a newer route no longer lists broker-b for the topic: only broker-a's queues remain
        view.learnRoute("TopicTest", legacyFastjson2(route(List.of(queue("broker-a", 8, 8, 6)),
            List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER, 1L, A_SLAVE)))));
        assertEquals(refs("broker-a", 8), view.writableQueues("TopicTest"));
        assertEquals(Optional.of(B_MASTER), view.masterAddress("broker-b"), "other topics still use broker-b");

        // the name server answers TOPIC_NOT_EXIST
        view.forgetTopic("TopicTest");
        assertFalse(view.knowsTopic("TopicTest"));
        assertEquals(List.of(), view.queues("TopicTest"));
        assertEquals(List.of(), view.writableQueues("TopicTest"));
        assertTrue(view.knowsTopic("Survivor"));
    }

    @Test
    void brokersLeavingTheClusterStopCountingForQueues() {
        ClusterView view = new ClusterView();
        view.learnRoute("TopicTest", legacyFastjson2(twoBrokerRoute()));

        // broker-a's master goes away, its slave stays: readable, not writable (as clients treat it)
        view.learnClusterInfo(clusterInfo(
            List.of(broker("DefaultCluster", "broker-a", 1L, A_SLAVE), broker("DefaultCluster", "broker-b", 0L, B_MASTER)),
            Map.of("DefaultCluster", Set.of("broker-a", "broker-b"))).encode());
        assertEquals(refs("broker-b", 4), view.writableQueues("TopicTest"));
        assertEquals(concat(refs("broker-a", 8), refs("broker-b", 4)), view.readableQueues("TopicTest"));
        assertEquals(Optional.empty(), view.masterAddress("broker-a"));

        // broker-b leaves the cluster entirely
        view.learnClusterInfo(clusterInfo(List.of(broker("DefaultCluster", "broker-a", 1L, A_SLAVE)),
            Map.of("DefaultCluster", Set.of("broker-a"))).encode());
        assertEquals(List.of(), view.writableQueues("TopicTest"));
        assertEquals(refs("broker-a", 8), view.readableQueues("TopicTest"));
        assertEquals(Set.of("broker-a"), view.brokerNames("DefaultCluster"));
        assertEquals(Optional.empty(), view.clusterOf("broker-b"));
        assertEquals(2, view.queues("TopicTest").size(), "the topic's own queue data is kept as learned");
    }

    @Test
    void recordsWhenEachTopicWasLearned() {
        Instant[] now = {Instant.parse("2024-05-01T10:00:00Z")};
        Clock clock = new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now[0];
            }
        };
        ClusterView view = new ClusterView(clock);
        view.learnRoute("T1", legacyFastjson2(twoBrokerRoute()));
        now[0] = now[0].plusSeconds(30);
        view.learnRoute("T2", legacyFastjson2(twoBrokerRoute()));

        assertEquals(Instant.parse("2024-05-01T10:00:00Z"), view.route("T1").orElseThrow().learnedAt());
        assertEquals(Instant.parse("2024-05-01T10:00:30Z"), view.route("T2").orElseThrow().learnedAt());
        now[0] = now[0].plusSeconds(30);
        view.learnRoute("T1", legacyFastjson2(twoBrokerRoute()));
        assertEquals(Instant.parse("2024-05-01T10:01:00Z"), view.route("T1").orElseThrow().learnedAt());
        assertEquals(Optional.empty(), view.route("T3"));
    }

    @Test
    void unreadableBodiesThrowAndChangeNothing() {
        ClusterView view = new ClusterView();
        view.learnRoute("TopicTest", legacyFastjson2(twoBrokerRoute()));
        view.learnClusterInfo(clusterInfo(List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER, 1L, A_SLAVE),
            broker("DefaultCluster", "broker-b", 0L, B_MASTER)), Map.of("DefaultCluster", Set.of("broker-a", "broker-b"))).encode());
        String before = describe(view);

        assertMalformed(view, "", "empty");
        assertMalformed(view, "  ", "blank");
        assertMalformed(view, "[]", "must be a JSON object");
        assertMalformed(view, "{\"queueDatas\":{}}", "\"queueDatas\" must be an array");
        assertMalformed(view, "{\"queueDatas\":[{\"perm\":6}]}", "without a brokerName");
        assertMalformed(view, "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"writeQueueNums\":-1}]}", "must not be negative");
        assertMalformed(view, "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":\"6\"}]}", "perm must be an integer");
        assertMalformed(view, "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":99999999999}]}", "out of range");
        assertMalformed(view, "{\"brokerDatas\":[{\"brokerName\":\"broker-a\",\"brokerAddrs\":{x:\"1.1.1.1:1\"}}]}", "not a broker id");
        assertMalformed(view, "{\"brokerDatas\":[{\"brokerName\":\"broker-a\",\"brokerAddrs\":{0:10911}}]}", "entry 0 must be a string");
        assertMalformed(view, "{\"brokerDatas\":[{\"brokerAddrs\":{}}]}", "without a brokerName");
        assertMalformed(view, "{\"queueDatas\":[]}{}", "trailing content");
        assertMalformed(view, "{\"brokerAddrTable\":{\"broker-a\":{\"brokerName\":\"broker-z\"}}}", "holds broker broker-z");
        assertMalformed(view, "{\"clusterAddrTable\":{\"DefaultCluster\":[1]}}", "broker name must be a string");

        // every truncation of real bodies, and a valid prefix never half-applies
        byte[] route = legacyFastjson2(route(List.of(queue("broker-z", 1, 1, 6)), List.of(broker("Z", "broker-z", 0L, C_MASTER))));
        byte[] info = legacyFastjson2(clusterInfo(List.of(broker("Z", "broker-z", 0L, C_MASTER)), Map.of("Z", Set.of("broker-z"))));
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            for (int len = 0; len < route.length; len++) {
                byte[] prefix = Arrays.copyOf(route, len);
                assertThrows(MalformedRouteBodyException.class, () -> view.learnRoute("TopicTest", prefix), "length " + len);
            }
            for (int len = 0; len < info.length; len++) {
                byte[] prefix = Arrays.copyOf(info, len);
                assertThrows(MalformedRouteBodyException.class, () -> view.learnClusterInfo(prefix), "length " + len);
            }
        });
        assertEquals(before, describe(view));
    }

    private static void assertMalformed(ClusterView view, String body, String messagePart) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        MalformedRouteBodyException e = assertThrows(MalformedRouteBodyException.class,
            () -> {
                if (body.contains("brokerAddrTable") || body.contains("clusterAddrTable")) {
                    view.learnClusterInfo(bytes);
                } else {
                    view.learnRoute("TopicTest", bytes);
                }
            }, body);
        assertTrue(e.getMessage().contains(messagePart), "'" + body + "' -> " + e.getMessage());
    }

    private static String describe(ClusterView view) {
        StringBuilder sb = new StringBuilder();
        sb.append(view.route("TopicTest")).append(view.clusters());
        for (String b : view.brokerNames()) {
            sb.append(view.broker(b));
        }
        return sb.toString();
    }

    @Test
    void readsByteBufsWithoutConsumingThem() {
        byte[] route = legacyFastjson2(twoBrokerRoute());
        byte[] info = clusterInfo(List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER)),
            Map.of("DefaultCluster", Set.of("broker-a"))).encode();
        ByteBuf routeBuf = PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(new byte[3]).writeBytes(route);
        ByteBuf infoBuf = PooledByteBufAllocator.DEFAULT.heapBuffer().writeBytes(info);
        try {
            routeBuf.readerIndex(3);
            ClusterView view = new ClusterView();
            view.learnRoute("TopicTest", routeBuf);
            view.learnClusterInfo(infoBuf);
            assertEquals(3, routeBuf.readerIndex());
            assertEquals(0, infoBuf.readerIndex());
            assertEquals(1, routeBuf.refCnt());
            assertEquals(refs("broker-a", 8), view.writableQueues("TopicTest"), "cluster info dropped broker-b");
        } finally {
            routeBuf.release();
            infoBuf.release();
        }
    }

    @Test
    void readersSeeWholeRoutesWhileWritersReplaceThem() throws Exception {
        // Two alternating truths about the topic; a reader must always see one of them whole.
        byte[] onA = legacyFastjson2(route(List.of(queue("broker-a", 4, 4, 6)),
            List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER))));
        byte[] onB = legacyFastjson2(route(List.of(queue("broker-b", 8, 8, 6)),
            List.of(broker("DefaultCluster", "broker-b", 0L, B_MASTER))));
        Set<List<QueueRef>> allowed = Set.of(refs("broker-a", 4), refs("broker-b", 8));
        ClusterView view = new ClusterView();
        view.learnRoute("TopicTest", onA);
        view.learnRoute("TopicTest", onB);

        int readers = 3;
        ExecutorService pool = Executors.newFixedThreadPool(readers + 1);
        AtomicBoolean writing = new AtomicBoolean(true);
        CountDownLatch started = new CountDownLatch(readers);
        try {
            List<Future<Integer>> reads = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                reads.add(pool.submit(() -> {
                    started.countDown();
                    int n = 0;
                    // bounded: stops when the writer is done, or after a fixed number of reads
                    while (writing.get() && n < 5_000_000) {
                        List<QueueRef> seen = view.writableQueues("TopicTest");
                        if (!allowed.contains(seen)) {
                            throw new AssertionError("torn read: " + seen);
                        }
                        view.masterAddress(seen.get(0).brokerName()).orElseThrow();
                        n++;
                    }
                    return n;
                }));
            }
            Future<?> writer = pool.submit(() -> {
                started.await();
                for (int i = 0; i < 20_000; i++) {
                    view.learnRoute("TopicTest", i % 2 == 0 ? onA : onB);
                    if (i % 1000 == 0) {
                        view.learnClusterInfo(clusterInfo(List.of(broker("DefaultCluster", "broker-a", 0L, A_MASTER),
                            broker("DefaultCluster", "broker-b", 0L, B_MASTER)),
                            Map.of("DefaultCluster", Set.of("broker-a", "broker-b"))).encode());
                    }
                }
                return null;
            });
            writer.get(60, TimeUnit.SECONDS);
            writing.set(false);
            for (Future<Integer> read : reads) {
                assertTrue(read.get(60, TimeUnit.SECONDS) > 0);
            }
        } finally {
            writing.set(false);
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
        assertEquals(refs("broker-b", 8), view.writableQueues("TopicTest"));
    }
}
