package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.BrokerRequestRecorder;
import io.rmqgw.it.fixture.BrokerRequestRecorder.RecordedRequest;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.testing.UniqueNames;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The whole client contract through the gateway: real 4.9.7 and 5.4.0 clients whose only address is
 * the gateway, a real broker behind it. Every scenario run also checks, from /proc, that the client
 * process connected to gateway ports only; here the broker side checks that it saw the gateway only.
 */
@RocketMqCluster
class GatewayIT extends ClientScenarioContract {

    /**
     * Requests the in-process broker itself sends to the name server (registration, and the cluster
     * list its metadata refresh asks for); clients' own traffic never has these codes at the name
     * server, and every client process is also checked from /proc to connect to gateway ports only.
     */
    private static final Set<Integer> BROKER_TO_NAMESRV = Set.of(RequestCode.REGISTER_BROKER, RequestCode.UNREGISTER_BROKER,
        RequestCode.QUERY_DATA_VERSION, RequestCode.BROKER_HEARTBEAT, RequestCode.GET_BROKER_CLUSTER_INFO);

    static ClusterUnderTest cluster;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        gateway = shared.closeAfterClass(GatewayFixture.on(shared).start());
    }

    @Override
    protected String clientNamesrv() {
        return gateway.namesrvAddress();
    }

    @Override
    protected String topic(String hint) {
        return UniqueNames.topic(hint);
    }

    @Override
    protected String group(String hint) {
        return cluster.group(hint);
    }

    @Override
    protected Set<Integer> allowedClientRemotePorts() {
        return gateway.clientPorts();
    }

    /**
     * Every request the broker and the name server received came over one of the gateway's own
     * upstream connections: no client reached a RocketMQ address itself. And the 4.9.7 client's JSON
     * sends and pulls reached the broker as the binary ROCKETMQ encoding.
     */
    @Test
    void brokerAndNameServerSeeOnlyTheGatewayAndBinaryHeaders() throws Exception {
        String topic = UniqueNames.topic("only_gateway");
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            ScenarioResult send = run(scenario(ClientVersion.V4_9_7, "sync-send", topic).count(5).timeout(SEND_TIMEOUT));
            ScenarioResult consume = run(scenario(ClientVersion.V4_9_7, "push-consume", topic)
                .group(cluster.group("only_gateway")).count(5).timeout(CONSUME_TIMEOUT));
            assertEquals(send.keys("sent").stream().collect(Collectors.toSet()),
                consume.keys("received").stream().collect(Collectors.toSet()), consume::describe);

            // the broker's own registrations with the name server are not client traffic
            List<RecordedRequest> clientTraffic = rec.requests().stream()
                .filter(r -> !BROKER_TO_NAMESRV.contains(r.code())).toList();
            Set<String> peers = new TreeSet<>(clientTraffic.stream().map(RecordedRequest::remoteAddress).toList());
            assertFalse(peers.isEmpty(), "nothing recorded");
            Set<String> strangers = new TreeSet<>(peers);
            strangers.removeAll(gateway.upstreamEnds());
            assertTrue(strangers.isEmpty(), () -> "RocketMQ saw peers that are not gateway upstream connections: "
                + clientTraffic.stream().filter(r -> strangers.contains(r.remoteAddress())).toList()
                + "; gateway upstream ends " + gateway.upstreamEnds());

            Set<SerializeType> sendAndPullEncodings = rec.brokerRequests().stream()
                .filter(r -> r.code() == RequestCode.SEND_MESSAGE_V2 || r.code() == RequestCode.PULL_MESSAGE)
                .map(RecordedRequest::serializeType).collect(Collectors.toSet());
            assertEquals(Set.of(SerializeType.ROCKETMQ), sendAndPullEncodings,
                "JSON from the 4.9.7 client reaches the broker as ROCKETMQ");
        }
    }
}
