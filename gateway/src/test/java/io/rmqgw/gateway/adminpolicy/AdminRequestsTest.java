package io.rmqgw.gateway.adminpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.AdminRequestsConfig;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The admin-request policy on a real gateway in front of a scripted name server and broker (both answer every
 * request SUCCESS): refused codes never reach them and are answered NO_PERMISSION naming the setting; reads, creates
 * and client traffic pass; the opt-ins allow, from every address or from listed ones; a reload changes it at once.
 */
class AdminRequestsTest {

    @RegisterExtension
    final Closer resources = Closer.eachTest();

    private ScriptedCluster start(AdminRequestsConfig policy) throws Exception {
        return ScriptedCluster.options().gateway(g -> g.adminRequests(policy)).start(resources);
    }

    private static Wire.Frame call(RawClient client, int code, int opaque, SerializeType type) throws Exception {
        client.send(Wire.request(code).opaque(opaque).type(type).ext("topic", "Kept").ext("brokerName", "broker-a")
            .bytes());
        Wire.Frame answer = client.read(RawClient.WAIT);
        assertEquals(opaque, answer.opaque(), "answer to code " + code);
        return answer;
    }

    private static int received(ScriptedPeer peer, int code) {
        return (int) peer.codes().stream().filter(c -> c == code).count();
    }

    @Test
    void destructiveCodesAreRefusedByDefaultOnBrokerAndNameServerPorts() throws Exception {
        ScriptedCluster cluster = start(AdminRequestsConfig.DEFAULT);
        TestGateway gateway = cluster.gateway();
        ScriptedPeer broker = cluster.broker();
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            int opaque = 1;
            for (int code : new int[] {RequestCode.DELETE_TOPIC_IN_BROKER, RequestCode.WIPE_WRITE_PERM_OF_BROKER,
                RequestCode.UPDATE_BROKER_CONFIG, RequestCode.DELETE_SUBSCRIPTIONGROUP, RequestCode.GET_BROKER_CONFIG,
                RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, RequestCode.AUTH_DELETE_USER, 60001}) {
                SerializeType type = opaque % 2 == 0 ? SerializeType.JSON : SerializeType.ROCKETMQ;
                Wire.Frame answer = call(client, code, opaque++, type);
                assertEquals(ResponseCode.NO_PERMISSION, answer.code(), "code " + code + ": " + answer.remark());
                assertEquals(type, answer.serializeType(), "answered in the client's encoding");
                assertTrue(answer.remark().contains("admin-requests.allow-all or admin-requests.allow-from"),
                    answer.remark());
                assertTrue(answer.remark().contains(String.valueOf(code)), answer.remark());
            }
            // a refused oneway is dropped, the connection goes on
            client.send(Wire.request(RequestCode.DELETE_TOPIC_IN_BROKER).opaque(50).oneway().ext("topic", "Kept")
                .bytes());
            // reads, creates and client traffic pass
            for (int code : new int[] {RequestCode.GET_BROKER_RUNTIME_INFO, RequestCode.GET_TOPIC_STATS_INFO,
                RequestCode.UPDATE_AND_CREATE_TOPIC, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
                RequestCode.GET_MAX_OFFSET, RequestCode.GET_CONSUME_STATS}) {
                Wire.Frame answer = call(client, code, opaque++, SerializeType.ROCKETMQ);
                assertEquals(Wire.SUCCESS, answer.code(), "code " + code + ": " + answer.remark());
                assertEquals("echo " + code, answer.remark());
            }
        }
        for (int code : new int[] {215, 205, 25, 207, 26, 222, 3003, 60001}) {
            assertEquals(0, received(broker, code), "code " + code + " reached the broker");
        }
        try (RawClient client = RawClient.connect(gateway.port())) {
            // the first request of a connection: answered without dialing a name server
            Wire.Frame answer = call(client, RequestCode.DELETE_TOPIC_IN_NAMESRV, 100, SerializeType.JSON);
            assertEquals(ResponseCode.NO_PERMISSION, answer.code(), answer.remark());
            assertEquals(ResponseCode.NO_PERMISSION, call(client, RequestCode.UPDATE_NAMESRV_CONFIG, 101,
                SerializeType.JSON).code());
            assertEquals(ResponseCode.NO_PERMISSION, call(client, RequestCode.GET_NAMESRV_CONFIG, 102,
                SerializeType.JSON).code());
            assertEquals(ResponseCode.NO_PERMISSION, call(client, RequestCode.DELETE_KV_CONFIG, 103,
                SerializeType.JSON).code());
            assertEquals(Wire.SUCCESS, call(client, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, 104,
                SerializeType.JSON).code());
            assertEquals(Wire.SUCCESS, call(client, RequestCode.GET_KVLIST_BY_NAMESPACE, 105, SerializeType.JSON)
                .code());
        }
        for (int code : new int[] {216, 318, 319, 102}) {
            assertEquals(0, received(cluster.namesrv(), code), "code " + code + " reached the name server");
        }
        assertEquals(10, MeterReadings.of(gateway.metrics()).adminRequestsRefused("destructive"), "7 on the broker port (the oneway"
            + " too), 3 on the name server's");
        assertEquals(2, MeterReadings.of(gateway.metrics()).adminRequestsRefused("config_read"));
        assertEquals(1, MeterReadings.of(gateway.metrics()).adminRequestsRefused("unknown"));
        assertEquals(1, MeterReadings.of(gateway.metrics()).requests(RequestCode.DELETE_TOPIC_IN_BROKER, ResponseCode.NO_PERMISSION),
            "the oneway has no answer to count");
    }

    @Test
    void allowAllRelaysEveryCode() throws Exception {
        ScriptedCluster cluster = start(new AdminRequestsConfig(true, null, null));
        try (RawClient client = RawClient.connect(cluster.gateway().brokerPort(cluster.broker().address()))) {
            assertEquals(Wire.SUCCESS, call(client, RequestCode.DELETE_TOPIC_IN_BROKER, 1, SerializeType.JSON).code());
            assertEquals(Wire.SUCCESS, call(client, 60001, 2, SerializeType.JSON).code());
        }
        assertEquals(1, received(cluster.broker(), RequestCode.DELETE_TOPIC_IN_BROKER));
        assertEquals(0, MeterReadings.of(cluster.gateway().metrics()).adminRequestsRefused("destructive"));
    }

    @Test
    void allowUnknownCodesKeepsTheClassifiedOnesRefused() throws Exception {
        ScriptedCluster cluster = start(new AdminRequestsConfig(null, null, true));
        try (RawClient client = RawClient.connect(cluster.gateway().port())) {
            assertEquals(Wire.SUCCESS, call(client, 60001, 1, SerializeType.JSON).code());
            Wire.Frame refused = call(client, RequestCode.DELETE_TOPIC_IN_NAMESRV, 2, SerializeType.JSON);
            assertEquals(ResponseCode.NO_PERMISSION, refused.code());
        }
    }

    @Test
    void allowFromAListedAddressOnlyAndReloadChangesIt() throws Exception {
        ScriptedCluster cluster = start(new AdminRequestsConfig(null, List.of("10.0.0.0/8", "::1"), null));
        TestGateway gateway = cluster.gateway();
        int port = gateway.brokerPort(cluster.broker().address());
        try (RawClient client = RawClient.connect(port)) {
            assertEquals(ResponseCode.NO_PERMISSION, call(client, RequestCode.DELETE_TOPIC_IN_BROKER, 1,
                SerializeType.JSON).code(), "127.0.0.1 is not listed");
            // the policy in force changes for the next request of a connection already open
            assertEquals(List.of("admin-requests"), gateway.gateway().reload(gateway.gateway().config()
                .withAdminRequests(new AdminRequestsConfig(null, List.of("127.0.0.0/30"), null))).applied());
            assertEquals(Wire.SUCCESS, call(client, RequestCode.DELETE_TOPIC_IN_BROKER, 2, SerializeType.JSON).code());
            assertTrue(gateway.gateway().reload(gateway.gateway().config()
                .withAdminRequests(new AdminRequestsConfig(null, List.of("127.0.0.1"), null))).applied()
                .contains("admin-requests"));
            assertEquals(Wire.SUCCESS, call(client, RequestCode.WIPE_WRITE_PERM_OF_BROKER, 3, SerializeType.JSON)
                .code());
            assertFalse(gateway.gateway().reload(gateway.gateway().config()).applied().contains("admin-requests"),
                "the same settings again change nothing");
            gateway.gateway().reload(gateway.gateway().config().withAdminRequests(AdminRequestsConfig.DEFAULT));
            assertEquals(ResponseCode.NO_PERMISSION, call(client, RequestCode.WIPE_WRITE_PERM_OF_BROKER, 4,
                SerializeType.JSON).code());
        }
        assertEquals(1, received(cluster.broker(), RequestCode.DELETE_TOPIC_IN_BROKER));
        assertEquals(1, received(cluster.broker(), RequestCode.WIPE_WRITE_PERM_OF_BROKER));
    }
}
