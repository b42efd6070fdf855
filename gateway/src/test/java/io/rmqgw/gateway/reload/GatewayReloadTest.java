package io.rmqgw.gateway.reload;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.ReloadResult;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.config.PortRange;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.net.ConnectException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Gateway#reload}: what a reload changes applies to the next dial, request or frame, connections
 * stay up, settings bound to sockets are reported as needing a restart and left alone, and meters
 * carry on counting.
 */
class GatewayReloadTest {

    private static final int GET_MAX_OFFSET = 30;
    private static final int SEND_MESSAGE_V2 = 310;
    private static final int INVALID_PARAMETER = 29;
    private static final String UPSTREAM = "upstream";
    private static final String EDGE = "names, header encodings, downstream";

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private ScriptedPeer namesrvA;
    private ScriptedPeer namesrvB;
    private TestGateway gateway;
    /** When false the broker does not answer GET_MAX_OFFSET (to let requests time out). */
    private final AtomicBoolean brokerAnswers = new AtomicBoolean(true);

    /** Broker, name server A and a gateway in front of A; name server B, which knows the same, for reloads to move to. */
    private void startGateway(Duration requestTimeout, HeaderEncoding encoding, NamesConfig names) throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker((c, f) -> {
            if (f.isResponse() || f.isOneway() || (f.code() == GET_MAX_OFFSET && !brokerAnswers.get())) {
                return;
            }
            c.send(Wire.response(Wire.SUCCESS, f.opaque()).type(f.serializeType()).remark("broker " + f.code()).bytes());
        }).nameServer(brokers -> Routes.nameServer(Map.of("TopicA", brokers)))
            .gateway(g -> g.requestTimeout(requestTimeout).headerEncoding(encoding).names(names)).start(resources);
        broker = cluster.broker();
        namesrvA = cluster.namesrv();
        gateway = cluster.gateway();
        namesrvB = resources.add(ScriptedPeer.start(Routes.nameServer(Map.of("TopicA", Map.of("broker-a", broker.address())))));
        namesrvB.clusterInfo(ScriptedPeer.clusterInfoNaming("broker-a", broker.address()));
    }

    // ---- building the next configuration ----

    private static GatewayConfig with(GatewayConfig c, UpstreamConfig upstream) {
        return new GatewayConfig(c.listen(), c.advertiseHost(), c.brokerPorts(), upstream, c.routes(), c.maxFrameLength(),
            c.drainTimeout(), c.embedded(), c.admin(), c.downstream(), c.names()).withAdminRequests(c.adminRequests());
    }

    private static GatewayConfig with(GatewayConfig c, NamesConfig names) {
        return new GatewayConfig(c.listen(), c.advertiseHost(), c.brokerPorts(), c.upstream(), c.routes(),
            c.maxFrameLength(), c.drainTimeout(), c.embedded(), c.admin(), c.downstream(), names)
            .withAdminRequests(c.adminRequests());
    }

    private static UpstreamConfig namesrv(UpstreamConfig u, String address) {
        return new UpstreamConfig(List.of(HostPort.parse("upstream.namesrv", address)), u.connectTimeout(),
            u.requestTimeout(), u.longPollTimeout(), u.headerEncoding());
    }

    private static UpstreamConfig requestTimeout(UpstreamConfig u, Duration timeout) {
        return new UpstreamConfig(u.namesrv(), u.connectTimeout(), timeout, u.longPollTimeout(), u.headerEncoding());
    }

    private static UpstreamConfig headerEncoding(UpstreamConfig u, HeaderEncoding encoding) {
        return new UpstreamConfig(u.namesrv(), u.connectTimeout(), u.requestTimeout(), u.longPollTimeout(), encoding);
    }

    // ---- helpers ----

    private int brokerPort() {
        return gateway.brokerPort(broker.address());
    }

    /** A route request on the name-server port; returns the name server that received it. */
    private ScriptedPeer routeRequest(RawClient client, int opaque) throws Exception {
        client.send(Routes.request("TopicA", 453).opaque(opaque).bytes());
        Wire.Frame answer = client.read();
        assertEquals(opaque, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code(), answer.toString());
        assertTrue(answer.bodyText().contains("127.0.0.1:" + brokerPort()), "the route names the gateway: " + answer.bodyText());
        ScriptedPeer got = null;
        for (ScriptedPeer ns : List.of(namesrvA, namesrvB)) {
            for (ScriptedPeer.Received r : ns.drainReceived()) {
                if (r.frame().opaque() == opaque) {
                    got = ns;
                }
            }
        }
        if (got == null) {
            throw new AssertionError("no name server received route request " + opaque);
        }
        return got;
    }

    private static void roundTrip(RawClient client, int opaque) throws Exception {
        client.send(Wire.request(GET_MAX_OFFSET).opaque(opaque).ext("topic", "TopicA").ext("queueId", "0").bytes());
        Wire.Frame answer = client.read();
        assertEquals(opaque, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code(), answer.toString());
    }

    private static Wire.Builder send(String topic) {
        return Wire.request(SEND_MESSAGE_V2).ext("a", "pg").ext("b", topic).ext("c", "TBW102").ext("d", "4")
            .ext("e", "0").ext("f", "0").ext("g", "1700000000000").ext("h", "0").ext("i", "WAIT\u0001true\u0002")
            .body("payload");
    }

    // ---- tests ----

    @Test
    void anotherNameServerServesNewConnectionsWhileExistingConnectionsStay() throws Exception {
        startGateway(Duration.ofSeconds(2), HeaderEncoding.PRESERVE, new NamesConfig(false, null, null, null));
        try (RawClient brokerClient = RawClient.connect(brokerPort());
             RawClient oldNamesrvClient = RawClient.connect(gateway.port())) {
            roundTrip(brokerClient, 1);
            assertEquals(namesrvA, routeRequest(oldNamesrvClient, 2));
            int brokerConnections = broker.connectionCount();

            ReloadResult result = gateway.gateway().reload(with(gateway.gateway().config(),
                namesrv(gateway.gateway().config().upstream(), namesrvB.address())));
            assertEquals(List.of(UPSTREAM), result.applied());
            assertEquals(List.of(), result.needsRestart());
            assertEquals(List.of(HostPort.parse("x", namesrvB.address())), gateway.gateway().config().upstream().namesrv());

            try (RawClient newNamesrvClient = RawClient.connect(gateway.port())) {
                assertEquals(namesrvB, routeRequest(newNamesrvClient, 3), "a new connection dials the new name server");
                assertEquals(1, MeterReadings.of(gateway.metrics()).namesrvHealth(namesrvB.address()));
            }
            // nothing was dropped: the broker-port connection relays on its upstream connection...
            roundTrip(brokerClient, 4);
            assertEquals(brokerConnections, broker.connectionCount(), "the same upstream connection to the broker");
            // ...and the older name-server connection keeps the name server it was dialed to
            assertEquals(namesrvA, routeRequest(oldNamesrvClient, 5));
            try (RawClient another = RawClient.connect(gateway.port())) {
                assertEquals(namesrvB, routeRequest(another, 6));
            }
        }
    }

    @Test
    void aNameServerNoLongerConfiguredLosesItsHealthGauge() throws Exception {
        startGateway(Duration.ofSeconds(2), HeaderEncoding.PRESERVE, new NamesConfig(false, null, null, null));
        try (RawClient client = RawClient.connect(gateway.port())) {
            routeRequest(client, 1);
        }
        GatewayMetrics metrics = gateway.metrics();
        assertEquals(1, MeterReadings.of(metrics).namesrvHealth(namesrvA.address()));
        gateway.gateway().reload(with(gateway.gateway().config(),
            namesrv(gateway.gateway().config().upstream(), namesrvB.address())));
        try (RawClient client = RawClient.connect(gateway.port())) {
            routeRequest(client, 2);
        }
        assertEquals(1, MeterReadings.of(metrics).namesrvHealth(namesrvB.address()));
        // rmqgw_namesrv_up{address=A} would otherwise report a name server the gateway no longer uses for ever:
        // 1 hides "all name servers down" (max by instance), 0 keeps RmqgwNamesrvDown firing
        assertEquals(-1, MeterReadings.of(metrics).namesrvHealth(namesrvA.address()),
            "the gauge of a name server removed by a reload is dropped (GatewayMetrics.namesrvRemoved)");
    }

    @Test
    void aNewRequestTimeoutAppliesToTheNextRequest() throws Exception {
        startGateway(Duration.ofSeconds(20), HeaderEncoding.PRESERVE, new NamesConfig(false, null, null, null));
        brokerAnswers.set(false);
        try (RawClient client = RawClient.connect(brokerPort())) {
            client.send(Wire.request(GET_MAX_OFFSET).opaque(1).bytes());
            ScriptedPeer.Received first = broker.awaitFrame(f -> f.opaque() == 1, RawClient.WAIT);

            ReloadResult result = gateway.gateway().reload(with(gateway.gateway().config(),
                requestTimeout(gateway.gateway().config().upstream(), Duration.ofMillis(300))));
            assertEquals(List.of(UPSTREAM), result.applied());

            long start = System.nanoTime();
            client.send(Wire.request(GET_MAX_OFFSET).opaque(2).bytes());
            Wire.Frame busy = client.read(Duration.ofSeconds(3));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertEquals(2, busy.opaque(), "the request sent after the reload times out first: " + busy);
            assertEquals(Wire.SYSTEM_BUSY, busy.code());
            assertTrue(millis >= 300 && millis < 2500, "timed out after " + millis + " ms with a 300 ms request timeout");

            // the request sent before the reload kept its deadline and is still waiting: the broker's answer arrives
            first.connection().send(Wire.response(Wire.SUCCESS, 1).remark("late but in time").bytes());
            Wire.Frame answer = client.read();
            assertEquals(1, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code());
            assertEquals("late but in time", answer.remark());
        }
    }

    @Test
    void upstreamAclSetByAReloadSignsTheNextPooledRequest() throws Exception {
        startGateway(Duration.ofSeconds(5), HeaderEncoding.ROCKETMQ, new NamesConfig(false, null, null, null));
        var pooled = gateway.gateway().upstreamPool().broker(broker.address());
        var loop = pooled.eventLoop();
        pooled.request(GET_MAX_OFFSET, Map.of("n", "before"), null, java.util.concurrent.TimeUnit.SECONDS.toNanos(5),
            loop).get(5, java.util.concurrent.TimeUnit.SECONDS).release();
        Wire.Frame before = broker.awaitFrame(f -> "before".equals(f.ext().get("n")), RawClient.WAIT).frame();
        assertFalse(before.ext().containsKey("AccessKey"), "unsigned without upstream.acl: " + before.ext());

        GatewayConfig current = gateway.gateway().config();
        ReloadResult result = gateway.gateway().reload(with(current, current.upstream()
            .withAcl(new io.rmqgw.gateway.config.UpstreamAclConfig("gw-user", "gw-secret"))));
        assertEquals(List.of(UPSTREAM), result.applied());
        assertFalse(result.toString().contains("gw-secret"), "the reload's answer hides the secret: " + result);

        pooled.request(GET_MAX_OFFSET, Map.of("n", "after"), null, java.util.concurrent.TimeUnit.SECONDS.toNanos(5),
            loop).get(5, java.util.concurrent.TimeUnit.SECONDS).release();
        Wire.Frame after = broker.awaitFrame(f -> "after".equals(f.ext().get("n")), RawClient.WAIT).frame();
        assertEquals("gw-user", after.ext().get("AccessKey"));
        assertEquals(new io.rmqgw.gateway.core.RequestSigner(new io.rmqgw.gateway.config.UpstreamAclConfig(
            "gw-user", "gw-secret")).sign(Map.of("n", "after"), null), after.ext(), "signed with the new credentials");
    }

    @Test
    void aNewTopicLengthLimitAppliesToTheNextSend() throws Exception {
        startGateway(Duration.ofSeconds(2), HeaderEncoding.ROCKETMQ, new NamesConfig(true, null, null, null));
        String topic = "Topic_of_20_chars___";
        try (RawClient client = RawClient.connect(brokerPort())) {
            client.send(send(topic).opaque(1).bytes());
            assertEquals(SerializeType.ROCKETMQ, broker.awaitFrame(f -> f.opaque() == 1, RawClient.WAIT).frame().serializeType());
            assertEquals(Wire.SUCCESS, client.read().code());

            ReloadResult result = gateway.gateway().reload(with(gateway.gateway().config(), new NamesConfig(true, 10, null, null)));
            assertEquals(List.of(EDGE), result.applied());
            assertEquals(10, gateway.gateway().config().names().topicMaxLength());

            broker.drainReceived();
            client.send(send(topic).opaque(2).bytes());
            Wire.Frame refused = client.read();
            assertEquals(2, refused.opaque());
            assertEquals(INVALID_PARAMETER, refused.code());
            assertEquals(new NameValidator(10, 255, 255).topicRemark(NameCheck.TOO_LONG, topic), refused.remark());
            assertTrue(refused.remark().endsWith("max length: 10"), refused.remark());
            roundTrip(client, 3);
            assertEquals(GET_MAX_OFFSET, broker.awaitFrame(RawClient.WAIT).frame().code(), "the refused send never reached the broker");
            assertEquals(1, MeterReadings.of(gateway.metrics()).namesRejected(NameCheck.TOO_LONG.label()), 0.0);

            // and back: checks off lets even a bad name through on the same connection
            gateway.gateway().reload(with(gateway.gateway().config(), new NamesConfig(false, null, null, null)));
            client.send(send("bad topic!").opaque(4).bytes());
            assertEquals("bad topic!", broker.awaitFrame(f -> f.opaque() == 4, RawClient.WAIT).frame().ext().get("b"));
            assertEquals(Wire.SUCCESS, client.read().code());
        }
    }

    @Test
    void aNewHeaderEncodingAppliesToTheNextFrameOnAnExistingConnection() throws Exception {
        startGateway(Duration.ofSeconds(2), HeaderEncoding.PRESERVE, new NamesConfig(false, null, null, null));
        try (RawClient client = RawClient.connect(brokerPort())) {
            byte[] first = send("TopicA").opaque(1).bytes();
            client.send(first);
            assertArrayEquals(first, broker.awaitFrame(f -> f.opaque() == 1, RawClient.WAIT).frame().bytes());
            assertEquals(SerializeType.JSON, client.read().serializeType());

            ReloadResult result = gateway.gateway().reload(with(gateway.gateway().config(),
                headerEncoding(gateway.gateway().config().upstream(), HeaderEncoding.ROCKETMQ)));
            assertTrue(result.applied().contains(EDGE), result.applied().toString());

            client.send(send("TopicA").opaque(2).bytes());
            assertEquals(SerializeType.ROCKETMQ, broker.awaitFrame(f -> f.opaque() == 2, RawClient.WAIT).frame().serializeType());
            Wire.Frame answer = client.read();
            assertEquals(2, answer.opaque());
            assertEquals(SerializeType.JSON, answer.serializeType(), "mirrored back to the JSON client");
            assertEquals(1, MeterReadings.of(gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0);
        }
    }

    @Test
    void listenAddressAndBrokerPortsNeedARestartAndChangeNothing() throws Exception {
        startGateway(Duration.ofSeconds(2), HeaderEncoding.PRESERVE, new NamesConfig(false, null, null, null));
        Gateway g = gateway.gateway();
        GatewayConfig original = g.config();
        int listenPort = gateway.port();
        Map<String, String> listeners = g.brokerListeners();
        int otherListen = TestGateway.deadPort();
        int otherBrokerBase = otherListen < 60000 ? otherListen + 100 : otherListen - 100;
        GatewayConfig moved = new GatewayConfig(new HostPort("127.0.0.1", otherListen), original.advertiseHost(),
            new PortRange(otherBrokerBase, otherBrokerBase + 8), original.upstream(), original.routes(),
            original.maxFrameLength(), original.drainTimeout(), original.embedded(), original.admin(),
            original.downstream(), original.names()).withAdminRequests(original.adminRequests());

        try (RawClient client = RawClient.connect(listenPort)) {
            routeRequest(client, 1);
            ReloadResult result = g.reload(moved);
            assertEquals(List.of(), result.applied());
            assertTrue(result.needsRestart().containsAll(List.of("listen", "broker-ports")), result.needsRestart().toString());
            assertEquals(2, result.needsRestart().size(), result.needsRestart().toString());
            assertEquals(result.needsRestart(), result.pendingRestart());
            assertTrue(result.changedAnything());
            ReloadResult repeated = g.reload(moved);
            assertEquals(List.of(), repeated.needsRestart(), "reported once");
            assertEquals(result.pendingRestart(), repeated.pendingRestart());
            assertFalse(repeated.changedAnything());

            // nothing moved: same listener, same broker listeners, the running values still in force
            assertEquals(listenPort, g.listenAddress().getPort());
            assertEquals(original.listen(), g.config().listen());
            assertEquals(original.brokerPorts(), g.config().brokerPorts());
            assertEquals(listeners, g.brokerListeners());
            assertThrows(ConnectException.class, () -> RawClient.connect(otherListen).close(),
                "nothing listens on the new listen port");
            routeRequest(client, 2);
            try (RawClient again = RawClient.connect(listenPort)) {
                routeRequest(again, 3);
            }
            try (RawClient b = RawClient.connect(brokerPort())) {
                roundTrip(b, 4);
            }
        }
        // reloading what runs changes nothing
        assertFalse(g.reload(original).changedAnything());
    }

    @Test
    void metersCarryOnAcrossReloads() throws Exception {
        startGateway(Duration.ofSeconds(2), HeaderEncoding.ROCKETMQ, new NamesConfig(true, null, null, null));
        GatewayMetrics metrics = gateway.metrics();
        boolean topicLabels = metrics.topicLabelsEnabled();
        try (RawClient client = RawClient.connect(brokerPort())) {
            client.send(send("TopicA").opaque(1).bytes());
            assertEquals(Wire.SUCCESS, client.read().code());
            client.send(send("bad topic!").opaque(2).bytes());
            assertEquals(INVALID_PARAMETER, client.read().code());
            roundTrip(client, 3);

            Map<Meter.Id, Double> before = counters(metrics);
            GatewayConfig c = gateway.gateway().config();
            ReloadResult result = gateway.gateway().reload(with(with(c,
                requestTimeout(namesrv(c.upstream(), namesrvB.address()), Duration.ofSeconds(5))),
                new NamesConfig(true, 100, 200, true)));
            assertEquals(List.of(UPSTREAM, EDGE), result.applied());

            Map<Meter.Id, Double> after = counters(metrics);
            assertEquals(before, after, "a reload neither resets nor removes a counter");
            assertEquals(topicLabels, metrics.topicLabelsEnabled());

            // and they keep counting on the connections that were there
            client.send(send("TopicA").opaque(4).bytes());
            assertEquals(Wire.SUCCESS, client.read().code());
            client.send(send("bad topic!").opaque(5).bytes());
            assertEquals(Wire.SYSTEM_ERROR, client.read().code(), "legacy-brokers now in force");
            // two good sends and the GET_MAX_OFFSET went upstream converted; refused sends never did
            assertEquals(3, MeterReadings.of(metrics).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0);
            assertEquals(2, MeterReadings.of(metrics).namesRejected(NameCheck.ILLEGAL_CHARACTER.label()), 0.0);
            assertEquals(2, MeterReadings.of(metrics).requests(SEND_MESSAGE_V2, Wire.SUCCESS), 0.0);
        }
    }

    private static Map<Meter.Id, Double> counters(GatewayMetrics metrics) {
        Map<Meter.Id, Double> out = new HashMap<>();
        for (Meter m : metrics.registry().getMeters()) {
            if (m instanceof Counter c) {
                out.put(c.getId(), c.count());
            }
        }
        return out;
    }
}
