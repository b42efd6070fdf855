package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * RocketMQ ACL through the gateway, against a 5.4.0 broker with authentication on (ACL 2.0: the
 * broker checks the AccessKey/Signature extFields of every request; the signature covers the sorted
 * extFields and the body). Clients sign with rocketmq's own {@code AclClientRPCHook} (4.9.7: rocketmq-acl;
 * 5.4.0: in rocketmq-client) and send JSON headers, which the gateway re-encodes as ROCKETMQ binary (or,
 * for a binary client, as JSON): signed producers and consumers work, and a wrong secret gets the
 * broker's own refusal, with the code and remark a direct connection gets.
 */
@ExtendWith(SharedClusterExtension.class)
class AclIT {

    static final String USER = "rmqgw_acl";
    static final String SECRET = "rmqgw-acl-secret-1";
    static final String WRONG_SECRET = "not-the-secret";

    static ForkedBroker broker;
    static GatewayFixture toBinary;
    static GatewayFixture toJson;
    static SharedCluster shared;

    @BeforeAll
    static void setUp(SharedCluster cluster) throws Exception {
        shared = cluster;
        Properties acl = new Properties();
        acl.setProperty("authenticationEnabled", "true");
        acl.setProperty("authenticationProvider",
            "org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider");
        acl.setProperty("authenticationMetadataProvider",
            "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider");
        acl.setProperty("initAuthenticationUser", "{\"username\":\"" + USER + "\",\"password\":\"" + SECRET + "\"}");
        acl.setProperty("innerClientAuthenticationCredentials",
            "{\"accessKey\":\"" + USER + "\",\"secretKey\":\"" + SECRET + "\"}");
        // its own name server: the broker's ACL must not affect the shared cluster
        broker = ForkedBroker.create(cluster.dir().resolve("acl-broker"), null, "ItAclCluster", "it-acl-a", acl)
            .start();
        System.err.println("[it] " + broker + " (ACL 2.0) started in " + broker.lastStartTime().toMillis() + " ms");
        toBinary = GatewayFixture.start(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ);
        toJson = GatewayFixture.start(broker.namesrvAddress(), HeaderEncoding.JSON);
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (toBinary != null) {
            toBinary.close();
        }
        if (toJson != null) {
            toJson.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    private static ScenarioRunner.Spec signed(ClientVersion version, String scenario, String namesrv, String topic,
                                              String secret) {
        return ScenarioRunner.scenario(version, scenario).namesrv(namesrv).topic(topic)
            .arg("access-key", USER).arg("secret-key", secret).timeout(Duration.ofSeconds(90));
    }

    @ParameterizedTest
    @EnumSource(ClientVersion.class)
    void signedJsonClientsProduceAndConsumeThroughTheBinaryUpgrade(ClientVersion version) throws Exception {
        String topic = shared.topic("acl_" + version.name());
        ScenarioResult sent = signed(version, "sync-send", toBinary.namesrvAddress(), topic, SECRET).count(20)
            .run().assertOk();
        ScenarioResult received = signed(version, "push-consume", toBinary.namesrvAddress(), topic, SECRET).count(20)
            .run().assertOk();
        assertEquals(new HashSet<>(sent.keys("sent")), new HashSet<>(received.keys("received")), received::describe);
        assertEquals(20, sent.keys("sent").size());
        assertTrue(toBinary.metrics().headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ) > 0,
            "the signed JSON headers really were re-encoded as ROCKETMQ binary");
    }

    @Test
    void aSignedBinaryClientWorksThroughTheJsonDowngrade() throws Exception {
        String topic = shared.topic("acl_bin");
        ScenarioResult sent = signed(ClientVersion.V5_4_0, "sync-send", toJson.namesrvAddress(), topic, SECRET)
            .systemProperty("rocketmq.serialize.type", "ROCKETMQ").count(10).run().assertOk();
        ScenarioResult received = signed(ClientVersion.V5_4_0, "lite-pull-consume", toJson.namesrvAddress(), topic,
            SECRET).systemProperty("rocketmq.serialize.type", "ROCKETMQ").count(10).run().assertOk();
        assertEquals(new HashSet<>(sent.keys("sent")), new HashSet<>(received.keys("received")), received::describe);
        assertTrue(toJson.metrics().headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON) > 0,
            "the signed binary headers really were re-encoded as JSON");
    }

    @ParameterizedTest
    @EnumSource(ClientVersion.class)
    void aWrongSecretGetsTheBrokersOwnRefusalUnchanged(ClientVersion version) throws Exception {
        String topic = shared.topic("acl_bad_" + version.name());
        JsonNode direct = refusal(version, broker.namesrvAddress(), topic);
        JsonNode viaGateway = refusal(version, toBinary.namesrvAddress(), topic);
        System.err.println("[it] ACL refusal direct: " + direct + "\n[it] via gateway: " + viaGateway);
        assertEquals(direct.path("brokerCode").asInt(), viaGateway.path("brokerCode").asInt());
        assertEquals(direct.path("brokerRemark").asText(), viaGateway.path("brokerRemark").asText());
        assertFalse(viaGateway.path("brokerRemark").asText().isEmpty());
    }

    /** The send-error line of one send with the wrong secret (no retries). */
    private static JsonNode refusal(ClientVersion version, String namesrv, String topic) throws Exception {
        ScenarioResult r = signed(version, "sync-send", namesrv, topic, WRONG_SECRET).count(1).arg("retries", 0)
            .timeout(Duration.ofSeconds(60)).run();
        assertFalse(r.ok(), r::describe);
        List<JsonNode> errors = r.lines("send-error");
        assertEquals(1, errors.size(), r::describe);
        assertTrue(errors.get(0).has("brokerCode"), () -> "refused by the broker: " + r.describe());
        return errors.get(0);
    }
}
