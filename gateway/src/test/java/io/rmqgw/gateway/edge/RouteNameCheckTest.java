package io.rmqgw.gateway.edge;

import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_ROUTEINFO_BY_TOPIC;
import static org.apache.rocketmq.remoting.protocol.RequestCode.REGISTER_TOPIC_IN_NAMESRV;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Requests that name a topic to the name servers (GET_ROUTEINFO_BY_TOPIC, REGISTER_TOPIC_IN_NAMESRV) are
 * checked as sends are: a bad topic gets the very answer a send with it gets, counted, and never reaches
 * the name server; good topics, system, retry and DLQ topics among them, pass.
 */
class RouteNameCheckTest {

    private static final int INVALID_PARAMETER = 29;

    private static BrokerBehindGateway cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .names(new NamesConfig(true, null, null, false)));
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    static Stream<Arguments> badTopicsInBothEncodingsAndCodes() {
        List<Arguments> out = new ArrayList<>();
        for (String topic : List.of("Bench\u0000Topic", "bad topic!", "a".repeat(128), "", "T\u00f6pic")) {
            for (int code : List.of(GET_ROUTEINFO_BY_TOPIC, REGISTER_TOPIC_IN_NAMESRV)) {
                for (SerializeType t : SerializeType.values()) {
                    out.add(Arguments.of(topic, code, t));
                }
            }
        }
        return out.stream();
    }

    private static int nextOpaque = 100;

    private static Wire.Builder topicRequest(int code, SerializeType t, String topic) {
        Wire.Builder b = Wire.request(code).type(t).ext("topic", topic);
        return code == REGISTER_TOPIC_IN_NAMESRV ? b.body("{\"brokerDatas\":[],\"queueDatas\":[]}") : b;
    }

    /** What the gateway answers a send of {@code topic} on the broker port. */
    private static Wire.Frame sendAnswer(SerializeType t, String topic) throws Exception {
        try (RawClient client = cluster.connect()) {
            client.send(EdgeNameCheckTest.sendV2(t, "pg", topic).opaque(1).bytes());
            return client.read();
        }
    }

    @ParameterizedTest(name = "{0} ({1}, {2})")
    @MethodSource("badTopicsInBothEncodingsAndCodes")
    @CoversCodes({GET_ROUTEINFO_BY_TOPIC, REGISTER_TOPIC_IN_NAMESRV})
    void aBadTopicGetsTheAnswerASendGetsAndNeverReachesTheNameServer(String topic, int code, SerializeType t)
        throws Exception {
        Wire.Frame send = sendAnswer(t, topic);
        assertEquals(INVALID_PARAMETER, send.code(), send.remark());
        cluster.namesrv.drainReceived();
        NameCheck reason = NameValidator.DEFAULT.checkTopic(topic);
        double before = MeterReadings.of(cluster.gateway.metrics()).namesRejected(reason.label());
        int opaque = ++nextOpaque;
        try (RawClient client = RawClient.connect(cluster.gateway.port())) {
            client.send(topicRequest(code, t, topic).opaque(opaque).bytes());
            Wire.Frame answer = client.read();
            assertTrue(answer.isResponse());
            assertEquals(opaque, answer.opaque());
            assertEquals(send.code(), answer.code(), answer.remark());
            assertEquals(send.remark(), answer.remark(), "the remark a send with this topic gets");
            assertEquals(t, answer.serializeType());
            assertEquals(before + 1, MeterReadings.of(cluster.gateway.metrics()).namesRejected(reason.label()), 0.0, "counted by reason");

            // the connection still relays, and the refused request never reached the name server
            client.send(topicRequest(code, t, "TopicA").opaque(opaque + 1000).bytes());
            assertEquals(opaque + 1000, client.read().opaque());
            List<Integer> opaques = cluster.namesrv.drainReceived().stream().map(r -> r.frame().opaque()).toList();
            assertTrue(!opaques.contains(opaque) && opaques.contains(opaque + 1000), "name server saw " + opaques);
        }
    }

    @Test
    void goodTopicsReachTheNameServer() throws Exception {
        try (RawClient client = RawClient.connect(cluster.gateway.port())) {
            int opaque = 7000;
            for (String topic : List.of("TopicA", "TBW102", "%RETRY%cg", "%DLQ%cg", "RMQ_SYS_TRACE_TOPIC", "a".repeat(127))) {
                for (SerializeType t : SerializeType.values()) {
                    client.send(topicRequest(GET_ROUTEINFO_BY_TOPIC, t, topic).opaque(++opaque).bytes());
                    ScriptedPeer.Received got = cluster.namesrv.awaitFrame(RawClient.WAIT);
                    assertEquals(opaque, got.frame().opaque());
                    assertEquals(topic, got.frame().ext().get("topic"));
                    assertEquals(opaque, client.read().opaque());
                }
            }
        }
    }

    /**
     * A JSON number where the topic belongs is read as its text, as RocketMQ reads extFields (a map of
     * strings), by sends and route requests alike: {@code 123} is a valid topic name and goes on;
     * {@code -1.5} is not ('.') and gets the answer a send with it gets.
     */
    @Test
    void aJsonNumberTopicIsCheckedAsItsTextLikeASends() throws Exception {
        cluster.namesrv.drainReceived();
        try (RawClient client = RawClient.connect(cluster.gateway.port())) {
            client.send(Wire.rawFrame(0, Wire.utf8(
                "{\"code\":105,\"flag\":0,\"language\":\"JAVA\",\"opaque\":31,\"version\":453,\"extFields\":{\"topic\":123}}"),
                new byte[0]));
            ScriptedPeer.Received got = cluster.namesrv.awaitFrame(RawClient.WAIT);
            assertEquals("123", got.frame().ext().get("topic"));
            assertEquals(31, client.read().opaque());

            client.send(Wire.rawFrame(0, Wire.utf8(
                "{\"code\":105,\"flag\":0,\"language\":\"JAVA\",\"opaque\":32,\"version\":453,\"extFields\":{\"topic\":-1.5}}"),
                new byte[0]));
            Wire.Frame refused = client.read();
            assertEquals(32, refused.opaque());
            Wire.Frame send = sendAnswer(SerializeType.JSON, "-1.5");
            assertEquals(INVALID_PARAMETER, refused.code());
            assertEquals(send.remark(), refused.remark());
        }
        try (RawClient client = cluster.connect()) {
            cluster.broker.drainReceived();
            String header = "{\"code\":310,\"flag\":0,\"language\":\"JAVA\",\"opaque\":33,\"version\":453,\"extFields\":"
                + "{\"a\":\"pg\",\"b\":123,\"c\":\"TBW102\",\"d\":\"4\",\"e\":\"0\",\"f\":\"0\",\"g\":\"1700000000000\","
                + "\"h\":\"0\",\"i\":\"\",\"j\":\"0\",\"k\":\"false\",\"m\":\"false\"}}";
            client.send(Wire.rawFrame(0, Wire.utf8(header), Wire.utf8("payload")));
            ScriptedPeer.Received got = cluster.broker.awaitFrame(RawClient.WAIT);
            assertEquals(33, got.frame().opaque(), "a send to topic 123 is forwarded too");
            assertEquals(33, client.read().opaque());
        }
    }
}
