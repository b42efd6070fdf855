package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.GatewayClients;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Multi-topic fan-out against the real 5.4.0 broker: 5.4.0 (in this JVM) and 4.9.7 (forked) producers
 * send mixed-destination batches to the gateway's fan-out topic; consumers of each destination topic,
 * through the gateway, receive exactly their messages with bodies, keys, tags and properties intact and
 * the destination property gone. A bad or unrouted destination fails the whole send with a precise remark.
 */
@RocketMqCluster
class FanoutIT {

    private static final String DEST = FanoutConfig.DEFAULT_DESTINATION_PROPERTY;
    private static final String FANOUT = FanoutConfig.DEFAULT_TOPIC;
    private static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(60);

    static ClusterUnderTest cluster;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        gateway = shared.closeAfterClass(GatewayFixture.on(shared)
            .fanout(new FanoutConfig(true, null, null, null, null, null)).start());
    }

    private static String[] destinations(String hint, int queuesA, int queuesB) throws Exception {
        String a = cluster.topic(hint + "_a", queuesA);
        String b = cluster.topic(hint + "_b", queuesB);
        return new String[] {a, b};
    }

    @Test
    void aMixedBatchFromA540ProducerReachesEachDestinationsConsumers() throws Exception {
        String[] topics = destinations("fan540", 4, 2);
        aMixedBatchFromA540ProducerReaches(gateway, cluster::group, FanoutIT::receive, topics[0], topics[1],
            "127.0.0.1:" + gateway.brokerPort(cluster.brokerAddress()));
    }

    /**
     * A 5.4.0 producer in this JVM sends one batch to {@code gateway}'s fan-out topic, its 5 messages for
     * {@code a}, {@code b} or both (its group named by {@code groups}); consumers of each ({@code receiver}) receive
     * exactly theirs, with bodies, keys, tags, properties and unique keys intact, and the ids answered lead to
     * {@code gatewayStoreHost}.
     */
    static void aMixedBatchFromA540ProducerReaches(GatewayFixture gateway, UnaryOperator<String> groups,
                                                   GatewayClients.Receiver receiver, String a, String b,
                                                   String gatewayStoreHost) throws Exception {
        String[] dests = {a, b, a + "," + b, b, a};
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < dests.length; i++) {
            Message m = new Message(FANOUT, "tag" + i, "key-540-" + i, ("body " + i + " ✓").getBytes(StandardCharsets.UTF_8));
            m.putUserProperty(DEST, dests[i]);
            m.putUserProperty("seq", Integer.toString(i));
            if (i == 4) {
                m.putUserProperty(FanoutConfig.DEFAULT_SHARDING_KEY_PROPERTY, "user-7");
            }
            batch.add(m);
        }
        DefaultMQProducer producer = GatewayClients.producer(groups, gateway, "fan540");
        SendResult result;
        try {
            result = producer.send(batch);
        } finally {
            producer.shutdown();
        }
        assertEquals(SendStatus.SEND_OK, result.getSendStatus(), result::toString);
        assertEquals(6, result.getOffsetMsgId().split(",").length, "one id per stored copy: " + result);

        Map<String, MessageExt> inA = receiver.receive(a, 3);
        Map<String, MessageExt> inB = receiver.receive(b, 3);
        assertEquals(Set.of("key-540-0", "key-540-2", "key-540-4"), inA.keySet());
        assertEquals(Set.of("key-540-1", "key-540-2", "key-540-3"), inB.keySet());
        for (Map<String, MessageExt> received : List.of(inA, inB)) {
            received.forEach((key, m) -> {
                int i = Integer.parseInt(key.substring(key.lastIndexOf('-') + 1));
                assertArrayEquals(("body " + i + " ✓").getBytes(StandardCharsets.UTF_8), m.getBody(), key);
                assertEquals("tag" + i, m.getTags());
                assertEquals(Integer.toString(i), m.getUserProperty("seq"));
                assertNull(m.getUserProperty(DEST), "the destination property is gone");
                assertEquals(batch.get(i).getProperty("UNIQ_KEY"), m.getProperty("UNIQ_KEY"), "the client's unique key");
            });
        }
        assertEquals("user-7", inA.get("key-540-4").getUserProperty(FanoutConfig.DEFAULT_SHARDING_KEY_PROPERTY));
        // the message sent to both topics: the same unique key in each
        assertEquals(inA.get("key-540-2").getMsgId(), inB.get("key-540-2").getMsgId());
        // the offsetMsgIds the producer got lead to the gateway's port for the broker
        for (String id : result.getOffsetMsgId().split(",")) {
            assertEquals(gatewayStoreHost, org.apache.rocketmq.common.message.MessageDecoder.decodeMessageId(id)
                .getAddress().toString().replaceFirst("^.*/", ""));
        }
        assertTrue(MeterReadings.of(gateway.metrics()).fanoutRequests("success") >= 1, "counted");
    }

    @Test
    void aBadOrUnroutedDestinationFailsTheWholeSendWithAPreciseRemark() throws Exception {
        String[] topics = destinations("fanbad", 2, 2);
        String unrouted = UniqueNames.topic("fan_nosuch");
        DefaultMQProducer producer = producer("fanbad");
        try {
            List<Message> batch = List.of(message(topics[0], "ok-0"), message("bad topic!", "bad-1"),
                message(unrouted, "nosuch-2"));
            Exception e = assertThrows(Exception.class, () -> producer.send(batch));
            String chain = chain(e);
            assertTrue(chain.contains("fan-out refused, nothing was sent"), chain);
            assertTrue(chain.contains("bad topic!"), chain);
            assertTrue(chain.contains("destination " + unrouted + " has no route"), chain);
            // a sentinel sent directly to the good destination is all its consumer finds there
            SendResult sentinel = producer.send(new Message(topics[0], "t", "sentinel", new byte[] {1}));
            assertEquals(SendStatus.SEND_OK, sentinel.getSendStatus());
        } finally {
            producer.shutdown();
        }
        assertEquals(Set.of("sentinel"), receive(topics[0], 1).keySet(), "nothing of the refused batch was written");
    }

    @Test
    void aMixedBatchFromA497ProducerReachesEachDestinationsConsumers() throws Exception {
        String[] topics = destinations("fan497", 2, 4);
        String a = topics[0];
        aMixedBatchFromA497ProducerReaches(gateway, FanoutIT::receive, a, topics[1]);

        ScenarioResult refused = ScenarioRunner.scenario(ClientVersion.V4_9_7, "fanout-send")
            .namesrv(gateway.namesrvAddress()).topic(FANOUT).count(2).keyPrefix("k497bad")
            .arg("destinations", a + "|" + UniqueNames.topic("fan_nosuch497")).timeout(Duration.ofSeconds(60)).run();
        assertFalse(refused.ok(), refused::describe);
        String remark = refused.lines("send-error").get(0).path("brokerRemark").asText();
        assertTrue(remark.contains("fan-out refused, nothing was sent: destination ") && remark.contains("has no route"),
            refused::describe);
    }

    /**
     * A forked 4.9.7 producer sends one batch of 6 messages to {@code gateway}'s fan-out topic, for {@code a},
     * {@code b} or both; consumers of each ({@code receiver}) receive exactly theirs, with bodies, keys, tags,
     * properties and the client's unique keys intact.
     */
    static void aMixedBatchFromA497ProducerReaches(GatewayFixture gateway, GatewayClients.Receiver receiver, String a,
                                                   String b) throws Exception {
        ScenarioResult send = ScenarioRunner.scenario(ClientVersion.V4_9_7, "fanout-send")
            .namesrv(gateway.namesrvAddress()).topic(FANOUT).count(6).keyPrefix("k497")
            .arg("destinations", a + "|" + b + "|" + a + "," + b).timeout(Duration.ofSeconds(60)).run().assertOk();
        assertEquals(8, send.summary().path("offsetMsgIds").asText().split(",").length, send::describe);

        Map<String, MessageExt> inA = receiver.receive(a, 4);
        Map<String, MessageExt> inB = receiver.receive(b, 4);
        assertEquals(Set.of("k497-0", "k497-2", "k497-3", "k497-5"), inA.keySet());
        assertEquals(Set.of("k497-1", "k497-2", "k497-4", "k497-5"), inB.keySet());
        Map<String, String> sentIds = new HashMap<>();
        for (JsonNode line : send.lines("sent")) {
            sentIds.put(line.path("key").asText(), line.path("msgId").asText());
        }
        for (Map<String, MessageExt> received : List.of(inA, inB)) {
            received.forEach((key, m) -> {
                String seq = key.substring(key.indexOf('-') + 1);
                assertTrue(new String(m.getBody(), StandardCharsets.UTF_8).startsWith(key + "|" + seq + "|"), key);
                assertEquals("rmqgw", m.getTags());
                assertEquals(seq, m.getUserProperty("seq"));
                assertEquals("fanout", m.getUserProperty("origin"));
                assertNull(m.getUserProperty(DEST));
                assertEquals(sentIds.get(key), m.getMsgId(), "the 4.9.7 client's unique key");
            });
        }
    }

    private static Message message(String destination, String key) {
        Message m = new Message(FANOUT, "t", key, key.getBytes(StandardCharsets.UTF_8));
        m.putUserProperty(DEST, destination);
        return m;
    }

    private static DefaultMQProducer producer(String hint) throws Exception {
        return GatewayClients.producer(cluster::group, gateway, hint);
    }

    /** With a 5.4.0 lite pull consumer, whose LITE_PULL_MESSAGE the gateway leaves as it is for the 5.4.0 broker. */
    private static Map<String, MessageExt> receive(String topic, int expected) throws Exception {
        Map<String, MessageExt> received = GatewayClients.receive(cluster::group, gateway, topic, expected, RECEIVE_TIMEOUT);
        assertEquals(0.0, MeterReadings.of(gateway.metrics()).litePullsTranslated(), "no 361 translated for a 5.4.0 broker");
        return received;
    }

    private static String chain(Throwable e) {
        List<String> parts = new ArrayList<>();
        for (Throwable t = e; t != null && parts.size() < 10; t = t.getCause() == t ? null : t.getCause()) {
            parts.add(t.toString());
        }
        return parts.stream().collect(Collectors.joining(" <- "));
    }
}
