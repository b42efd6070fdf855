package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.UpstreamAclConfig;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * RocketMQ ACL through the gateway, against a 5.4.0 broker with authentication on (ACL 2.0: the
 * broker checks the AccessKey/Signature extFields of every request; the signature covers the sorted
 * extFields and the body). Clients sign with rocketmq's own {@code AclClientRPCHook} (4.9.7: rocketmq-acl;
 * 5.4.0: in rocketmq-client) and send JSON headers, which the gateway re-encodes as ROCKETMQ binary (or,
 * for a binary client, as JSON): signed producers and consumers work, and a wrong secret gets the
 * broker's own refusal, with the code and remark a direct connection gets.
 *
 * <p>The gateway's own requests (fan-out parts, virtual-queue fetches and commits) are signed with
 * {@code upstream.acl}: with it, fan-out and virtual queues work against this broker; without it, a fan-out
 * is refused with the broker's authentication refusal in the remark.
 */
@RocketMqCluster(forked = true, brokerConfig = {
    // ACL 2.0 on a broker with a name server of its own: it must not affect the shared cluster
    "authenticationEnabled=true",
    "authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider",
    "authenticationMetadataProvider="
        + "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider",
    "initAuthenticationUser={\"username\":\"" + AclIT.USER + "\",\"password\":\"" + AclIT.SECRET + "\"}",
    "innerClientAuthenticationCredentials={\"accessKey\":\"" + AclIT.USER + "\",\"secretKey\":\"" + AclIT.SECRET
        + "\"}"})
class AclIT {

    static final String USER = "rmqgw_acl";
    static final String SECRET = "rmqgw-acl-secret-1";
    static final String WRONG_SECRET = "not-the-secret";

    static ClusterUnderTest broker;
    static GatewayFixture toBinary;
    static GatewayFixture toJson;
    /** Fan-out and virtual queues on, signing its own requests with upstream.acl. */
    static GatewayFixture ownSigned;
    /** The same without upstream.acl. */
    static GatewayFixture ownUnsigned;
    static String fanA;
    static String fanB;
    static String vqTopic;
    static String vqGroup;

    @BeforeAll
    static void setUp(ClusterUnderTest cluster) throws Exception {
        broker = cluster;
        toBinary = cluster.closeAfterClass(GatewayFixture.on(cluster).start());
        toJson = cluster.closeAfterClass(GatewayFixture.on(cluster).headerEncoding(HeaderEncoding.JSON).start());

        fanA = UniqueNames.topic("acl_fan_a");
        fanB = UniqueNames.topic("acl_fan_b");
        vqTopic = UniqueNames.topic("acl_vq");
        vqGroup = UniqueNames.group("acl_vq");
        for (String topic : List.of(fanA, fanB, vqTopic)) {
            Admin.createTopic(broker.brokerAddress(), topic, 2, hook(SECRET));
            Admin.awaitRoute(broker.namesrvAddress(), topic, broker.brokerName(), Duration.ofSeconds(15));
        }
        FanoutConfig fanout = new FanoutConfig(true, null, null, null, null, null);
        List<VirtualQueueConfig> vq = List.of(new VirtualQueueConfig(vqGroup, vqTopic, 2, null, null, null, null, null,
            null));
        ownSigned = cluster.closeAfterClass(GatewayFixture.on(cluster).fanout(fanout).virtualQueues(vq)
            .configure(c -> c.withUpstream(c.upstream().withAcl(new UpstreamAclConfig(USER, SECRET)))).start());
        ownUnsigned = cluster.closeAfterClass(GatewayFixture.on(cluster).fanout(fanout).start());
    }

    private static AclClientRPCHook hook(String secret) {
        return new AclClientRPCHook(new SessionCredentials(USER, secret));
    }

    private static ScenarioRunner.Spec signed(ClientVersion version, String scenario, String namesrv, String topic,
                                              String secret) {
        return ScenarioRunner.scenario(version, scenario).namesrv(namesrv).topic(topic)
            .arg("access-key", USER).arg("secret-key", secret).timeout(Duration.ofSeconds(90));
    }

    @ParameterizedTest
    @EnumSource(ClientVersion.class)
    void signedJsonClientsProduceAndConsumeThroughTheBinaryUpgrade(ClientVersion version) throws Exception {
        String topic = UniqueNames.topic("acl_" + version.name());
        ScenarioResult sent = signed(version, "sync-send", toBinary.namesrvAddress(), topic, SECRET).count(20)
            .run().assertOk();
        ScenarioResult received = signed(version, "push-consume", toBinary.namesrvAddress(), topic, SECRET).count(20)
            .run().assertOk();
        assertEquals(new HashSet<>(sent.keys("sent")), new HashSet<>(received.keys("received")), received::describe);
        assertEquals(20, sent.keys("sent").size());
        assertTrue(MeterReadings.of(toBinary.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ) > 0,
            "the signed JSON headers really were re-encoded as ROCKETMQ binary");
    }

    @Test
    void aSignedBinaryClientWorksThroughTheJsonDowngrade() throws Exception {
        String topic = UniqueNames.topic("acl_bin");
        ScenarioResult sent = signed(ClientVersion.V5_4_0, "sync-send", toJson.namesrvAddress(), topic, SECRET)
            .systemProperty("rocketmq.serialize.type", "ROCKETMQ").count(10).run().assertOk();
        ScenarioResult received = signed(ClientVersion.V5_4_0, "lite-pull-consume", toJson.namesrvAddress(), topic,
            SECRET).systemProperty("rocketmq.serialize.type", "ROCKETMQ").count(10).run().assertOk();
        assertEquals(new HashSet<>(sent.keys("sent")), new HashSet<>(received.keys("received")), received::describe);
        assertTrue(MeterReadings.of(toJson.metrics()).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON) > 0,
            "the signed binary headers really were re-encoded as JSON");
    }

    @ParameterizedTest
    @EnumSource(ClientVersion.class)
    void aWrongSecretGetsTheBrokersOwnRefusalUnchanged(ClientVersion version) throws Exception {
        String topic = UniqueNames.topic("acl_bad_" + version.name());
        JsonNode direct = refusal(version, broker.namesrvAddress(), topic);
        JsonNode viaGateway = refusal(version, toBinary.namesrvAddress(), topic);
        System.err.println("[it] ACL refusal direct: " + direct + "\n[it] via gateway: " + viaGateway);
        assertEquals(direct.path("brokerCode").asInt(), viaGateway.path("brokerCode").asInt());
        assertEquals(direct.path("brokerRemark").asText(), viaGateway.path("brokerRemark").asText());
        assertFalse(viaGateway.path("brokerRemark").asText().isEmpty());
    }

    @Test
    void fanOutWorksWhenTheGatewaySignsItsOwnParts() throws Exception {
        DefaultMQProducer producer = signedProducer(ownSigned, "acl_fan_ok");
        SendResult result;
        try {
            result = producer.send(fanoutBatch("ok", fanA, fanB, fanA + "," + fanB));
        } finally {
            producer.shutdown();
        }
        assertEquals(SendStatus.SEND_OK, result.getSendStatus(), result::toString);
        assertEquals(Set.of("ok-0", "ok-2"), signedReceive(ownSigned, fanA, 2));
        assertEquals(Set.of("ok-1", "ok-2"), signedReceive(ownSigned, fanB, 2));
        assertTrue(MeterReadings.of(ownSigned.metrics()).fanoutRequests("success") >= 1, "counted");
    }

    @Test
    void withoutUpstreamAclAFanOutIsRefusedWithTheBrokersReason() throws Exception {
        DefaultMQProducer producer = signedProducer(ownUnsigned, "acl_fan_unsigned");
        try {
            Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
                () -> producer.send(fanoutBatch("unsigned", fanA)));
            StringBuilder chain = new StringBuilder();
            for (Throwable t = e; t != null && chain.length() < 4000; t = t.getCause() == t ? null : t.getCause()) {
                chain.append(t).append(" <- ");
            }
            System.err.println("[it] unsigned fan-out refused: " + chain);
            assertTrue(chain.toString().contains("fan-out failed: not stored in " + fanA), chain::toString);
            // 5.4.0's words for a request without AccessKey
            assertTrue(chain.toString().contains("code " + REFUSAL_CODE + " username cannot be null"), chain::toString);
        } finally {
            producer.shutdown();
        }
    }

    @Test
    void virtualQueuesWorkWhenTheGatewaySignsItsFetchesAndCommits() throws Exception {
        Set<String> received = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(vqGroup, hook(SECRET),
            new org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely());
        consumer.setNamesrvAddr(ownSigned.namesrvAddress());
        consumer.setInstanceName("rmqgw-it-acl-vq-" + System.nanoTime());
        consumer.setPollNameServerInterval(2_000);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(vqTopic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            msgs.forEach(m -> received.add(m.getKeys()));
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        try {
            DefaultMQProducer producer = signedProducer(ownSigned, "acl_vq");
            Set<String> sent = new TreeSet<>();
            try {
                for (int i = 0; i < 20; i++) {
                    String key = "vq-" + i;
                    assertEquals(SendStatus.SEND_OK, producer.send(new Message(vqTopic, "t", key,
                        key.getBytes(StandardCharsets.UTF_8))).getSendStatus());
                    sent.add(key);
                }
            } finally {
                producer.shutdown();
            }
            var vq = ownSigned.gateway().virtualQueues().consumer(vqGroup, vqTopic);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
            while ((received.size() < sent.size()
                || VirtualQueuesIT.stats(ownSigned, vq).acknowledged() < sent.size()) && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(200);
            }
            assertEquals(sent, new TreeSet<>(received));
            // fetched by the gateway (signed pulls) and acknowledged back (signed offset commits)
            assertTrue(VirtualQueuesIT.stats(ownSigned, vq).acknowledged() >= sent.size(),
                () -> "acknowledged through the virtual queues: " + VirtualQueuesIT.stats(ownSigned, vq));
        } finally {
            consumer.shutdown();
        }
    }

    /** The broker's code for a request it cannot authenticate (NO_PERMISSION, as for a wrong signature). */
    private static final int REFUSAL_CODE = 16;

    /** A batch to the fan-out topic: message i, key {@code prefix-i}, goes to {@code destinations[i]}. */
    static List<Message> fanoutBatch(String prefix, String... destinations) {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < destinations.length; i++) {
            String key = prefix + "-" + i;
            Message m = new Message(FanoutConfig.DEFAULT_TOPIC, "t", key, key.getBytes(StandardCharsets.UTF_8));
            m.putUserProperty(FanoutConfig.DEFAULT_DESTINATION_PROPERTY, destinations[i]);
            batch.add(m);
        }
        return batch;
    }

    private static DefaultMQProducer signedProducer(GatewayFixture gateway, String hint) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(UniqueNames.group(hint + "_pg"), hook(SECRET));
        p.setNamesrvAddr(gateway.namesrvAddress());
        p.setInstanceName("rmqgw-it-" + hint + "-" + System.nanoTime());
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        return p;
    }

    /** The keys a signed consumer of {@code topic} through {@code gateway} reads from the first offset. */
    private static Set<String> signedReceive(GatewayFixture gateway, String topic, int expected) throws Exception {
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(UniqueNames.group(topic + "_cg"), hook(SECRET));
        consumer.setNamesrvAddr(gateway.namesrvAddress());
        consumer.setInstanceName("rmqgw-it-acl-consume-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        Set<String> keys = new TreeSet<>();
        consumer.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (keys.size() < expected && System.nanoTime() < deadline) {
                for (MessageExt m : consumer.poll(500)) {
                    keys.add(m.getKeys());
                }
            }
        } finally {
            consumer.shutdown();
        }
        return keys;
    }

    /** The send-error line of one send with the wrong secret (no retries). */
    private static JsonNode refusal(ClientVersion version, String namesrv, String topic) throws Exception {
        return refusal(signed(version, "sync-send", namesrv, topic, WRONG_SECRET));
    }

    /** The send-error line of one send of {@code syncSend} (no retries), which the broker must refuse. */
    static JsonNode refusal(ScenarioRunner.Spec syncSend) throws Exception {
        ScenarioResult r = syncSend.count(1).arg("retries", 0).timeout(Duration.ofSeconds(60)).run();
        assertFalse(r.ok(), r::describe);
        List<JsonNode> errors = r.lines("send-error");
        assertEquals(1, errors.size(), r::describe);
        assertTrue(errors.get(0).has("brokerCode"), () -> "refused by the broker: " + r.describe());
        return errors.get(0);
    }
}
