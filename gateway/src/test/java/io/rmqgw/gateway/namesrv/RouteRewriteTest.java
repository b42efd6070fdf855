package io.rmqgw.gateway.namesrv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * GET_ROUTEINFO_BY_TOPIC answers come back naming the gateway's listener for each broker, in the
 * JSON dialect the name server chose; the listener is open by the time the client reads the answer
 * and relays to the broker.
 */
class RouteRewriteTest {

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer brokerA;
    private ScriptedPeer brokerB;
    private ScriptedPeer namesrv;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        // no cluster info at start: listeners are bound only when a route names the brokers
        ScriptedCluster cluster = ScriptedCluster.options().broker("broker-b", ScriptedPeer.Script.ECHO).noClusterInfo()
            .nameServer(two -> {
                Map<String, Map<String, String>> topics = new LinkedHashMap<>();
                topics.put("TopicA", Map.of("broker-a", two.get("broker-a")));
                topics.put("TopicAB", two);
                ScriptedPeer.Script routes = Routes.nameServer(topics);
                return (c, f) -> {
                    if (f.code() == Routes.GET_ROUTEINFO_BY_TOPIC && "TopicBroken".equals(f.ext().get("topic"))) {
                        c.send(Wire.response(Wire.SUCCESS, f.opaque()).body("{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":12}}]}")
                            .bytes());
                    } else {
                        routes.onFrame(c, f);
                    }
                };
            }).start(resources);
        brokerA = cluster.broker("broker-a");
        brokerB = cluster.broker("broker-b");
        namesrv = cluster.namesrv();
        gateway = cluster.gateway();
        assertEquals(Map.of(), gateway.gateway().brokerListeners());
    }

    static Stream<Arguments> clients() {
        return Stream.of(
            Arguments.of("5.x client (standard JSON)", 453, false, SerializeType.JSON, false),
            Arguments.of("4.9.4 client (standard JSON)", 401, false, SerializeType.ROCKETMQ, false),
            Arguments.of("old client asking acceptStandardJsonOnly", 317, true, SerializeType.JSON, false),
            Arguments.of("old client (fastjson, unquoted integer keys)", 317, false, SerializeType.JSON, true),
            Arguments.of("old binary-header client (fastjson)", 399, false, SerializeType.ROCKETMQ, true));
    }

    @ParameterizedTest(name = "{0}")
    @CoversCodes(RequestCode.GET_ROUTEINFO_BY_TOPIC)
    @MethodSource("clients")
    void routeNamesTheGatewayListenerInTheNameServersDialect(String what, int version, boolean acceptStandard,
                                                             SerializeType type, boolean fastjson) throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            Wire.Builder request = Routes.request("TopicA", version).opaque(105).type(type);
            if (acceptStandard) {
                request.ext("acceptStandardJsonOnly", "true");
            }
            client.send(request.bytes());
            Wire.Frame answer = client.read();

            // the listener is already accepting when the answer is read: no retry, no wait
            int port = gatewayPortOf(brokerA);
            assertConnects(port);
            assertConnects(port - 2);

            assertEquals(105, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code());
            assertEquals(Routes.body("broker-a", "127.0.0.1:" + port, fastjson), answer.bodyText(),
                "the address replaced, every other byte as the name server wrote it");
            assertTrue(answer.bodyText().contains(fastjson ? "{0:\"127.0.0.1:" : "{\"0\":\"127.0.0.1:"), answer.bodyText());
            assertTrue(gateway.brokerPorts().contains(port), port + " in " + gateway.brokerPorts());
            assertEquals(2, (port - gateway.brokerPorts().from()) % 3, "the main port of a block of three");

            // a request on the advertised port reaches the broker unchanged
            try (RawClient toBroker = RawClient.connect(port)) {
                byte[] heartbeat = Wire.request(34).opaque(7).body("{\"clientID\":\"c1\"}").bytes();
                toBroker.send(heartbeat);
                assertArrayEquals(heartbeat, brokerA.awaitFrame(RawClient.WAIT).frame().bytes());
                Wire.Frame hb = toBroker.read();
                assertEquals(7, hb.opaque());
                assertEquals("echo 34", hb.remark());
            }
        }
    }

    @Test
    @CoversCodes(RequestCode.GET_ROUTEINFO_BY_TOPIC)
    void theClusterViewLearnsRoutesWithTheRealAddressesAndForgetsTopicsThatAreGone() throws Exception {
        ClusterView cluster = gateway.gateway().cluster();
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicAB", 317).opaque(1).bytes()); // fastjson dialect
            assertEquals(Wire.SUCCESS, client.read().code());
            assertEquals(List.of(new ClusterView.QueueRef("broker-a", 0), new ClusterView.QueueRef("broker-a", 1),
                    new ClusterView.QueueRef("broker-a", 2), new ClusterView.QueueRef("broker-a", 3),
                    new ClusterView.QueueRef("broker-b", 0), new ClusterView.QueueRef("broker-b", 1),
                    new ClusterView.QueueRef("broker-b", 2), new ClusterView.QueueRef("broker-b", 3)),
                cluster.writableQueues("TopicAB"));
            assertEquals(Optional.of(brokerA.address()), cluster.masterAddress("broker-a"),
                "the broker's own address, not the gateway's listener");
            assertEquals(Optional.of("DefaultCluster"), cluster.clusterOf("broker-b"));

            client.send(Routes.request("TopicAB", 453).opaque(2).bytes());
            assertEquals(Wire.SUCCESS, client.read().code());
            assertTrue(cluster.knowsTopic("TopicAB"));
            client.send(Routes.request("NoSuchTopic", 453).opaque(3).bytes());
            assertEquals(Routes.TOPIC_NOT_EXIST, client.read().code());
            assertFalse(cluster.knowsTopic("NoSuchTopic"));
        }
    }

    @Test
    void everyBrokerOfARouteGetsItsOwnListener() throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicAB", 453).opaque(1).bytes());
            Wire.Frame answer = client.read();
            int portA = gatewayPortOf(brokerA);
            int portB = gatewayPortOf(brokerB);
            assertNotEquals(portA, portB);
            Map<String, String> expected = new LinkedHashMap<>();
            expected.put("broker-a", "127.0.0.1:" + portA);
            expected.put("broker-b", "127.0.0.1:" + portB);
            assertEquals(Routes.body(expected, false), answer.bodyText());

            for (ScriptedPeer broker : new ScriptedPeer[] {brokerA, brokerB}) {
                // through the VIP port too
                try (RawClient toBroker = RawClient.connect(gatewayPortOf(broker) - 2)) {
                    toBroker.send(Wire.request(34).opaque(9).bytes());
                    assertEquals(9, broker.awaitFrame(RawClient.WAIT).frame().opaque());
                    assertEquals("echo 34", toBroker.read().remark());
                }
            }
        }
    }

    @Test
    void repeatedRoutesKeepTheSamePortAndNonRouteAnswersAreUntouched() throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicA", 453).opaque(1).bytes());
            String first = client.read().bodyText();
            client.send(Routes.request("TopicAB", 453).opaque(2).bytes());
            String second = client.read().bodyText();
            int port = gatewayPortOf(brokerA);
            assertTrue(first.contains("127.0.0.1:" + port) && second.contains("127.0.0.1:" + port), first + " / " + second);

            client.send(Routes.request("NoSuchTopic", 453).opaque(3).bytes());
            Wire.Frame missing = client.read();
            assertEquals(3, missing.opaque());
            assertEquals(Routes.TOPIC_NOT_EXIST, missing.code(), "the name server's own answer passes through");
        }
    }

    @Test
    @CoversCodes(RequestCode.GET_BROKER_CLUSTER_INFO)
    void clusterInfoAnswerNamesTheGatewayListeners() throws Exception {
        namesrv.clusterInfo(ScriptedPeer.clusterInfoNaming("broker-b", brokerB.address()));
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(ScriptedPeer.GET_BROKER_CLUSTER_INFO).opaque(106).bytes());
            Wire.Frame answer = client.read();
            assertEquals(106, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code());
            int port = gatewayPortOf(brokerB);
            assertEquals(ScriptedPeer.clusterInfoNaming("broker-b", "127.0.0.1:" + port), answer.bodyText());
            assertConnects(port);
            assertEquals(Optional.of(brokerB.address()), gateway.gateway().cluster().masterAddress("broker-b"),
                "the cluster view learned the broker table");
        }
    }

    @Test
    void unreadableRouteAnswerGetsSystemErrorAndTheSessionGoesOn() throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicBroken", 453).opaque(31).bytes());
            Wire.Frame error = client.read();
            assertEquals(31, error.opaque());
            assertTrue(error.isResponse());
            assertEquals(Wire.SYSTEM_ERROR, error.code());
            assertTrue(error.remark() != null && !error.remark().isEmpty());

            client.send(Routes.request("TopicA", 453).opaque(32).bytes());
            Wire.Frame ok = client.read();
            assertEquals(32, ok.opaque());
            assertEquals(Wire.SUCCESS, ok.code());
        }
    }

    private int gatewayPortOf(ScriptedPeer broker) {
        return gateway.brokerPort(broker.address());
    }

    private static void assertConnects(int port) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
        }
    }
}
