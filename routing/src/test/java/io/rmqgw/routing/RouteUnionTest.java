package io.rmqgw.routing;

import static io.rmqgw.routing.RouteParts.queue;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.Test;

/**
 * The union of two clusters' routes, read back with RocketMQ's own classes (as clients do): every queue and broker of
 * both, names kept unique, addresses and queue counts as each cluster gave them.
 */
class RouteUnionTest {


    private static byte[] route(String order, List<QueueData> queues, BrokerData... brokers) {
        TopicRouteData route = new TopicRouteData();
        route.setQueueDatas(new ArrayList<>(queues));
        route.setBrokerDatas(new ArrayList<>(List.of(brokers)));
        route.setFilterServerTable(new HashMap<>());
        route.setOrderTopicConf(order);
        return route.encode(); // fastjson2's default: unquoted integer keys, as a name server writes for old clients
    }

    private static BrokerData broker(String cluster, String name, String master) {
        HashMap<Long, String> addrs = new HashMap<>();
        addrs.put(0L, master);
        return new BrokerData(cluster, name, addrs);
    }

    private static TopicRouteData read(byte[] body) {
        return RemotingSerializable.decode(body, TopicRouteData.class);
    }

    @Test
    void theUnionHoldsEveryQueueAndBrokerOfBothClusters() {
        byte[] idc1 = route(null, List.of(queue("broker-a", 4, 4, 6)), broker("C1", "broker-a", "10.0.0.1:10911"));
        byte[] idc2 = route(null, List.of(queue("broker-b", 8, 8, 6)), broker("C2", "broker-b", "10.1.0.1:10911"));

        RouteUnion.Result union = RouteUnion.of(List.of(new RouteUnion.Part("default", idc1),
            new RouteUnion.Part("idc2", idc2)));

        TopicRouteData seen = read(union.body());
        assertEquals(Map.of("broker-a", 4, "broker-b", 8), seen.getQueueDatas().stream()
            .collect(Collectors.toMap(QueueData::getBrokerName, QueueData::getWriteQueueNums)));
        assertEquals(Map.of("broker-a", "10.0.0.1:10911", "broker-b", "10.1.0.1:10911"), seen.getBrokerDatas()
            .stream().collect(Collectors.toMap(BrokerData::getBrokerName, b -> b.getBrokerAddrs().get(0L))));
        assertEquals(Set.of("C1", "C2"), seen.getBrokerDatas().stream().map(BrokerData::getCluster)
            .collect(Collectors.toSet()));
        assertEquals(List.of("default", "idc2"), union.brokers().stream().map(RouteUnion.Broker::cluster).toList());
        assertEquals("10.1.0.1:10911", union.brokers().get(1).master());
        assertTrue(union.brokers().get(1).writable());
        assertTrue(new String(union.body(), StandardCharsets.UTF_8).contains("\"0\":"), "standard JSON keys");
    }

    @Test
    void aBrokerNameTakenByAnEarlierClusterIsShownWithItsClusterAndMappedBack() {
        byte[] idc1 = route("broker-a:4", List.of(queue("broker-a", 4, 4, 6)),
            broker("C1", "broker-a", "10.0.0.1:10911"));
        byte[] idc2 = route("broker-a:2", List.of(queue("broker-a", 2, 2, 6)),
            broker("C2", "broker-a", "10.1.0.1:10911"));

        RouteUnion.Result union = RouteUnion.of(List.of(new RouteUnion.Part("default", idc1),
            new RouteUnion.Part("idc2", idc2)));

        TopicRouteData seen = read(union.body());
        assertEquals(Set.of("broker-a", "idc2-broker-a"), seen.getQueueDatas().stream().map(QueueData::getBrokerName)
            .collect(Collectors.toSet()));
        assertEquals(Map.of("broker-a", "10.0.0.1:10911", "idc2-broker-a", "10.1.0.1:10911"), seen.getBrokerDatas()
            .stream().collect(Collectors.toMap(BrokerData::getBrokerName, b -> b.getBrokerAddrs().get(0L))));
        assertEquals("broker-a:4;idc2-broker-a:2", seen.getOrderTopicConf());
        RouteUnion.Broker renamed = union.brokers().get(1);
        assertEquals("idc2-broker-a", renamed.shownName());
        assertEquals("broker-a", renamed.realName());
    }

    @Test
    void withoutLeavesOutTheNamedBrokersAndKeepsTheOthersNames() {
        byte[] idc1 = route(null, List.of(queue("broker-a", 4, 4, 6)), broker("C1", "broker-a", "10.0.0.1:10911"));
        byte[] idc2 = route(null, List.of(queue("broker-a", 2, 2, 6)), broker("C2", "broker-a", "10.1.0.1:10911"));
        RouteUnion.Result union = RouteUnion.of(List.of(new RouteUnion.Part("default", idc1),
            new RouteUnion.Part("idc2", idc2)));

        TopicRouteData seen = read(RouteUnion.without(union.body(), Set.of("broker-a")));

        assertEquals(List.of("idc2-broker-a"), seen.getQueueDatas().stream().map(QueueData::getBrokerName).toList());
        assertEquals(List.of("idc2-broker-a"), seen.getBrokerDatas().stream().map(BrokerData::getBrokerName).toList());
        assertArrayEquals(union.body(), RouteUnion.without(union.body(), Set.of()));
    }

    @Test
    void aNamingGivesTheNamesAndNamesItGivesTwiceAreNumbered() {
        byte[] idc1 = route(null, List.of(queue("broker-a", 4, 4, 6)), broker("C1", "broker-a", "10.0.0.1:10911"));
        byte[] idc2 = route(null, List.of(queue("broker-b", 2, 2, 6)), broker("C2", "broker-b", "10.1.0.1:10911"));
        RouteUnion.Naming everyoneIsX = (cluster, real) -> "x";

        RouteUnion.Result union = RouteUnion.of(List.of(new RouteUnion.Part("default", idc1),
            new RouteUnion.Part("idc2", idc2)), everyoneIsX);

        assertEquals(List.of("x", "x-2"), union.brokers().stream().map(RouteUnion.Broker::shownName).toList());
        assertEquals(List.of("broker-a", "broker-b"), union.brokers().stream().map(RouteUnion.Broker::realName)
            .toList());
    }

    @Test
    void theClusterInfoUnionListsEveryClusterAndBrokerUnderTheNamesOfTheRoutes() {
        ClusterInfo idc1 = clusterInfo("DefaultCluster", broker("DefaultCluster", "broker-a", "10.0.0.1:10911"));
        ClusterInfo idc2 = clusterInfo("DefaultCluster", broker("DefaultCluster", "broker-a", "10.1.0.1:10911"),
            broker("DefaultCluster", "broker-c", "10.1.0.2:10911"));
        RouteUnion.Naming naming = (cluster, real) -> cluster.equals("idc2") && real.equals("broker-a")
            ? "idc2-broker-a" : real;

        byte[] union = RouteUnion.clusterInfo(List.of(new RouteUnion.Part("default", idc1.encode()),
            new RouteUnion.Part("idc2", idc2.encode())), naming);

        ClusterInfo seen = RemotingSerializable.decode(union, ClusterInfo.class);
        assertEquals(Set.of("broker-a", "idc2-broker-a", "broker-c"), seen.getBrokerAddrTable().keySet());
        assertEquals("10.1.0.1:10911", seen.getBrokerAddrTable().get("idc2-broker-a").getBrokerAddrs().get(0L));
        assertEquals(Map.of("DefaultCluster", Set.of("broker-a"), "idc2-DefaultCluster", Set.of("idc2-broker-a",
            "broker-c")), seen.getClusterAddrTable());
        assertEquals("idc2-DefaultCluster", seen.getBrokerAddrTable().get("broker-c").getCluster());
        assertEquals(Set.of("broker-a", "broker-c"), RouteUnion.brokerNames(idc2.encode()));
    }

    private static ClusterInfo clusterInfo(String cluster, BrokerData... brokers) {
        ClusterInfo info = new ClusterInfo();
        HashMap<String, BrokerData> table = new HashMap<>();
        Set<String> names = new java.util.HashSet<>();
        for (BrokerData b : brokers) {
            table.put(b.getBrokerName(), b);
            names.add(b.getBrokerName());
        }
        info.setBrokerAddrTable(table);
        HashMap<String, Set<String>> clusters = new HashMap<>();
        clusters.put(cluster, names);
        info.setClusterAddrTable(clusters);
        return info;
    }

    @Test
    void aBrokersOwnNameInAnAnswerIsReplacedByTheNameClientsSee() {
        String stats = "{\"offsetTable\":{{\"brokerName\":\"broker-a\",\"queueId\":0,\"topic\":\"T\"}:{\"brokerOffset\""
            + ":5},{\"brokerName\":\"broker-a\",\"queueId\":1,\"topic\":\"T\"}:{\"brokerOffset\":7}},"
            + "\"note\":\"broker-a\"}";
        byte[] renamed = RouteUnion.renameBroker(stats.getBytes(StandardCharsets.UTF_8), "broker-a", "idc2-broker-a");
        assertEquals(stats.replace("\"brokerName\":\"broker-a\"", "\"brokerName\":\"idc2-broker-a\""),
            new String(renamed, StandardCharsets.UTF_8));
        byte[] other = "{\"brokerName\":\"broker-b\"}".getBytes(StandardCharsets.UTF_8);
        assertSame(other, RouteUnion.renameBroker(other, "broker-a", "idc2-broker-a"));
    }

    @Test
    void aBodyThatIsNoRouteIsRefusedWithTheClusterNamed() {
        MalformedRouteBodyException e = assertThrows(MalformedRouteBodyException.class, () -> RouteUnion.of(List.of(
            new RouteUnion.Part("idc2", "{\"code\":1}".getBytes(StandardCharsets.UTF_8)))));
        assertTrue(e.getMessage().contains("cluster idc2"), e.getMessage());
    }
}
