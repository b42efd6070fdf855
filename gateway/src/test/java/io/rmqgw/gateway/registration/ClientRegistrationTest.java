package io.rmqgw.gateway.registration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.clients.ClientRegistry.Role;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Heartbeats through the gateway tell it which client is on which connection, by group; they still reach the broker. */
class ClientRegistrationTest {

    private static final String CLIENT_ID = "127.0.0.1@4711#1";

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().gateway(g -> g.names(NamesConfig.DEFAULT)).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    private static String heartbeat(String consumerGroup, String producerGroup) {
        return "{\"clientID\":\"" + CLIENT_ID + "\",\"consumerDataSet\":[{\"consumeFromWhere\":\"CONSUME_FROM_LAST_OFFSET\","
            + "\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":\"" + consumerGroup + "\",\"messageModel\":\"CLUSTERING\","
            + "\"subscriptionDataSet\":[{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\",\"subString\":\"*\","
            + "\"subVersion\":1,\"tagsSet\":[],\"topic\":\"TopicA\"}],\"unitMode\":false}],\"producerDataSet\":[{\"groupName\":\""
            + producerGroup + "\"}]}";
    }

    private static void exchange(RawClient client, Wire.Builder request, int opaque) throws Exception {
        client.send(request.opaque(opaque).bytes());
        assertEquals(opaque, client.read().opaque());
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    @CoversCodes({RequestCode.HEART_BEAT, RequestCode.UNREGISTER_CLIENT})
    void heartbeatsRegisterTheClientUnregisterAndCloseForgetIt(SerializeType encoding) throws Exception {
        ClientRegistry clients = gateway.gateway().clients();
        String brokerAddress = broker.address();
        try (RawClient client = RawClient.connect(gateway.brokerPort(brokerAddress))) {
            exchange(client, Wire.request(RequestCode.HEART_BEAT).type(encoding).body(heartbeat("cg_1", "pg_1")), 1);
            assertEquals(RequestCode.HEART_BEAT, broker.awaitFrame(RawClient.WAIT).frame().code(), "forwarded");
            assertEquals(Set.of(CLIENT_ID), clients.clientsOfGroup(Role.CONSUMER, "cg_1"));
            assertEquals(Set.of(CLIENT_ID), clients.clientsOfGroup(Role.PRODUCER, "pg_1"));
            assertEquals(1, clients.connectionsOfGroup(Role.CONSUMER, "cg_1", brokerAddress).size());
            assertTrue(clients.connection(brokerAddress, CLIENT_ID).isPresent());

            exchange(client, Wire.request(RequestCode.UNREGISTER_CLIENT).type(encoding).ext("clientID", CLIENT_ID)
                .ext("consumerGroup", "cg_1"), 2);
            assertEquals(Set.of(), clients.clientsOfGroup(Role.CONSUMER, "cg_1"));
            assertEquals(Set.of(CLIENT_ID), clients.clientsOfGroup(Role.PRODUCER, "pg_1"), "only the named group left");
        }
        TestGateway.await(() -> clients.size() == 0, Duration.ofSeconds(5), "the closed connection's client forgotten");
        assertEquals(Set.of(), clients.clientsOfGroup(Role.PRODUCER, "pg_1"));
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void aHeartbeatRefusedForItsNamesRegistersNothing(SerializeType encoding) throws Exception {
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(RequestCode.HEART_BEAT).type(encoding).opaque(1).body(heartbeat("bad group", "pg_1"))
                .bytes());
            Wire.Frame answer = client.read();
            assertEquals(1, answer.opaque());
            assertTrue(answer.remark().contains("bad group"), answer.remark());
        }
        assertEquals(0, gateway.gateway().clients().size());
        assertEquals(1, MeterReadings.of(gateway.metrics()).namesRejected(NameCheck.ILLEGAL_CHARACTER));
    }
}
