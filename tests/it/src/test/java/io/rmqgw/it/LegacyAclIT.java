package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.UpstreamAclConfig;
import io.rmqgw.it.fixture.BeforeClusterStart;
import io.rmqgw.it.fixture.ClusterTopic;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ProcSockets;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * ACL 1.0 through the gateway against a real RocketMQ 4.9.7 name server and broker (Maven Central artifacts in
 * their own JVM, {@link ForkedBroker#legacy}) with {@code aclEnable=true} and a {@code plain_acl.yml} of three
 * accounts: a writer (PUB|SUB on its topics), a reader (SUB only) and the gateway's own (PUB on the fan-out
 * destinations). The 4.9.x broker checks each request's Signature over the extFields it decoded and the body.
 * Clients sign with rocketmq's {@code AclClientRPCHook} and send JSON headers, which the gateway re-encodes as
 * ROCKETMQ binary: signed producers and consumers work; a wrong secret and a missing permission get the broker's
 * own refusal, code and remark as a direct connection gets them. The gateway's own requests (fan-out parts)
 * signed with {@code upstream.acl} are accepted; unsigned, they are refused with the broker's reason.
 */
@RocketMqCluster(version = "4.9.7", brokerConfig = "aclEnable=true")
class LegacyAclIT {

    static final String WRITER = "rmqgw_writer";
    static final String WRITER_SECRET = "rmqgw-writer-secret-1";
    static final String READER = "rmqgw_reader";
    static final String READER_SECRET = "rmqgw-reader-secret-1";
    static final String GATEWAY_USER = "rmqgw_gateway";
    static final String GATEWAY_SECRET = "rmqgw-gateway-secret-1";

    static final Map<ClientVersion, String> TOPICS = new EnumMap<>(ClientVersion.class);
    @ClusterTopic(queues = 2)
    static String v497Topic;
    @ClusterTopic(queues = 2)
    static String v540Topic;
    @ClusterTopic(queues = 2)
    static String readOnlyTopic;
    @ClusterTopic(queues = 2)
    static String badSecretTopic;
    @ClusterTopic(queues = 2)
    static String fanA;
    @ClusterTopic(queues = 2)
    static String fanB;

    static ClusterUnderTest broker;
    /** Relays toward the broker as ROCKETMQ binary; fan-out on, its parts signed with upstream.acl. */
    static GatewayFixture gateway;
    /** The same without upstream.acl. */
    static GatewayFixture unsigned;

    /** The accounts, written before the 4.9.7 broker starts: it reads them once. */
    @BeforeClusterStart
    static void writeAclFile(Path home) throws Exception {
        TOPICS.put(ClientVersion.V4_9_7, v497Topic);
        TOPICS.put(ClientVersion.V5_4_0, v540Topic);
        List<String> topics = new ArrayList<>(TOPICS.values());
        topics.addAll(List.of(readOnlyTopic, badSecretTopic, fanA, fanB));
        Path aclFile = home.resolve("conf").resolve("plain_acl.yml");
        Files.createDirectories(aclFile.getParent());
        Files.writeString(aclFile, plainAcl(topics));
    }

    @BeforeAll
    static void setUp(ClusterUnderTest cluster) throws Exception {
        broker = cluster;
        FanoutConfig fanout = new FanoutConfig(true, null, null, null, null, null);
        gateway = cluster.closeAfterClass(GatewayFixture.on(cluster).fanout(fanout)
            .configure(c -> c.withUpstream(c.upstream().withAcl(new UpstreamAclConfig(GATEWAY_USER, GATEWAY_SECRET))))
            .start());
        unsigned = cluster.closeAfterClass(GatewayFixture.on(cluster).fanout(fanout).start());
    }

    /**
     * 4.9.7's plain ACL file. No global or per-account white addresses: a request from a white address skips
     * the signature check, and every test connection comes from 127.0.0.1.
     */
    private static String plainAcl(List<String> writerTopics) {
        StringBuilder y = new StringBuilder("globalWhiteRemoteAddresses: []\naccounts:\n");
        y.append(account(WRITER, WRITER_SECRET, "SUB"));
        writerTopics.stream().filter(t -> !t.equals(readOnlyTopic))
            .forEach(t -> y.append("      - ").append(t).append("=PUB|SUB\n"));
        y.append(account(READER, READER_SECRET, "SUB"));
        y.append("      - ").append(readOnlyTopic).append("=SUB\n");
        y.append(account(GATEWAY_USER, GATEWAY_SECRET, "SUB"));
        y.append("      - ").append(fanA).append("=PUB\n");
        y.append("      - ").append(fanB).append("=PUB\n");
        return y.toString();
    }

    private static String account(String accessKey, String secret, String groupPerm) {
        return "  - accessKey: " + accessKey + "\n    secretKey: " + secret + "\n    admin: false\n"
            + "    defaultTopicPerm: DENY\n    defaultGroupPerm: " + groupPerm + "\n    topicPerms:\n";
    }

    @Test
    void theLegacyClusterListensOnLoopbackOnly() throws Exception {
        Set<ProcSockets.TcpConnection> listeners = ProcSockets.listenersOf(broker.pid());
        System.err.println("[it] 4.9.7 cluster listeners: " + listeners);
        // name server, broker, its VIP port and its HA port
        assertTrue(listeners.size() >= 4, listeners::toString);
        for (ProcSockets.TcpConnection l : listeners) {
            assertEquals("127.0.0.1", l.localAddress(), () -> "bound beyond loopback: " + listeners);
        }
    }

    private static ScenarioRunner.Spec signed(ClientVersion version, String scenario, String namesrv, String topic,
                                              String accessKey, String secret) {
        return ScenarioRunner.scenario(version, scenario).namesrv(namesrv).topic(topic)
            .arg("access-key", accessKey).arg("secret-key", secret).timeout(Duration.ofSeconds(90));
    }

    @ParameterizedTest
    @EnumSource(ClientVersion.class)
    void signedJsonClientsProduceAndConsumeThroughTheBinaryUpgrade(ClientVersion version) throws Exception {
        String topic = TOPICS.get(version);
        double before = MeterReadings.of(gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ);
        ScenarioResult sent = signed(version, "sync-send", gateway.namesrvAddress(), topic, WRITER, WRITER_SECRET)
            .count(20).run().assertOk();
        ScenarioResult received = signed(version, "push-consume", gateway.namesrvAddress(), topic, WRITER,
            WRITER_SECRET).count(20).run().assertOk();
        assertEquals(20, sent.keys("sent").size());
        assertEquals(new HashSet<>(sent.keys("sent")), new HashSet<>(received.keys("received")), received::describe);
        assertTrue(MeterReadings.of(gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ) > before,
            "the signed JSON headers really were re-encoded as ROCKETMQ binary");
    }

    @ParameterizedTest
    @EnumSource(ClientVersion.class)
    void aWrongSecretGetsTheBrokersOwnRefusalUnchanged(ClientVersion version) throws Exception {
        assertSameRefusal(version, badSecretTopic, WRITER, "not-the-secret");
    }

    @Test
    void anAccountWithoutPublishPermissionGetsTheBrokersOwnRefusalUnchanged() throws Exception {
        assertSameRefusal(ClientVersion.V4_9_7, readOnlyTopic, READER, READER_SECRET);
    }

    private static void assertSameRefusal(ClientVersion version, String topic, String accessKey, String secret)
        throws Exception {
        JsonNode direct = refusal(version, broker.namesrvAddress(), topic, accessKey, secret);
        JsonNode viaGateway = refusal(version, gateway.namesrvAddress(), topic, accessKey, secret);
        System.err.println("[it] 4.9.7 ACL refusal direct: " + direct + "\n[it] via gateway: " + viaGateway);
        assertEquals(direct.path("brokerCode").asInt(), viaGateway.path("brokerCode").asInt());
        assertEquals(direct.path("brokerRemark").asText(), viaGateway.path("brokerRemark").asText());
        assertFalse(viaGateway.path("brokerRemark").asText().isEmpty());
    }

    private static JsonNode refusal(ClientVersion version, String namesrv, String topic, String accessKey,
                                    String secret) throws Exception {
        return AclIT.refusal(signed(version, "sync-send", namesrv, topic, accessKey, secret));
    }

    @Test
    void fanOutPartsSignedWithUpstreamAclAreAcceptedByThe497Broker() throws Exception {
        DefaultMQProducer producer = writerProducer(gateway, "acl1_fan_ok");
        SendResult result;
        try {
            result = producer.send(AclIT.fanoutBatch("ok", fanA, fanB, fanA + "," + fanB));
        } finally {
            producer.shutdown();
        }
        assertEquals(SendStatus.SEND_OK, result.getSendStatus(), result::toString);
        assertEquals(Set.of("ok-0", "ok-2"), writerReceive(fanA, 2));
        assertEquals(Set.of("ok-1", "ok-2"), writerReceive(fanB, 2));
        assertTrue(MeterReadings.of(gateway.metrics()).fanoutRequests("success") >= 1, "counted");
    }

    @Test
    void withoutUpstreamAclAFanOutIsRefusedWithTheBrokersReason() throws Exception {
        DefaultMQProducer producer = writerProducer(unsigned, "acl1_fan_unsigned");
        try {
            Exception e = assertThrows(Exception.class, () -> producer.send(AclIT.fanoutBatch("unsigned", fanA)));
            StringBuilder chain = new StringBuilder();
            for (Throwable t = e; t != null && chain.length() < 4000; t = t.getCause() == t ? null : t.getCause()) {
                chain.append(t).append(" <- ");
            }
            System.err.println("[it] unsigned fan-out refused by 4.9.7: " + chain);
            assertTrue(chain.toString().contains("fan-out failed: not stored in " + fanA), chain::toString);
            // 4.9.7's words for a request without AccessKey
            assertTrue(chain.toString().contains("No accessKey is configured"), chain::toString);
        } finally {
            producer.shutdown();
        }
    }

    private static AclClientRPCHook writerHook() {
        return new AclClientRPCHook(new SessionCredentials(WRITER, WRITER_SECRET));
    }

    private static DefaultMQProducer writerProducer(GatewayFixture through, String hint) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(UniqueNames.group(hint + "_pg"), writerHook());
        p.setNamesrvAddr(through.namesrvAddress());
        p.setInstanceName(UniqueNames.instance(hint));
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        return p;
    }

    /** The keys the writer's 4.9.7 push consumer reads from {@code topic} through the gateway, from the first offset. */
    private static Set<String> writerReceive(String topic, int expected) throws Exception {
        ScenarioResult r = signed(ClientVersion.V4_9_7, "push-consume", gateway.namesrvAddress(), topic, WRITER,
            WRITER_SECRET).count(expected).run().assertOk();
        return new TreeSet<>(r.keys("received"));
    }
}
