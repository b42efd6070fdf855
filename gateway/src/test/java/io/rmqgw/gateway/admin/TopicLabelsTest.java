package io.rmqgw.gateway.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code admin.topic-labels}: sends and pulls through the gateway are counted per topic, up to the limit. */
class TopicLabelsTest {

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;

    private void start(TestGateway.Builder builder) throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().gateway(builder).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    private void carry(RawClient client, Wire.Builder request, int opaque) throws Exception {
        client.send(request.opaque(opaque).bytes());
        assertEquals(opaque, client.read().opaque());
    }

    private static Wire.Builder send(String topic, SerializeType type) {
        return Wire.request(RequestCode.SEND_MESSAGE_V2).type(type).ext("a", "pg").ext("b", topic).ext("c", "TBW102")
            .ext("d", "4").ext("e", "0").ext("f", "0").ext("g", "1700000000000").ext("h", "0").body("m");
    }

    private static Wire.Builder pull(String topic) {
        return Wire.request(RequestCode.PULL_MESSAGE).ext("consumerGroup", "cg").ext("topic", topic).ext("queueId", "0")
            .ext("queueOffset", "0").ext("maxMsgNums", "32").ext("sysFlag", "0").ext("commitOffset", "0")
            .ext("suspendTimeoutMillis", "1000").ext("subVersion", "0");
    }

    @Test
    void requestsThroughTheGatewayAreCountedPerTopicUpToTheLimit() throws Exception {
        start(TestGateway.builder().topicLabels(2));
        GatewayMetrics metrics = gateway.metrics();
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            carry(client, send("TopicA", SerializeType.ROCKETMQ), 1);
            carry(client, send("TopicA", SerializeType.JSON), 2);
            carry(client, pull("TopicA"), 3);
            carry(client, send("TopicB", SerializeType.ROCKETMQ), 4);
            carry(client, send("TopicC", SerializeType.ROCKETMQ), 5);
        }
        assertEquals(2, MeterReadings.of(metrics).topicRequests("TopicA", RequestCode.SEND_MESSAGE_V2));
        assertEquals(1, MeterReadings.of(metrics).topicRequests("TopicA", RequestCode.PULL_MESSAGE));
        assertEquals(1, MeterReadings.of(metrics).topicRequests("TopicB", RequestCode.SEND_MESSAGE_V2));
        assertEquals(0, MeterReadings.of(metrics).topicRequests("TopicC", RequestCode.SEND_MESSAGE_V2), "past the limit of 2 topics");
        assertEquals(1, MeterReadings.of(metrics).topicRequests("(other)", RequestCode.SEND_MESSAGE_V2));
    }

    @Test
    void offByDefault() throws Exception {
        start(TestGateway.builder());
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            carry(client, send("TopicA", SerializeType.ROCKETMQ), 1);
        }
        assertEquals(0, MeterReadings.of(gateway.metrics()).topicRequests("TopicA", RequestCode.SEND_MESSAGE_V2));
    }
}
