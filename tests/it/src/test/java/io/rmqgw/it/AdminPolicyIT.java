package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.AdminRequestsConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.it.fixture.BrokerRequestRecorder;
import io.rmqgw.it.fixture.BrokerRequestRecorder.Server;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 27 (2): the admin-request policy in front of a real RocketMQ 5.4.0 name server and broker. Through a gateway
 * with the default policy, the destructive codes the issue names (and configuration reads) are answered NO_PERMISSION
 * and never reach the cluster: the topic keeps its messages, its route and its group. mqadmin itself
 * ({@code MQAdminStartup} of rocketmq-tools 5.4.0, each command in a JVM of its own) keeps working through that
 * gateway for its read commands and for creating a topic and a group. A gateway with {@code admin-requests.allow-all}
 * relays the same codes and they take effect.
 */
@ExtendWith(SharedClusterExtension.class)
class AdminPolicyIT {

    static SharedCluster cluster;
    @RegisterExtension
    static final Closer CLOSER = Closer.allTests();
    static GatewayFixture gateway;
    static GatewayFixture optedIn;

    @BeforeAll
    static void setUp(SharedCluster shared) throws Exception {
        cluster = shared;
        gateway = CLOSER.add(GatewayFixture.start(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ));
        optedIn = CLOSER.add(GatewayFixture.startWith(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ,
            c -> c.withAdminRequests(new AdminRequestsConfig(true, null, null))));
    }

    /** {@code mqadmin COMMAND ARGS -n namesrv} in a JVM of its own; its exit code and output. */
    private static String mqadmin(GatewayFixture through, String... command) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-cp", System.getProperty("java.class.path"), "org.apache.rocketmq.tools.command.MQAdminStartup"));
        cmd.addAll(List.of(command));
        cmd.addAll(List.of("-n", through.namesrvAddress()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out;
        try {
            out = p.getInputStream().readAllBytes();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "mqadmin " + String.join(" ", command) + " did not end");
        } finally {
            p.destroyForcibly();
        }
        String text = new String(out, StandardCharsets.UTF_8);
        System.err.println("[it] mqadmin " + String.join(" ", command) + " (exit " + p.exitValue() + "):\n" + text);
        assertEquals(0, p.exitValue(), text);
        assertFalse(text.contains("Exception") || text.contains("command failed"), text);
        return text;
    }

    private static Wire.Frame call(int port, int code, int opaque, Wire.Builder request) throws IOException {
        try (RawClient client = RawClient.connect(port)) {
            client.send(request.opaque(opaque).bytes());
            Wire.Frame answer = client.read(Duration.ofSeconds(10));
            assertEquals(opaque, answer.opaque());
            System.err.println("[it] code " + code + " on port " + port + ": " + answer.code() + " " + answer.remark());
            return answer;
        }
    }

    private static long messagesIn(String topic) throws Exception {
        long total = 0;
        for (int q = 0; q < 8; q++) {
            total += Math.max(0, cluster.brokerController().getMessageStore().getMaxOffsetInQueue(topic, q));
        }
        return total;
    }

    private static List<Object[]> destructive(String topic, String group) {
        // {code, on the name-server port?, request}
        return List.of(
            new Object[] {RequestCode.DELETE_TOPIC_IN_BROKER, false, Wire.request(215).ext("topic", topic)},
            new Object[] {RequestCode.DELETE_TOPIC_IN_NAMESRV, true, Wire.request(216).ext("topic", topic)},
            new Object[] {RequestCode.WIPE_WRITE_PERM_OF_BROKER, true,
                Wire.request(205).ext("brokerName", cluster.brokerName())},
            new Object[] {RequestCode.ADD_WRITE_PERM_OF_BROKER, true,
                Wire.request(327).ext("brokerName", cluster.brokerName())},
            new Object[] {RequestCode.UPDATE_BROKER_CONFIG, false,
                Wire.request(25).body("brokerPermission=4\n")},
            new Object[] {RequestCode.DELETE_SUBSCRIPTIONGROUP, false,
                Wire.request(207).ext("groupName", group).ext("cleanOffset", "true")},
            new Object[] {RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, false, Wire.request(222).ext("topic", topic)
                .ext("group", group).ext("timestamp", "0").ext("isForce", "true")},
            new Object[] {RequestCode.UPDATE_NAMESRV_CONFIG, true, Wire.request(318).body("deleteTopicWithBrokerRegistration=true\n")},
            new Object[] {RequestCode.DELETE_KV_CONFIG, true, Wire.request(102).ext("namespace", "ORDER_TOPIC_CONFIG")
                .ext("key", topic)},
            new Object[] {RequestCode.GET_BROKER_CONFIG, false, Wire.request(26)},
            new Object[] {RequestCode.GET_NAMESRV_CONFIG, true, Wire.request(319)});
    }

    @Test
    void destructiveCodesAreRefusedAndMqadminReadsAndCreatesWork() throws Exception {
        String topic = cluster.topic("policy");
        String group = cluster.group("policy");
        String created = cluster.topic("policy_created");
        int n = 12;
        ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send").namesrv(gateway.namesrvAddress()).topic(topic)
            .count(n).timeout(Duration.ofSeconds(30)).run().assertOk();
        assertEquals(n, messagesIn(topic));

        // mqadmin through the gateway: creates and reads
        assertTrue(mqadmin(gateway, "updateSubGroup", "-g", group, "-c", cluster.clusterName()).contains("success"));
        assertNotNull(cluster.brokerController().getSubscriptionGroupManager().findSubscriptionGroupConfig(group));
        assertTrue(mqadmin(gateway, "updateTopic", "-t", created, "-c", cluster.clusterName(), "-r", "2", "-w", "2")
            .contains("success"));
        assertNotNull(cluster.brokerController().getTopicConfigManager().selectTopicConfig(created),
            "updateTopic created the topic on the broker");
        assertTrue(mqadmin(gateway, "clusterList").contains(cluster.brokerName()));
        assertTrue(mqadmin(gateway, "topicList").contains(topic));
        assertTrue(mqadmin(gateway, "topicRoute", "-t", topic).contains(cluster.brokerName()));
        assertTrue(mqadmin(gateway, "topicStatus", "-t", topic).contains(cluster.brokerName()));
        mqadmin(gateway, "consumerProgress");
        String advertised = gateway.gateway().brokerListeners().get(cluster.brokerAddress());
        assertTrue(mqadmin(gateway, "brokerStatus", "-b", advertised).contains("brokerVersionDesc"));

        // the destructive codes, raw, at the ports the issue used: refused, nothing reaches the cluster
        int brokerPort = gateway.brokerPort(cluster.brokerAddress());
        int opaque = 1;
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            for (Object[] d : destructive(topic, group)) {
                int code = (int) d[0];
                Wire.Frame answer = call((boolean) d[1] ? gateway.listenPort() : brokerPort, code, opaque++,
                    ((Wire.Builder) d[2]).type(SerializeType.JSON));
                assertEquals(ResponseCode.NO_PERMISSION, answer.code(), "code " + code + ": " + answer.remark());
                assertTrue(answer.remark().contains("admin-requests.allow-all"), answer.remark());
            }
            Set<Integer> reached = new java.util.TreeSet<>(rec.codes(Server.BROKER));
            reached.addAll(rec.codes(Server.BROKER_FAST));
            reached.addAll(rec.codes(Server.NAMESRV));
            for (Object[] d : destructive(topic, group)) {
                assertFalse(reached.contains((int) d[0]), "code " + d[0] + " reached the cluster: " + reached);
            }
        }
        // the topic is still there, with its messages and route; the group too
        assertEquals(n, messagesIn(topic));
        assertNotNull(cluster.brokerController().getTopicConfigManager().selectTopicConfig(topic));
        assertTrue(mqadmin(gateway, "topicRoute", "-t", topic).contains(cluster.brokerName()));
        assertNotNull(cluster.brokerController().getSubscriptionGroupManager().findSubscriptionGroupConfig(group));
        ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume").namesrv(gateway.namesrvAddress()).topic(topic)
            .group(group).count(n).timeout(Duration.ofSeconds(90)).run().assertOk();
        assertTrue(MeterReadings.of(gateway.metrics()).adminRequestsRefused("destructive") >= 9);
        assertTrue(MeterReadings.of(gateway.metrics()).adminRequestsRefused("config_read") >= 2);
    }

    @Test
    void theOptInRelaysThemAndTheyTakeEffect() throws Exception {
        String topic = cluster.topic("policy_optin");
        String group = cluster.group("policy_optin");
        ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send").namesrv(optedIn.namesrvAddress()).topic(topic)
            .count(4).timeout(Duration.ofSeconds(30)).run().assertOk();
        mqadmin(optedIn, "updateSubGroup", "-g", group, "-c", cluster.clusterName());
        assertNotNull(cluster.brokerController().getSubscriptionGroupManager().findSubscriptionGroupConfig(group));
        int brokerPort = optedIn.brokerPort(cluster.brokerAddress());

        Wire.Frame config = call(brokerPort, 26, 1, Wire.request(26));
        assertEquals(ResponseCode.SUCCESS, config.code(), config.remark());
        assertTrue(config.bodyText().contains("brokerName"), "the broker's configuration");
        assertEquals(ResponseCode.SUCCESS, call(brokerPort, 207, 2, Wire.request(207).ext("groupName", group)
            .ext("cleanOffset", "true")).code());
        assertEquals(ResponseCode.SUCCESS, call(brokerPort, 215, 3, Wire.request(215).ext("topic", topic)).code());
        assertEquals(ResponseCode.SUCCESS, call(optedIn.listenPort(), 216, 4, Wire.request(216).ext("topic", topic))
            .code());
        assertNull(cluster.brokerController().getTopicConfigManager().selectTopicConfig(topic), "deleted");
        assertNull(cluster.brokerController().getSubscriptionGroupManager().getSubscriptionGroupTable().get(group));
        assertEquals(0, MeterReadings.of(optedIn.metrics()).adminRequestsRefused("destructive"));
    }
}
