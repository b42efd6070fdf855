package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.BrokerRequestRecorder;
import io.rmqgw.it.fixture.BrokerRequestRecorder.RecordedRequest;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ProcSockets;
import io.rmqgw.it.support.ScenarioResult;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The client contract run straight against the in-process broker (no gateway): proves the test
 * infrastructure and records what RocketMQ itself does, as the baseline the gateway must match.
 */
@ExtendWith(SharedClusterExtension.class)
class DirectBaselineIT extends ClientScenarioContract {

    static SharedCluster cluster;

    @BeforeAll
    static void setUp(SharedCluster shared) {
        cluster = shared;
    }

    @Override
    protected String clientNamesrv() {
        return cluster.namesrvAddress();
    }

    @Override
    protected String topic(String hint) {
        return cluster.topic(hint);
    }

    @Override
    protected String group(String hint) {
        return cluster.group(hint);
    }

    @Override
    protected Set<Integer> allowedClientRemotePorts() {
        return Set.of(cluster.namesrvPort(), cluster.brokerPort(), cluster.brokerFastPort());
    }

    /** The embedded cluster listens on loopback only, on exactly its three ports. */
    @Test
    void embeddedClusterListensOnLoopbackOnly() throws Exception {
        Set<ProcSockets.TcpConnection> listeners = ProcSockets.listenersOf(ProcessHandle.current().pid());
        Set<Integer> rocketmqPorts = Set.of(cluster.namesrvPort(), cluster.brokerPort(), cluster.brokerFastPort(),
            cluster.brokerPort() + 1);
        Set<ProcSockets.TcpConnection> ours = listeners.stream().filter(l -> rocketmqPorts.contains(l.localPort()))
            .collect(Collectors.toSet());
        assertEquals(Set.of(cluster.namesrvPort(), cluster.brokerPort(), cluster.brokerFastPort()),
            ours.stream().map(ProcSockets.TcpConnection::localPort).collect(Collectors.toSet()),
            () -> "listeners: " + listeners);
        for (ProcSockets.TcpConnection l : ours) {
            assertEquals("127.0.0.1", l.localAddress(), () -> "wildcard or non-loopback listener " + l);
        }
    }

    static String summarize(java.util.List<RecordedRequest> requests) {
        return requests.stream().collect(Collectors.groupingBy(r -> r.server() + " " + r.remoteAddress(),
                java.util.TreeMap::new, Collectors.mapping(r -> Integer.toString(r.code()), Collectors.toCollection(TreeSet::new))))
            .entrySet().stream().map(e -> "  " + e.getKey() + " codes " + e.getValue()).collect(Collectors.joining("\n"));
    }

    /**
     * What the lead asserts against the gateway later: every request the broker saw came from a
     * connection of the client processes (here: directly), and carries the client's serialize type.
     */
    @Test
    void brokerSeesExactlyTheClientConnections() throws Exception {
        String topic = cluster.topic("recorded");
        ScenarioResult send;
        ScenarioResult consume;
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            send = run(scenario(ClientVersion.V5_4_0, "sync-send", topic).count(5).timeout(SEND_TIMEOUT));
            consume = run(scenario(ClientVersion.V4_9_7, "push-consume", topic).group(cluster.group("recorded"))
                .count(5).timeout(CONSUME_TIMEOUT));
            Set<String> clientEnds = new TreeSet<>(send.localEndpoints());
            clientEnds.addAll(consume.localEndpoints());
            Set<String> peers = rec.brokerPeers();
            assertFalse(peers.isEmpty(), "the broker recorded no request");
            Set<String> strangers = new TreeSet<>(peers);
            strangers.removeAll(clientEnds);
            assertTrue(strangers.isEmpty(), () -> "broker saw peers that are no client connection: " + strangers
                + "\n client ends: " + clientEnds + "\n send connections: " + send.connections()
                + "\n consume connections: " + consume.connections() + "\n requests:\n" + summarize(rec.requests()));
            Set<Integer> brokerCodes = rec.brokerRequests().stream().map(RecordedRequest::code)
                .collect(Collectors.toSet());
            assertTrue(brokerCodes.contains(RequestCode.SEND_MESSAGE_V2), () -> "codes " + brokerCodes);
            assertTrue(brokerCodes.contains(RequestCode.PULL_MESSAGE), () -> "codes " + brokerCodes);
            assertTrue(brokerCodes.contains(RequestCode.HEART_BEAT), () -> "codes " + brokerCodes);
            assertTrue(rec.codes(BrokerRequestRecorder.Server.NAMESRV).contains(RequestCode.GET_ROUTEINFO_BY_TOPIC),
                () -> "name server codes " + rec.codes(BrokerRequestRecorder.Server.NAMESRV));
            // Both Java clients send JSON headers unless -Drocketmq.serialize.type says otherwise.
            assertEquals(Set.of(SerializeType.JSON), rec.brokerRequests().stream().map(RecordedRequest::serializeType)
                .collect(Collectors.toSet()));
        }
    }
}
