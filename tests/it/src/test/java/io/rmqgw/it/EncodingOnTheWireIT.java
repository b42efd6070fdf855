package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.it.fixture.BrokerRequestRecorder;
import io.rmqgw.it.fixture.BrokerRequestRecorder.RecordedRequest;
import io.rmqgw.it.fixture.BrokerRequestRecorder.Server;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawRemoting;
import io.rmqgw.testing.UniqueNames;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.topic.TopicValidator;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Header encodings as they are on the wire, around two gateways in front of the same broker: one
 * upgrading everything it sends upstream to ROCKETMQ binary (the default), one preserving the
 * client's encoding. (a) A 4.9.7 client's sync sends, batch send, push-consumer pulls and lite-pull
 * pulls (JSON from the client) reach the broker as ROCKETMQ through the first and as JSON through
 * the second, and succeed. (b) Answers mirror the request's encoding: a JSON request gets a JSON
 * answer, a ROCKETMQ one a ROCKETMQ answer, whatever the broker answered the gateway in. (c) A send
 * to a topic with an illegal character is answered at the edge with INVALID_PARAMETER (29) and
 * never reaches the broker.
 */
@RocketMqCluster
class EncodingOnTheWireIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    static ClusterUnderTest cluster;
    static GatewayFixture upgrading;
    static GatewayFixture preserving;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        upgrading = shared.closeAfterClass(GatewayFixture.on(shared).start());
        preserving = shared.closeAfterClass(GatewayFixture.on(shared).headerEncoding(HeaderEncoding.PRESERVE).start());
    }

    private static Map<String, GatewayFixture> gateways() {
        Map<String, GatewayFixture> m = new LinkedHashMap<>();
        m.put("rocketmq", upgrading);
        m.put("preserve", preserving);
        return m;
    }

    /** The encoding the broker must see from a gateway for a request a client sent in {@code client}. */
    private static SerializeType upstreamEncoding(GatewayFixture g, SerializeType client) {
        return g == upgrading ? SerializeType.ROCKETMQ : client;
    }

    // ---------------------------------------------------------------- (a)

    /** Runs one scenario per gateway at the same time and returns the results by gateway name. */
    private static Map<String, ScenarioResult> sideBySide(Function<GatewayFixture, ScenarioRunner.Spec> spec)
        throws Exception {
        Map<String, ScenarioProcess> running = new LinkedHashMap<>();
        Map<String, ScenarioResult> results = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, GatewayFixture> g : gateways().entrySet()) {
                running.put(g.getKey(), spec.apply(g.getValue()).namesrv(g.getValue().namesrvAddress()).start());
            }
            for (Map.Entry<String, ScenarioProcess> p : running.entrySet()) {
                ScenarioResult r = p.getValue().await();
                System.err.println("[it] " + p.getKey() + " gateway: " + r);
                r.assertOk();
                GatewayFixture g = gateways().get(p.getKey());
                Set<Integer> unexpected = new TreeSet<>(r.remotePorts());
                unexpected.removeAll(g.clientPorts());
                assertTrue(unexpected.isEmpty(), () -> "client connected to " + unexpected + ": " + r.connections());
                results.put(p.getKey(), r);
            }
        } finally {
            running.values().forEach(ScenarioProcess::close);
        }
        return results;
    }

    /** Code -> encodings of what reached the broker (and the name server) over {@code g}'s upstreams. */
    private static Map<Integer, Set<SerializeType>> encodingsFrom(GatewayFixture g, List<RecordedRequest> requests) {
        Set<String> ends = g.upstreamEnds();
        return requests.stream().filter(r -> ends.contains(r.remoteAddress()))
            .collect(Collectors.groupingBy(RecordedRequest::code, TreeMap::new,
                Collectors.mapping(RecordedRequest::serializeType, Collectors.toCollection(TreeSet::new))));
    }

    private static void assertArrivedAs(String phase, List<RecordedRequest> requests, Set<Integer> hotCodes) {
        for (Map.Entry<String, GatewayFixture> e : gateways().entrySet()) {
            GatewayFixture g = e.getValue();
            SerializeType expected = upstreamEncoding(g, SerializeType.JSON);
            Map<Integer, Set<SerializeType>> broker = encodingsFrom(g, requests.stream()
                .filter(r -> r.server() != Server.NAMESRV).toList());
            Map<Integer, Set<SerializeType>> namesrv = encodingsFrom(g, requests.stream()
                .filter(r -> r.server() == Server.NAMESRV).toList());
            System.err.println("[it] " + phase + " through the " + e.getKey() + " gateway: broker received " + broker
                + "; name server received " + namesrv);
            for (int code : hotCodes) {
                assertEquals(Set.of(expected), broker.get(code),
                    () -> phase + " via " + e.getKey() + ": code " + code + " arrived as " + broker.get(code));
            }
            // everything else the gateway sent upstream for this JSON client, too
            broker.forEach((code, types) -> assertEquals(Set.of(expected), types,
                () -> phase + " via " + e.getKey() + ": broker request code " + code + " arrived as " + types));
            namesrv.forEach((code, types) -> assertEquals(Set.of(expected), types,
                () -> phase + " via " + e.getKey() + ": name-server request code " + code + " arrived as " + types));
        }
    }

    @Test
    void legacyClientJsonArrivesAsRocketmqOrAsSentSideBySide() throws Exception {
        Map<String, String> topics = new HashMap<>();
        gateways().keySet().forEach(name -> topics.put(name, UniqueNames.topic("wire_" + name)));
        Map<GatewayFixture, String> topicOf = new HashMap<>();
        gateways().forEach((name, g) -> topicOf.put(g, topics.get(name)));
        int n = 10;

        Map<String, Set<String>> sentKeys = new HashMap<>();
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            Map<String, ScenarioResult> sync = sideBySide(g -> ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
                .topic(topicOf.get(g)).count(n).keyPrefix("sync").timeout(TIMEOUT));
            Map<String, ScenarioResult> batch = sideBySide(g -> ScenarioRunner.scenario(ClientVersion.V4_9_7, "batch-send")
                .topic(topicOf.get(g)).count(n).keyPrefix("batch").timeout(TIMEOUT));
            for (String name : gateways().keySet()) {
                Set<String> keys = new HashSet<>(sync.get(name).keys("sent"));
                keys.addAll(batch.get(name).keys("sent"));
                assertEquals(2 * n, keys.size());
                sentKeys.put(name, keys);
            }
            assertArrivedAs("sync and batch send", rec.requests(),
                Set.of(RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE));
        }
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            Map<String, ScenarioResult> push = sideBySide(g -> ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume")
                .topic(topicOf.get(g)).group(cluster.group("wire_push")).count(2 * n).timeout(TIMEOUT));
            push.forEach((name, r) -> assertEquals(sentKeys.get(name), new HashSet<>(r.keys("received")), r::describe));
            assertArrivedAs("push consumer", rec.requests(), Set.of(RequestCode.PULL_MESSAGE));
        }
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            Map<String, ScenarioResult> lite = sideBySide(g -> ScenarioRunner.scenario(ClientVersion.V4_9_7,
                "lite-pull-consume").topic(topicOf.get(g)).group(cluster.group("wire_lite")).count(2 * n).timeout(TIMEOUT));
            lite.forEach((name, r) -> assertEquals(sentKeys.get(name), new HashSet<>(r.keys("received")), r::describe));
            assertArrivedAs("lite pull consumer", rec.requests(), Set.of(RequestCode.PULL_MESSAGE));
        }
    }

    // ---------------------------------------------------------------- (b)

    static RemotingCommand maxOffset(String topic) {
        GetMaxOffsetRequestHeader h = new GetMaxOffsetRequestHeader();
        h.setTopic(topic);
        h.setQueueId(0);
        return RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, h);
    }

    static RemotingCommand queryConsumerOffset(String topic, String group) {
        QueryConsumerOffsetRequestHeader h = new QueryConsumerOffsetRequestHeader();
        h.setTopic(topic);
        h.setConsumerGroup(group);
        h.setQueueId(0);
        return RemotingCommand.createRequestCommand(RequestCode.QUERY_CONSUMER_OFFSET, h);
    }

    static RemotingCommand route(String topic) {
        GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
        h.setTopic(topic);
        return RemotingCommand.createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, h);
    }

    /** A SEND_MESSAGE_V2 as a 4.9.7 producer builds it (the encoding is chosen when it is written). */
    static RemotingCommand sendV2(String topic, String key) {
        SendMessageRequestHeader h = new SendMessageRequestHeader();
        h.setProducerGroup("rmqgw_it_raw_pg");
        h.setTopic(topic);
        h.setDefaultTopic(TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC);
        h.setDefaultTopicQueueNums(4);
        h.setQueueId(0);
        h.setSysFlag(0);
        h.setBornTimestamp(System.currentTimeMillis());
        h.setFlag(0);
        Map<String, String> properties = new HashMap<>();
        properties.put(MessageConst.PROPERTY_KEYS, key);
        properties.put(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, MessageClientIDSetter.createUniqID());
        properties.put(MessageConst.PROPERTY_WAIT_STORE_MSG_OK, "true");
        h.setProperties(MessageDecoder.messageProperties2String(properties));
        h.setReconsumeTimes(0);
        h.setUnitMode(false);
        h.setBatch(false);
        RemotingCommand cmd = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE_V2,
            SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2(h));
        cmd.setVersion(MQVersion.Version.V4_9_7.ordinal());
        cmd.setBody((key + "|raw|").getBytes(StandardCharsets.UTF_8));
        return cmd;
    }

    @Test
    void answersMirrorTheRequestEncoding() throws Exception {
        String topic = UniqueNames.topic("mirror");
        Admin.createTopic(cluster.brokerAddress(), topic, 4);
        String group = cluster.group("mirror");
        List<String> table = new ArrayList<>();

        // what the broker itself answers, for the record (not asserted: the gateway's behaviour is)
        try (RawRemoting direct = RawRemoting.connect(cluster.brokerAddress(), Duration.ofSeconds(10))) {
            for (SerializeType enc : SerializeType.values()) {
                RawRemoting.Answer a = direct.invoke(maxOffset(topic), enc);
                System.err.println("[it] the broker itself answers a " + enc + " GET_MAX_OFFSET in " + a.wireEncoding()
                    + " (code " + a.code() + ")");
                RawRemoting.Answer s = direct.invoke(sendV2(topic, "direct-" + enc), enc);
                System.err.println("[it] the broker itself answers a " + enc + " SEND_MESSAGE_V2 in " + s.wireEncoding()
                    + " (code " + s.code() + ")");
            }
        }

        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            for (Map.Entry<String, GatewayFixture> e : gateways().entrySet()) {
                GatewayFixture g = e.getValue();
                int brokerPort = g.brokerPort(cluster.brokerAddress());
                for (SerializeType enc : SerializeType.values()) {
                    try (RawRemoting ns = RawRemoting.connect(g.listenPort(), Duration.ofSeconds(10));
                         RawRemoting br = RawRemoting.connect(brokerPort, Duration.ofSeconds(10))) {
                        Map<String, RemotingCommand> requests = new LinkedHashMap<>();
                        requests.put("GET_ROUTEINFO_BY_TOPIC (name-server port)", route(topic));
                        requests.put("GET_MAX_OFFSET", maxOffset(topic));
                        requests.put("QUERY_CONSUMER_OFFSET", queryConsumerOffset(topic, group));
                        requests.put("SEND_MESSAGE_V2", sendV2(topic, "mirror-" + e.getKey() + "-" + enc));
                        for (Map.Entry<String, RemotingCommand> r : requests.entrySet()) {
                            RawRemoting conn = r.getKey().contains("name-server") ? ns : br;
                            RemotingCommand request = r.getValue();
                            RawRemoting.Answer a = conn.invoke(request, enc);
                            table.add(String.format("%-9s gateway  %-8s %-42s -> %-8s code %d", e.getKey(), enc,
                                r.getKey(), a.wireEncoding(), a.code()));
                            assertEquals(enc, a.wireEncoding(),
                                () -> e.getKey() + " gateway answered a " + enc + " " + r.getKey() + " with " + a);
                            if (!r.getKey().startsWith("QUERY_CONSUMER_OFFSET")) {
                                assertEquals(ResponseCode.SUCCESS, a.code(), a::toString);
                            }
                            if (r.getKey().equals("SEND_MESSAGE_V2")) {
                                // the offsetMsgId in the answer names the gateway, in either encoding
                                InetSocketAddress at = (InetSocketAddress) MessageDecoder.decodeMessageId(a.ext("msgId"))
                                    .getAddress();
                                assertEquals(brokerPort, at.getPort(), () -> "offsetMsgId " + a.ext("msgId"));
                            }
                            if (!r.getKey().contains("name-server")) {
                                // and the broker got it in the gateway's upstream encoding
                                int opaque = request.getOpaque();
                                int code = request.getCode();
                                Set<String> ends = g.upstreamEnds();
                                List<SerializeType> seen = rec.brokerRequests().stream()
                                    .filter(x -> x.opaque() == opaque && x.code() == code
                                        && ends.contains(x.remoteAddress()))
                                    .map(RecordedRequest::serializeType).toList();
                                assertEquals(List.of(upstreamEncoding(g, enc)), seen,
                                    () -> r.getKey() + " sent " + enc + " via the " + e.getKey() + " gateway arrived as "
                                        + seen);
                            }
                        }
                    }
                }
            }
        }
        System.err.println("[it] mirrored answers:\n  " + String.join("\n  ", table));
    }

    // ---------------------------------------------------------------- (c)

    @Test
    void illegalTopicIsAnsweredAtTheEdgeAndNeverForwarded() throws Exception {
        String badTopic = "it_bad topic!" + System.nanoTime();
        String goodTopic = UniqueNames.topic("names_ok");
        Admin.createTopic(cluster.brokerAddress(), goodTopic, 4);

        // The 4.9.7 client checks topic names itself: it refuses before anything is sent.
        ScenarioResult client = ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
            .namesrv(upgrading.namesrvAddress()).topic(badTopic).count(1).timeout(Duration.ofSeconds(30)).run();
        System.err.println("[it] 4.9.7 sync-send to '" + badTopic + "': " + client + ", " + client.lines("send-error"));
        assertFalse(client.ok(), client::describe);

        // So the frame a 4.9.7 producer would send (JSON, version 4.9.7) goes by hand.
        List<String> seenTopics = new CopyOnWriteArrayList<>();
        RPCHook hook = new RPCHook() {
            @Override
            public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
                if (request.getExtFields() != null) {
                    seenTopics.addAll(request.getExtFields().values());
                }
            }

            @Override
            public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            }
        };
        cluster.recorder().addBrokerHook(hook);
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            for (Map.Entry<String, GatewayFixture> e : gateways().entrySet()) {
                GatewayFixture g = e.getValue();
                double rejectedBefore = MeterReadings.of(g.metrics()).namesRejected("illegal_character");
                try (RawRemoting br = RawRemoting.connect(g.brokerPort(cluster.brokerAddress()), Duration.ofSeconds(10))) {
                    RemotingCommand bad = sendV2(badTopic, "bad-" + e.getKey());
                    RawRemoting.Answer a = br.invoke(bad, SerializeType.JSON);
                    System.err.println("[it] " + e.getKey() + " gateway answered the send to '" + badTopic + "': " + a);
                    assertEquals(ResponseCode.INVALID_PARAMETER, a.code(), a::toString);
                    assertTrue(a.remark() != null && a.remark().contains(badTopic)
                        && a.remark().contains("illegal characters"), a::toString);
                    assertEquals(SerializeType.JSON, a.wireEncoding(), "answered in the client's encoding");
                    assertEquals(rejectedBefore + 1, MeterReadings.of(g.metrics()).namesRejected("illegal_character"), 0.0);
                    // the same connection still works, and the hook sees what does reach the broker
                    RemotingCommand good = sendV2(goodTopic, "good-" + e.getKey());
                    RawRemoting.Answer ok = br.invoke(good, SerializeType.JSON);
                    assertEquals(ResponseCode.SUCCESS, ok.code(), ok::toString);
                    assertTrue(seenTopics.contains(goodTopic), "the hook saw the valid send");
                    int badOpaque = bad.getOpaque();
                    assertTrue(rec.brokerRequests().stream().noneMatch(r -> r.opaque() == badOpaque
                        && r.code() == RequestCode.SEND_MESSAGE_V2), "the refused send reached the broker");
                }
            }
        } finally {
            cluster.recorder().removeBrokerHook(hook);
        }
        assertFalse(seenTopics.stream().anyMatch(v -> v.contains(badTopic)),
            () -> "the broker received a request naming " + badTopic);
        assertNotEquals(0, seenTopics.size());
    }
}
