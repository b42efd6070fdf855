package io.rmqgw.gateway.fanout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageId;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fan-out topic end to end on real sockets: a gateway in front of a scripted name server and two
 * scripted brokers (TopicA on broker-a, TopicB on broker-b, ReadOnly on broker-a without write
 * permission), clients writing raw remoting frames.
 */
class FanoutTest {

    private static final String DEST = FanoutConfig.DEFAULT_DESTINATION_PROPERTY;
    private static final String SHARD = FanoutConfig.DEFAULT_SHARDING_KEY_PROPERTY;
    private static final String FANOUT = FanoutConfig.DEFAULT_TOPIC;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A scripted broker: answers sends with one offsetMsgId per message, or the failure codes queued. */
    private static final class Broker {
        final ScriptedPeer peer;
        final Queue<Integer> failures = new ConcurrentLinkedQueue<>();
        final AtomicInteger alwaysFail = new AtomicInteger();
        final AtomicLong offsets = new AtomicLong(1000);

        Broker() throws Exception {
            peer = ScriptedPeer.start((c, f) -> {
                if (f.isResponse() || f.isOneway()) {
                    return;
                }
                Integer fail = failures.poll();
                if (fail == null && alwaysFail.get() != 0) {
                    fail = alwaysFail.get();
                }
                if (fail != null) {
                    c.send(Wire.response(fail, f.opaque()).remark("scripted failure").bytes());
                    return;
                }
                List<String> ids = new ArrayList<>();
                for (int i = MessageDecoder.decodeMessages(ByteBuffer.wrap(f.body())).size(); i > 0; i--) {
                    ids.add(MessageDecoder.createMessageId(new InetSocketAddress("127.0.0.1", port()),
                        offsets.getAndIncrement()));
                }
                c.send(Wire.response(Wire.SUCCESS, f.opaque()).ext("msgId", String.join(",", ids))
                    .ext("queueId", f.ext().get("e")).ext("queueOffset", "7").bytes());
            });
        }

        int port() {
            return peer.port();
        }

        List<Wire.Frame> sends(int count) throws InterruptedException {
            List<Wire.Frame> out = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                out.add(peer.awaitFrame(f -> f.code() == RequestCode.SEND_BATCH_MESSAGE, RawClient.WAIT).frame());
            }
            return out;
        }
    }

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private Broker a;
    private Broker b;
    private ScriptedPeer namesrv;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options()
            .broker("broker-a", () -> (a = new Broker()).peer)
            .broker("broker-b", () -> (b = new Broker()).peer)
            .nameServer(brokers -> {
                ScriptedPeer.Script routes = Routes.nameServer(Map.of("TopicA", Map.of("broker-a", brokers.get("broker-a")),
                    "TopicB", Map.of("broker-b", brokers.get("broker-b"))));
                return (c, f) -> {
                    if (!f.isResponse() && f.code() == Routes.GET_ROUTEINFO_BY_TOPIC && "ReadOnly".equals(f.ext().get("topic"))) {
                        c.send(Wire.response(Wire.SUCCESS, f.opaque())
                            .body(Routes.body("broker-a", brokers.get("broker-a"), false).replace("\"perm\":6", "\"perm\":4"))
                            .bytes());
                        return;
                    }
                    routes.onFrame(c, f);
                };
            })
            .gateway(g -> g.requestTimeout(Duration.ofSeconds(5)).fanout(new FanoutConfig(true, null, null, null, null, null)))
            .start(resources);
        namesrv = cluster.namesrv();
        gateway = cluster.gateway();
    }

    // ---------------------------------------------------------------- the route

    @Test
    @CoversCodes(RequestCode.GET_ROUTEINFO_BY_TOPIC)
    void theFanoutTopicsRouteIsAWriteOnlyTopicOnTheGatewayInTheClientsDialect() throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request(FANOUT, 453).opaque(1).bytes());
            Wire.Frame standard = client.read();
            assertEquals(Wire.SUCCESS, standard.code());
            JsonNode route = JSON.readTree(standard.body());
            JsonNode broker = route.get("brokerDatas").get(0);
            assertEquals(Fanout.BROKER_NAME, broker.get("brokerName").asText());
            assertEquals(gateway.gateway().fanout().listenerNow(), broker.get("brokerAddrs").get("0").asText());
            JsonNode queues = route.get("queueDatas").get(0);
            assertEquals(2, queues.get("perm").asInt(), "write only");
            assertEquals(FanoutConfig.DEFAULT_QUEUES, queues.get("writeQueueNums").asInt());
            assertFalse(Fanout.BROKER_NAME.startsWith("__syslo__"));

            client.send(Routes.request(FANOUT, 399).opaque(2).bytes());
            String fastjson = client.read().bodyText();
            assertTrue(fastjson.contains("{0:\"" + gateway.gateway().fanout().listenerNow() + "\"}"), fastjson);
            assertTrue(fastjson.contains("\"topicSynFlag\":0"), fastjson);

            // other topics still come from the name server
            client.send(Routes.request("TopicA", 453).opaque(3).bytes());
            assertEquals(Wire.SUCCESS, client.read().code());
        }
        assertTrue(namesrv.drainReceived().stream().noneMatch(r -> FANOUT.equals(r.frame().ext().get("topic"))),
            "no name server was asked for the fan-out topic");
    }

    @Test
    @CoversCodes(RequestCode.GET_ROUTEINFO_BY_TOPIC)
    void aReloadTurnsFanoutOnAndOff() throws Exception {
        int port = fanoutPort();
        gateway.gateway().reload(gateway.gateway().config().withFanout(FanoutConfig.DEFAULT));
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request(FANOUT, 453).opaque(1).bytes());
            assertEquals(Routes.TOPIC_NOT_EXIST, client.read().code(), "off: the name server answers");
        }
        try (RawClient client = RawClient.connect(port)) {
            client.send(batch(320, entry(0, "x", DEST + "\u0001TopicA\u0002")));
            Wire.Frame answer = client.read();
            assertEquals(ResponseCode.NO_PERMISSION, answer.code());
            assertTrue(answer.remark().contains("turned off"), answer.remark());
        }
        gateway.gateway().reload(gateway.gateway().config().withFanout(new FanoutConfig(true, "OtherFanout", null, null,
            null, 2)));
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("OtherFanout", 453).opaque(1).bytes());
            Wire.Frame answer = client.read();
            assertEquals(Wire.SUCCESS, answer.code());
            assertEquals(2, JSON.readTree(answer.body()).get("queueDatas").get(0).get("writeQueueNums").asInt());
        }
    }

    // ---------------------------------------------------------------- sends

    @Test
    @CoversCodes(RequestCode.SEND_BATCH_MESSAGE)
    void aMixedBatchGoesOutAsOneBatchPerDestinationQueueWithoutTheDestinationProperty() throws Exception {
        String[] props = {
            "KEYS\u0001k0\u0002" + DEST + "\u0001TopicA\u0002TAGS\u0001ta\u0002UNIQ_KEY\u0001U0\u0002",
            DEST + "\u0001TopicB\u0002KEYS\u0001k1\u0002",
            "KEYS\u0001k2\u0002" + DEST + "\u0001TopicA, TopicB\u0002",
            "KEYS\u0001k3\u0002" + SHARD + "\u0001user-1\u0002" + DEST + "\u0001TopicA\u0002",
            DEST + "\u0001TopicA\u0002" + SHARD + "\u0001user-1\u0002KEYS\u0001k4\u0002custom\u0001é✓"};
        byte[][] stripped = new byte[props.length][];
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int i = 0; i < props.length; i++) {
            body.write(entry(i, "body-" + i, props[i]));
            stripped[i] = entry(i, "body-" + i, withoutDestination(props[i]));
        }
        Wire.Frame answer;
        try (RawClient client = RawClient.connect(fanoutPort())) {
            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, body.toByteArray()));
            answer = client.read();
        }
        assertEquals(Wire.SUCCESS, answer.code(), answer.remark());

        int shardQueue = Math.floorMod("user-1".hashCode(), 4);
        List<Wire.Frame> toA = a.sends(2);
        Wire.Frame sharded = toA.stream().filter(f -> f.bodyText().contains("user-1")).findFirst().orElseThrow();
        Wire.Frame roundRobin = toA.stream().filter(f -> f != sharded).findFirst().orElseThrow();
        assertEquals(String.valueOf(shardQueue), sharded.ext().get("e"), "the sharding key's hash picks the queue");
        assertArrayEquals(concat(stripped[3], stripped[4]), sharded.body(), "byte for byte, the destination removed");
        assertArrayEquals(concat(stripped[0], stripped[2]), roundRobin.body());
        Wire.Frame toB = b.sends(1).get(0);
        assertArrayEquals(concat(stripped[1], stripped[2]), toB.body());
        for (Wire.Frame f : List.of(sharded, roundRobin, toB)) {
            assertEquals("true", f.ext().get("m"), "a batch");
            assertEquals("pg", f.ext().get("a"));
            assertEquals("1700000000000", f.ext().get("g"));
            assertEquals(f == toB ? "TopicB" : "TopicA", f.ext().get("b"));
            for (org.apache.rocketmq.common.message.Message m : MessageDecoder.decodeMessages(ByteBuffer.wrap(f.body()))) {
                assertEquals(null, m.getProperty(DEST));
            }
        }
        assertTrue(b.peer.drainReceived().isEmpty() && a.peer.drainReceived().isEmpty(), "nothing else was sent");

        // every id, in message order (m2 twice: TopicA then TopicB), naming the gateway's port for its broker
        String[] ids = answer.ext().get("msgId").split(",");
        assertEquals(6, ids.length, answer.ext().toString());
        int[] expectedBroker = {gateway.brokerPort(a.peer.address()), gateway.brokerPort(b.peer.address()),
            gateway.brokerPort(a.peer.address()), gateway.brokerPort(b.peer.address()),
            gateway.brokerPort(a.peer.address()), gateway.brokerPort(a.peer.address())};
        for (int i = 0; i < ids.length; i++) {
            MessageId id = MessageDecoder.decodeMessageId(ids[i]);
            assertEquals(expectedBroker[i], ((InetSocketAddress) id.getAddress()).getPort(), "id " + i + " " + ids[i]);
        }
        assertEquals(MessageDecoder.decodeMessageId(ids[4]).getOffset() + 1, MessageDecoder.decodeMessageId(ids[5]).getOffset());
        assertEquals("-1", answer.ext().get("queueOffset"));
        assertEquals(1, MeterReadings.of(gateway.metrics()).fanoutRequests("success"));
        assertEquals(3, MeterReadings.of(gateway.metrics()).fanoutPartsTotal());
    }

    @Test
    @CoversCodes({RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2})
    void singleSendsCarryTheirPropertiesInTheHeader() throws Exception {
        String props = "KEYS\u0001s1\u0002" + DEST + "\u0001TopicA,TopicB\u0002WAIT\u0001true\u0002TAGS\u0001x\u0002";
        try (RawClient client = RawClient.connect(fanoutPort())) {
            client.send(Wire.request(RequestCode.SEND_MESSAGE_V2).opaque(5).type(SerializeType.ROCKETMQ)
                .ext("a", "pg").ext("b", FANOUT).ext("c", "TBW102").ext("d", "4").ext("e", "0").ext("f", "0")
                .ext("g", "1700000000000").ext("h", "9").ext("i", props).body("single").bytes());
            Wire.Frame answer = client.read();
            assertEquals(Wire.SUCCESS, answer.code(), answer.remark());
            assertEquals(5, answer.opaque());
            assertEquals(2, answer.ext().get("msgId").split(",").length);

            client.send(Wire.request(RequestCode.SEND_MESSAGE).opaque(6).ext("producerGroup", "pg").ext("topic", FANOUT)
                .ext("defaultTopic", "TBW102").ext("defaultTopicQueueNums", "4").ext("queueId", "1").ext("sysFlag", "0")
                .ext("bornTimestamp", "1700000000000").ext("flag", "9").ext("properties", props).body("single").bytes());
            Wire.Frame v1 = client.read();
            assertEquals(Wire.SUCCESS, v1.code(), v1.remark());
            assertEquals(SerializeType.JSON, v1.serializeType(), "answered in the client's encoding");
        }
        byte[] expected = entry(9, "single", "KEYS\u0001s1\u0002WAIT\u0001true\u0002TAGS\u0001x\u0002");
        for (Wire.Frame f : concatList(a.sends(2), b.sends(2))) {
            assertArrayEquals(expected, f.body(), "the header's properties in the entry, the destination removed");
            assertEquals("WAIT\u0001true\u0002", f.ext().get("i"), "the batch carries only WAIT");
            assertEquals("0", f.ext().get("f"));
        }
    }

    @Test
    @CoversCodes(RequestCode.SEND_BATCH_MESSAGE)
    void aBatchsOwnUniqueKeyStaysOutOfItsParts() throws Exception {
        // 5.x clients give the batch an UNIQ_KEY of its own; a 4.9.x broker appends the header's properties to
        // every message of a batch, so each part message would take that id instead of its own
        byte[] request = Wire.request(RequestCode.SEND_BATCH_MESSAGE).opaque(78).type(SerializeType.ROCKETMQ)
            .ext("a", "pg").ext("b", FANOUT).ext("c", "TBW102").ext("d", "4").ext("e", "2").ext("f", "0")
            .ext("g", "1700000000000").ext("h", "0").ext("i", "WAIT\u0001true\u0002UNIQ_KEY\u0001BATCHID\u0002")
            .ext("j", "0").ext("k", "false").ext("m", "true")
            .body(entry(0, "u", "UNIQ_KEY\u0001OWNID\u0002" + DEST + "\u0001TopicA\u0002")).bytes();
        try (RawClient client = RawClient.connect(fanoutPort())) {
            client.send(request);
            Wire.Frame answer = client.read();
            assertEquals(Wire.SUCCESS, answer.code(), answer.remark());
        }
        Wire.Frame part = a.sends(1).get(0);
        assertEquals("WAIT\u0001true\u0002", part.ext().get("i"), "the header keeps only WAIT");
        assertArrayEquals(entry(0, "u", "UNIQ_KEY\u0001OWNID\u0002"), part.body(), "the message keeps its own id");
    }

    @Test
    @CoversCodes(RequestCode.SEND_BATCH_MESSAGE)
    void aFailedPartIsRetriedOnAnotherQueue() throws Exception {
        a.failures.add(ResponseCode.SYSTEM_BUSY);
        try (RawClient client = RawClient.connect(fanoutPort())) {
            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, entry(0, "r", DEST + "\u0001TopicA\u0002")));
            Wire.Frame answer = client.read();
            assertEquals(Wire.SUCCESS, answer.code(), answer.remark());
        }
        List<Wire.Frame> sends = a.sends(2);
        assertNotEquals(sends.get(0).ext().get("e"), sends.get(1).ext().get("e"), "another queue");
        assertArrayEquals(sends.get(0).body(), sends.get(1).body());
        assertEquals(1, MeterReadings.of(gateway.metrics()).fanoutRetries());
    }

    @Test
    @CoversCodes(RequestCode.SEND_BATCH_MESSAGE)
    void aPartThatKeepsFailingFailsTheRequestNamingWhatWasAndWasNotStored() throws Exception {
        b.alwaysFail.set(ResponseCode.SERVICE_NOT_AVAILABLE);
        Wire.Frame answer;
        try (RawClient client = RawClient.connect(fanoutPort())) {
            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, concat(entry(0, "a", DEST + "\u0001TopicA\u0002"),
                entry(0, "b", DEST + "\u0001TopicB\u0002"))));
            answer = client.read();
        }
        assertEquals(ResponseCode.SERVICE_NOT_AVAILABLE, answer.code());
        String remark = answer.remark();
        assertTrue(remark.startsWith("fan-out failed: not stored in TopicB [broker-b queue "), remark);
        assertTrue(remark.contains("code 14 scripted failure after 3 attempts]"), remark);
        assertTrue(remark.contains("; stored in TopicA (a retry stores those again"), remark);
        assertEquals(3, b.sends(3).size(), "1 + fanout.max-retries attempts");
        assertEquals(1, a.sends(1).size());
        assertEquals(1, MeterReadings.of(gateway.metrics()).fanoutRequests("failed"));
        assertEquals(1, MeterReadings.of(gateway.metrics()).fanoutPartialFailures());
    }

    @Test
    @CoversCodes(RequestCode.SEND_BATCH_MESSAGE)
    void badDestinationsRefuseTheWholeRequestBeforeAnythingIsSent() throws Exception {
        try (RawClient client = RawClient.connect(fanoutPort())) {
            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, concat(entry(0, "a", DEST + "\u0001TopicA\u0002"),
                entry(0, "b", DEST + "\u0001bad topic!,NoSuchTopic\u0002"))));
            Wire.Frame answer = client.read();
            assertEquals(ResponseCode.INVALID_PARAMETER, answer.code());
            assertTrue(answer.remark().startsWith("fan-out refused, nothing was sent: destination "), answer.remark());
            assertTrue(answer.remark().contains("bad topic!"), answer.remark());
            assertTrue(answer.remark().contains("destination NoSuchTopic has no route"), answer.remark());

            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, entry(0, "c", DEST + "\u0001ReadOnly\u0002")));
            answer = client.read();
            assertEquals(ResponseCode.NO_PERMISSION, answer.code());
            assertTrue(answer.remark().contains("destination ReadOnly has no writable queue"), answer.remark());

            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, entry(0, "d", "KEYS\u0001nodest\u0002")));
            answer = client.read();
            assertEquals(ResponseCode.MESSAGE_ILLEGAL, answer.code());
            assertTrue(answer.remark().contains("message 0 (keys nodest) names no destination: set the user property "
                + DEST), answer.remark());

            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, entry(0, "e", DEST + "\u0001TopicA\u0002DELAY\u00013\u0002")));
            answer = client.read();
            assertEquals(ResponseCode.MESSAGE_ILLEGAL, answer.code());
            assertTrue(answer.remark().contains("delayed messages cannot be fanned out"), answer.remark());

            byte[] truncated = entry(0, "f", DEST + "\u0001TopicA\u0002");
            client.send(batch(RequestCode.SEND_BATCH_MESSAGE, java.util.Arrays.copyOf(truncated, truncated.length - 1)));
            answer = client.read();
            assertEquals(ResponseCode.MESSAGE_ILLEGAL, answer.code());
            assertTrue(answer.remark().startsWith("malformed batch body: batch message 0"), answer.remark());
        }
        assertTrue(a.peer.drainReceived().isEmpty() && b.peer.drainReceived().isEmpty(), "no broker saw a send");
        assertEquals(5, MeterReadings.of(gateway.metrics()).fanoutRequests("refused"));
    }

    @Test
    @CoversCodes({RequestCode.HEART_BEAT, RequestCode.UNREGISTER_CLIENT})
    void registrationsAreAnsweredAndEverythingElseIsNotServed() throws Exception {
        try (RawClient client = RawClient.connect(fanoutPort())) {
            client.send(Wire.request(RequestCode.HEART_BEAT).opaque(1).body("{\"clientID\":\"c1\"}").bytes());
            assertEquals(Wire.SUCCESS, client.read().code());
            client.send(Wire.request(RequestCode.UNREGISTER_CLIENT).opaque(2).ext("clientID", "c1").bytes());
            assertEquals(Wire.SUCCESS, client.read().code());
            client.send(Wire.request(RequestCode.PULL_MESSAGE).opaque(3).ext("topic", FANOUT).bytes());
            Wire.Frame pull = client.read();
            assertEquals(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, pull.code());
            assertEquals(3, pull.opaque());
        }
    }

    // ---------------------------------------------------------------- helpers

    /** The fan-out broker's port, as the route names it. */
    private int fanoutPort() throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request(FANOUT, 453).bytes());
            String address = JSON.readTree(client.read().body()).get("brokerDatas").get(0).get("brokerAddrs").get("0").asText();
            return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
        }
    }

    private static byte[] batch(int code, byte[] body) {
        return Wire.request(code).opaque(77).type(SerializeType.ROCKETMQ).ext("a", "pg").ext("b", FANOUT)
            .ext("c", "TBW102").ext("d", "4").ext("e", "2").ext("f", "0").ext("g", "1700000000000").ext("h", "0")
            .ext("i", "WAIT\u0001true\u0002").ext("j", "0").ext("k", "false").ext("m", "true").body(body).bytes();
    }

    /** One batch entry as MessageDecoder.encodeMessage lays it out. */
    static byte[] entry(int flag, String body, String properties) {
        byte[] bd = body.getBytes(StandardCharsets.UTF_8);
        byte[] p = properties.getBytes(StandardCharsets.UTF_8);
        ByteBuffer out = ByteBuffer.allocate(20 + bd.length + 2 + p.length);
        out.putInt(out.capacity()).putInt(0).putInt(0).putInt(flag).putInt(bd.length).put(bd)
            .putShort((short) p.length).put(p);
        return out.array();
    }

    /** The properties string without the destination pair, computed on the string. */
    private static String withoutDestination(String props) {
        return props.replaceAll(DEST + "\u0001[^\u0002]*(\u0002|$)", "");
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static List<Wire.Frame> concatList(List<Wire.Frame> x, List<Wire.Frame> y) {
        List<Wire.Frame> out = new ArrayList<>(x);
        out.addAll(y);
        return out;
    }
}
