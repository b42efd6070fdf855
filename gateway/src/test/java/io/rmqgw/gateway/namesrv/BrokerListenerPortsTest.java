package io.rmqgw.gateway.namesrv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Route answers when a broker's gateway ports cannot be had: taken by another process, or none left in the range. */
class BrokerListenerPortsTest {

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer brokerA;
    private ScriptedPeer brokerB;
    private TestGateway gateway;

    private void start(int brokerPortCount) throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker("broker-b", ScriptedPeer.Script.ECHO).noClusterInfo()
            .nameServer(two -> Routes.nameServer(Map.of("TopicA", Map.of("broker-a", two.get("broker-a")), "TopicAB", two)))
            .gateway(g -> g.brokerPortCount(brokerPortCount)).start(resources);
        brokerA = cluster.broker("broker-a");
        brokerB = cluster.broker("broker-b");
        gateway = cluster.gateway();
    }

    @Test
    void takenPortsMoveTheBrokerToTheNextBlock() throws Exception {
        start(9);
        int from = gateway.brokerPorts().from();
        try (ServerSocket squatter = new ServerSocket()) {
            squatter.setReuseAddress(true);
            squatter.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), from + 2));
            try (RawClient client = RawClient.connect(gateway.port())) {
                client.send(Routes.request("TopicA", 453).opaque(1).bytes());
                Wire.Frame answer = client.read();
                assertEquals(Wire.SUCCESS, answer.code(), answer.toString());
                int port = gateway.brokerPort(brokerA.address());
                assertEquals(from + 5, port, "the next block's main port");
                assertEquals(Routes.body("broker-a", "127.0.0.1:" + port, false), answer.bodyText());
                try (RawClient toBroker = RawClient.connect(port)) {
                    toBroker.send(Wire.request(34).opaque(2).bytes());
                    assertEquals("echo 34", toBroker.read().remark());
                }
            }
        }
    }

    @Test
    void routeNamingMoreBrokersThanTheRangeHoldsGetsSystemError() throws Exception {
        start(3);
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicAB", 453).opaque(21).bytes());
            Wire.Frame answer = client.read();
            assertEquals(21, answer.opaque());
            assertEquals(Wire.SYSTEM_ERROR, answer.code(), answer.toString());
            assertTrue(answer.remark() != null && answer.remark().contains(gateway.brokerPorts().toString()),
                "remark says the range is full: " + answer.remark());

            // the session survives: a route the range can hold is still answered on the same connection
            client.send(Routes.request("TopicA", 453).opaque(22).bytes());
            Wire.Frame ok = client.read();
            assertEquals(22, ok.opaque());
            assertEquals(Wire.SUCCESS, ok.code());
        }
    }
}
