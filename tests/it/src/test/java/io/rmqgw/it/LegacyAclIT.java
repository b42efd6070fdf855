package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.UpstreamAclConfig;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.LegacyClusterFixture;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ProcSockets;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
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
import org.junit.jupiter.api.extension.RegisterExtension;
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
class LegacyAclIT {

    static final String WRITER = "rmqgw_writer";
    static final String WRITER_SECRET = "rmqgw-writer-secret-1";
    static final String READER = "rmqgw_reader";
    static final String READER_SECRET = "rmqgw-reader-secret-1";
    static final String GATEWAY_USER = "rmqgw_gateway";
    static final String GATEWAY_SECRET = "rmqgw-gateway-secret-1";

    static final String RUN = Long.toString(System.nanoTime() % 1_000_000);
    static final Map<ClientVersion, String> TOPICS = new EnumMap<>(ClientVersion.class);
    static final String READ_ONLY_TOPIC = "acl1_read_only_" + RUN;
    static final String BAD_SECRET_TOPIC = "acl1_bad_secret_" + RUN;
    static final String FAN_A = "acl1_fan_a_" + RUN;
    static final String FAN_B = "acl1_fan_b_" + RUN;

    @RegisterExtension
    static final LegacyClusterFixture LEGACY = new LegacyClusterFixture();
    static ForkedBroker broker;
    /** Relays toward the broker as ROCKETMQ binary; fan-out on, its parts signed with upstream.acl. */
    static GatewayFixture gateway;
    /** The same without upstream.acl. */
    static GatewayFixture unsigned;

    @BeforeAll
    static void setUp() throws Exception {
        for (ClientVersion version : ClientVersion.values()) {
            TOPICS.put(version, "acl1_" + version.name() + "_" + RUN);
        }
        List<String> topics = new ArrayList<>(TOPICS.values());
        topics.addAll(List.of(READ_ONLY_TOPIC, BAD_SECRET_TOPIC, FAN_A, FAN_B));
        Properties acl = new Properties();
        acl.setProperty("aclEnable", "true");
        broker = LEGACY.create("legacy-acl-" + RUN, "ItLegacyAclCluster", "it-legacy-acl", acl, topics);
        Path aclFile = broker.legacyHome().resolve("conf").resolve("plain_acl.yml");
        Files.createDirectories(aclFile.getParent());
        Files.writeString(aclFile, plainAcl(topics));
        LEGACY.start(", ACL 1.0");
        FanoutConfig fanout = new FanoutConfig(true, null, null, null, null, null);
        gateway = LEGACY.add(GatewayFixture.startWith(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ, c -> c
            .withUpstream(c.upstream().withAcl(new UpstreamAclConfig(GATEWAY_USER, GATEWAY_SECRET))).withFanout(fanout)));
        unsigned = LEGACY.add(GatewayFixture.startWith(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ,
            c -> c.withFanout(fanout)));
    }

    /**
     * 4.9.7's plain ACL file. No global or per-account white addresses: a request from a white address skips
     * the signature check, and every test connection comes from 127.0.0.1.
     */
    private static String plainAcl(List<String> writerTopics) {
        StringBuilder y = new StringBuilder("globalWhiteRemoteAddresses: []\naccounts:\n");
        y.append(account(WRITER, WRITER_SECRET, "SUB"));
        writerTopics.stream().filter(t -> !t.equals(READ_ONLY_TOPIC))
            .forEach(t -> y.append("      - ").append(t).append("=PUB|SUB\n"));
        y.append(account(READER, READER_SECRET, "SUB"));
        y.append("      - ").append(READ_ONLY_TOPIC).append("=SUB\n");
        y.append(account(GATEWAY_USER, GATEWAY_SECRET, "SUB"));
        y.append("      - ").append(FAN_A).append("=PUB\n");
        y.append("      - ").append(FAN_B).append("=PUB\n");
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
        assertSameRefusal(version, BAD_SECRET_TOPIC, WRITER, "not-the-secret");
    }

    @Test
    void anAccountWithoutPublishPermissionGetsTheBrokersOwnRefusalUnchanged() throws Exception {
        assertSameRefusal(ClientVersion.V4_9_7, READ_ONLY_TOPIC, READER, READER_SECRET);
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
            result = producer.send(AclIT.fanoutBatch("ok", FAN_A, FAN_B, FAN_A + "," + FAN_B));
        } finally {
            producer.shutdown();
        }
        assertEquals(SendStatus.SEND_OK, result.getSendStatus(), result::toString);
        assertEquals(Set.of("ok-0", "ok-2"), writerReceive(FAN_A, 2));
        assertEquals(Set.of("ok-1", "ok-2"), writerReceive(FAN_B, 2));
        assertTrue(MeterReadings.of(gateway.metrics()).fanoutRequests("success") >= 1, "counted");
    }

    @Test
    void withoutUpstreamAclAFanOutIsRefusedWithTheBrokersReason() throws Exception {
        DefaultMQProducer producer = writerProducer(unsigned, "acl1_fan_unsigned");
        try {
            Exception e = assertThrows(Exception.class, () -> producer.send(AclIT.fanoutBatch("unsigned", FAN_A)));
            StringBuilder chain = new StringBuilder();
            for (Throwable t = e; t != null && chain.length() < 4000; t = t.getCause() == t ? null : t.getCause()) {
                chain.append(t).append(" <- ");
            }
            System.err.println("[it] unsigned fan-out refused by 4.9.7: " + chain);
            assertTrue(chain.toString().contains("fan-out failed: not stored in " + FAN_A), chain::toString);
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
        DefaultMQProducer p = new DefaultMQProducer(hint + "_pg_" + RUN, writerHook());
        p.setNamesrvAddr(through.namesrvAddress());
        p.setInstanceName("rmqgw-it-" + hint + "-" + System.nanoTime());
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
