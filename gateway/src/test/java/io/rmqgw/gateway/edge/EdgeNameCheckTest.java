package io.rmqgw.gateway.edge;

import static org.apache.rocketmq.remoting.protocol.RequestCode.CONSUMER_SEND_MSG_BACK;
import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_CONSUMER_LIST_BY_GROUP;
import static org.apache.rocketmq.remoting.protocol.RequestCode.HEART_BEAT;
import static org.apache.rocketmq.remoting.protocol.RequestCode.LITE_PULL_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.LOCK_BATCH_MQ;
import static org.apache.rocketmq.remoting.protocol.RequestCode.PULL_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.QUERY_CONSUMER_OFFSET;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_BATCH_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_MESSAGE_V2;
import static org.apache.rocketmq.remoting.protocol.RequestCode.UNLOCK_BATCH_MQ;
import static org.apache.rocketmq.remoting.protocol.RequestCode.UNREGISTER_CLIENT;
import static org.apache.rocketmq.remoting.protocol.RequestCode.UPDATE_CONSUMER_OFFSET;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.config.ResponseEncoding;
import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.rocketmq.common.topic.TopicValidator;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Topic and group names are checked at the edge: a bad name is answered as a broker answers it
 * (INVALID_PARAMETER, or SYSTEM_ERROR for brokers before 5.3.2, with the broker's remark), counted by
 * reason, and never reaches the broker; good names, retry and DLQ names among them, pass.
 */
class EdgeNameCheckTest {

    private static final int INVALID_PARAMETER = 29;
    private static final int SYSTEM_ERROR = 1;
    private static final int NO_PERMISSION = 16;
    private static final String BAD_TOPIC = "bad topic!";
    private static final String LONG_TOPIC = "a".repeat(128);
    private static final NameValidator BROKER = NameValidator.DEFAULT;

    private static BrokerBehindGateway checked;

    @BeforeAll
    static void start() throws Exception {
        checked = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .names(new NamesConfig(true, null, null, false)));
    }

    @AfterAll
    static void stop() {
        if (checked != null) {
            checked.close();
        }
    }

    /** A request with a bad name, the reason it is refused for and the remark a broker gives. */
    record Case(String name, Function<SerializeType, Wire.Builder> request, NameCheck reason, String remark) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Wire.Builder sendV2(SerializeType t, String group, String topic) {
        return Wire.request(ClientFrames.SEND_MESSAGE_V2).type(t).ext("a", group).ext("b", topic).ext("c", "TBW102")
            .ext("d", "4").ext("e", "0").ext("f", "0").ext("g", "1700000000000").ext("h", "0")
            .ext("i", ClientFrames.PROPERTIES).ext("j", "0").ext("k", "false").ext("m", "false").body("payload");
    }

    static Wire.Builder sendV1(SerializeType t, String group, String topic) {
        return Wire.request(ClientFrames.SEND_MESSAGE).type(t).ext("producerGroup", group).ext("topic", topic)
            .ext("defaultTopic", "TBW102").ext("defaultTopicQueueNums", "4").ext("queueId", "0").ext("sysFlag", "0")
            .ext("bornTimestamp", "1700000000000").ext("flag", "0").ext("properties", ClientFrames.PROPERTIES)
            .body("payload");
    }

    static Wire.Builder batch(SerializeType t, String group, String topic) {
        return sendV2(t, group, topic).ext("m", "true");
    }

    static Wire.Builder pull(SerializeType t, int code, String group, String topic) {
        return Wire.request(code).type(t).ext("consumerGroup", group).ext("topic", topic).ext("queueId", "0")
            .ext("queueOffset", "0").ext("maxMsgNums", "32").ext("sysFlag", "0").ext("commitOffset", "0")
            .ext("suspendTimeoutMillis", "15000").ext("subscription", "*").ext("subVersion", "0")
            .ext("expressionType", "TAG");
    }

    static Wire.Builder offset(SerializeType t, int code, String group, String topic) {
        Wire.Builder b = Wire.request(code).type(t).ext("consumerGroup", group).ext("topic", topic).ext("queueId", "1");
        return code == ClientFrames.UPDATE_CONSUMER_OFFSET ? b.ext("commitOffset", "100") : b.ext("setZeroIfNotFound", "true");
    }

    /** A heartbeat body as a 4.9.7/5.x client writes it (fastjson): one consumer group and its subscriptions. */
    static String heartbeat(String consumerGroup, String producerGroup, String... topics) {
        StringBuilder subs = new StringBuilder();
        long v = 1700000000000L;
        for (String topic : topics) {
            if (subs.length() > 0) {
                subs.append(',');
            }
            subs.append("{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\",\"subString\":\"*\","
                + "\"subVersion\":").append(v++).append(",\"tagsSet\":[],\"topic\":\"").append(topic).append("\"}");
        }
        return "{\"clientID\":\"127.0.0.1@4711#1\",\"consumerDataSet\":[{\"consumeFromWhere\":\"CONSUME_FROM_LAST_OFFSET\","
            + "\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":\"" + consumerGroup + "\",\"messageModel\":\"CLUSTERING\","
            + "\"subscriptionDataSet\":[" + subs + "],\"unitMode\":false}],\"producerDataSet\":[{\"groupName\":\""
            + producerGroup + "\"}]}";
    }

    static Wire.Builder sendBack(SerializeType t, String group) {
        return Wire.request(CONSUMER_SEND_MSG_BACK).type(t).ext("group", group).ext("offset", "100")
            .ext("delayLevel", "0").ext("originMsgId", "AC11000100002A9F0000000000000064").ext("originTopic", "TopicA")
            .ext("maxReconsumeTimes", "16");
    }

    static Wire.Builder consumerList(SerializeType t, String group) {
        return Wire.request(GET_CONSUMER_LIST_BY_GROUP).type(t).ext("consumerGroup", group);
    }

    static Wire.Builder unregister(SerializeType t, String producerGroup, String consumerGroup) {
        Wire.Builder b = Wire.request(UNREGISTER_CLIENT).type(t).ext("clientID", "127.0.0.1@4711#1");
        return producerGroup != null ? b.ext("producerGroup", producerGroup) : b.ext("consumerGroup", consumerGroup);
    }

    /** A LOCK_BATCH_MQ / UNLOCK_BATCH_MQ body as an orderly consumer writes it. */
    static Wire.Builder lock(SerializeType t, int code, String group, String topic) {
        return Wire.request(code).type(t).body("{\"clientId\":\"127.0.0.1@4711#1\",\"consumerGroup\":\"" + group
            + "\",\"mqSet\":[{\"brokerName\":\"broker-a\",\"queueId\":0,\"topic\":\"" + topic + "\"}]}");
    }

    static Wire.Builder heartbeatRequest(SerializeType t, String body) {
        return Wire.request(ClientFrames.HEART_BEAT).type(t).body(body);
    }

    private static String topicRemark(NameCheck c, String topic) {
        return BROKER.topicRemark(c, topic);
    }

    private static String groupRemark(NameCheck c, String group) {
        return BROKER.groupRemark(c, group);
    }

    static List<Case> badNames() {
        NameCheck ill = NameCheck.ILLEGAL_CHARACTER;
        return List.of(
            new Case("send: topic with illegal characters", t -> sendV2(t, "pg", BAD_TOPIC), ill, topicRemark(ill, BAD_TOPIC)),
            new Case("send: topic of 128 characters", t -> sendV2(t, "pg", LONG_TOPIC), NameCheck.TOO_LONG,
                topicRemark(NameCheck.TOO_LONG, LONG_TOPIC)),
            new Case("send: empty topic", t -> sendV2(t, "pg", ""), NameCheck.EMPTY, topicRemark(NameCheck.EMPTY, "")),
            new Case("send: blank topic", t -> sendV2(t, "pg", "  "), NameCheck.EMPTY, topicRemark(NameCheck.EMPTY, "  ")),
            new Case("send: producer group with illegal characters", t -> sendV2(t, "pg#1", "TopicA"), ill,
                groupRemark(ill, "pg#1")),
            new Case("send (SEND_MESSAGE, long names): unicode topic", t -> sendV1(t, "pg", "T\u00f6pic"), ill,
                topicRemark(ill, "T\u00f6pic")),
            new Case("send (SEND_MESSAGE, long names): bad producer group", t -> sendV1(t, "p g", "TopicA"), ill,
                groupRemark(ill, "p g")),
            new Case("batch send: bad producer group", t -> batch(t, "pg/1", "TopicA"), ill, groupRemark(ill, "pg/1")),
            new Case("pull: consumer group with illegal characters",
                t -> pull(t, ClientFrames.PULL_MESSAGE, "cg!", "TopicA"), ill, groupRemark(ill, "cg!")),
            new Case("lite pull: bad topic", t -> pull(t, ClientFrames.LITE_PULL_MESSAGE, "cg", BAD_TOPIC), ill,
                topicRemark(ill, BAD_TOPIC)),
            new Case("QUERY_CONSUMER_OFFSET: bad topic",
                t -> offset(t, ClientFrames.QUERY_CONSUMER_OFFSET, "cg", BAD_TOPIC), ill, topicRemark(ill, BAD_TOPIC)),
            new Case("UPDATE_CONSUMER_OFFSET: bad topic",
                t -> offset(t, ClientFrames.UPDATE_CONSUMER_OFFSET, "cg", BAD_TOPIC), ill, topicRemark(ill, BAD_TOPIC)),
            new Case("UPDATE_CONSUMER_OFFSET: topic of 128 characters",
                t -> offset(t, ClientFrames.UPDATE_CONSUMER_OFFSET, "cg", LONG_TOPIC), NameCheck.TOO_LONG,
                topicRemark(NameCheck.TOO_LONG, LONG_TOPIC)),
            new Case("HEART_BEAT: bad consumer groupName",
                t -> heartbeatRequest(t, heartbeat("bad group", "pg", "TopicA", "%RETRY%bad group")), ill,
                groupRemark(ill, "bad group")),
            new Case("HEART_BEAT: bad subscription topic",
                t -> heartbeatRequest(t, heartbeat("cg", "pg", "TopicA", BAD_TOPIC)), ill, topicRemark(ill, BAD_TOPIC)),
            new Case("HEART_BEAT: bad producer groupName",
                t -> heartbeatRequest(t, heartbeat("cg", "pg:1", "TopicA")), ill, groupRemark(ill, "pg:1")),
            new Case("CONSUMER_SEND_MSG_BACK: bad group", t -> sendBack(t, "cg?"), ill, groupRemark(ill, "cg?")),
            new Case("GET_CONSUMER_LIST_BY_GROUP: bad group", t -> consumerList(t, "c g"), ill, groupRemark(ill, "c g")),
            new Case("UNREGISTER_CLIENT: bad producer group", t -> unregister(t, "pg*", null), ill, groupRemark(ill, "pg*")),
            new Case("UNREGISTER_CLIENT: bad consumer group", t -> unregister(t, null, "cg*"), ill, groupRemark(ill, "cg*")),
            new Case("LOCK_BATCH_MQ: bad group", t -> lock(t, LOCK_BATCH_MQ, "cg<", "TopicA"), ill, groupRemark(ill, "cg<")),
            new Case("UNLOCK_BATCH_MQ: bad topic", t -> lock(t, UNLOCK_BATCH_MQ, "cg", BAD_TOPIC), ill,
                topicRemark(ill, BAD_TOPIC)));
    }

    static Stream<Arguments> badNamesInBothEncodings() {
        List<Arguments> out = new ArrayList<>();
        for (Case c : badNames()) {
            for (SerializeType t : SerializeType.values()) {
                out.add(Arguments.of(c, t));
            }
        }
        return out.stream();
    }

    private static int nextOpaque = 5000;

    /** Sends a request the broker answers and returns that answer; proves the connection still relays. */
    private static Wire.Frame marker(BrokerBehindGateway b, RawClient client, int opaque) throws Exception {
        client.send(Wire.request(ClientFrames.GET_MAX_OFFSET).opaque(opaque).ext("topic", "TopicA").ext("queueId", "0").bytes());
        ScriptedPeer.Received first = b.broker.awaitFrame(RawClient.WAIT);
        assertEquals(ClientFrames.GET_MAX_OFFSET, first.frame().code(),
            "the first frame the broker received after the refused one is the next request: " + first.frame());
        assertEquals(opaque, first.frame().opaque());
        return client.read();
    }

    /** Sends a refused request, checks the answer and that nothing reached the broker; returns the answer. */
    private static Wire.Frame refused(BrokerBehindGateway b, Case c, SerializeType t, int expectedCode) throws Exception {
        b.broker.drainReceived();
        double before = MeterReadings.of(b.gateway.metrics()).namesRejected(c.reason().label());
        int opaque = ++nextOpaque;
        try (RawClient client = b.connect()) {
            client.send(c.request().apply(t).opaque(opaque).bytes());
            Wire.Frame answer = client.read();
            assertTrue(answer.isResponse(), answer.toString());
            assertEquals(opaque, answer.opaque(), "answered with the client's opaque");
            assertEquals(expectedCode, answer.code(), c + ": " + answer.remark());
            assertEquals(c.remark(), answer.remark(), "the broker's remark naming the rule");
            assertEquals(t, answer.serializeType(), "in the encoding the client spoke");
            assertEquals(before + 1, MeterReadings.of(b.gateway.metrics()).namesRejected(c.reason().label()), 0.0, "counted by reason");
            assertEquals(opaque + 1000, marker(b, client, opaque + 1000).opaque());
            return answer;
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("badNamesInBothEncodings")
    @CoversCodes({SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE, PULL_MESSAGE, LITE_PULL_MESSAGE, QUERY_CONSUMER_OFFSET,
        UPDATE_CONSUMER_OFFSET, HEART_BEAT, CONSUMER_SEND_MSG_BACK, GET_CONSUMER_LIST_BY_GROUP, UNREGISTER_CLIENT,
        LOCK_BATCH_MQ, UNLOCK_BATCH_MQ})
    void aBadNameIsAnsweredAtTheEdgeAndNeverForwarded(Case c, SerializeType encoding) throws Exception {
        refused(checked, c, encoding, INVALID_PARAMETER);
    }

    @Test
    void remarksAreTheBrokersOwn() {
        // the topic rule's wording is rocketmq-common's TopicValidator, as a 5.4 broker says it
        for (String topic : List.of(BAD_TOPIC, LONG_TOPIC, "", "  ", "T\u00f6pic")) {
            NameCheck check = BROKER.checkTopic(topic);
            assertEquals(TopicValidator.validateTopic(topic).getRemark(), topicRemark(check, topic), topic);
        }
        for (String group : List.of("pg#1", "bad group", "")) {
            NameCheck check = BROKER.checkGroup(group);
            assertEquals(TopicValidator.validateGroup(group).getRemark(), groupRemark(check, group), group);
        }
    }

    @Test
    void aSendToASystemTopicIsRefusedWithNoPermission() throws Exception {
        String topic = "SCHEDULE_TOPIC_XXXX";
        refused(checked, new Case("send to " + topic, t -> sendV2(t, "pg", topic), NameCheck.SEND_FORBIDDEN,
            "Sending message to topic[" + topic + "] is forbidden."), SerializeType.JSON, NO_PERMISSION);
    }

    @Test
    void aOnewayRequestWithABadNameIsDroppedAndCounted() throws Exception {
        checked.broker.drainReceived();
        double before = MeterReadings.of(checked.gateway.metrics()).namesRejected(NameCheck.ILLEGAL_CHARACTER.label());
        try (RawClient client = checked.connect()) {
            // what DefaultMQPushConsumer's offset store sends: updateConsumerOffsetOneway
            client.send(offset(SerializeType.JSON, ClientFrames.UPDATE_CONSUMER_OFFSET, "cg", BAD_TOPIC)
                .opaque(77).oneway().bytes());
            client.send(sendV2(SerializeType.ROCKETMQ, "pg", BAD_TOPIC).opaque(78).oneway().bytes());
            Wire.Frame next = marker(checked, client, 79);
            assertEquals(79, next.opaque(), "no answer to the oneway requests: the next frame answers the next request");
        }
        assertEquals(before + 2, MeterReadings.of(checked.gateway.metrics()).namesRejected(NameCheck.ILLEGAL_CHARACTER.label()), 0.0);
    }

    @Test
    void aRefusedOnewayRequestIsNotCountedAsRelayed() throws Exception {
        double before = MeterReadings.of(checked.gateway.metrics()).oneways(ClientFrames.UPDATE_CONSUMER_OFFSET);
        try (RawClient client = checked.connect()) {
            client.send(offset(SerializeType.JSON, ClientFrames.UPDATE_CONSUMER_OFFSET, "cg", BAD_TOPIC)
                .opaque(91).oneway().bytes());
            client.send(offset(SerializeType.JSON, ClientFrames.UPDATE_CONSUMER_OFFSET, "cg", "TopicA")
                .opaque(92).oneway().bytes());
            checked.broker.awaitFrame(f -> f.opaque() == 92, RawClient.WAIT);
        }
        // rmqgw.oneway.requests is "Oneway requests relayed, by request code": only the good one was relayed
        assertEquals(before + 1, MeterReadings.of(checked.gateway.metrics()).oneways(ClientFrames.UPDATE_CONSUMER_OFFSET), 0.0);
    }

    /** Requests with names brokers accept: each must reach the broker. */
    static List<Case> goodNames() {
        String t127 = "t".repeat(127);
        String longRetry = "%RETRY%" + "g".repeat(200);
        return List.of(
            new Case("send to %RETRY%group", t -> sendV2(t, "pg", "%RETRY%cg_1"), NameCheck.VALID, null),
            new Case("send to %DLQ%group", t -> sendV1(t, "pg", "%DLQ%cg_1"), NameCheck.VALID, null),
            new Case("send to a 127-character topic", t -> sendV2(t, "pg", t127), NameCheck.VALID, null),
            new Case("send to a 207-character retry topic", t -> sendV2(t, "pg", longRetry), NameCheck.VALID, null),
            new Case("send with every legal character", t -> sendV2(t, "pg|-_%09AZaz", "Topic|-_%09AZaz"), NameCheck.VALID, null),
            new Case("pull from %RETRY%group", t -> pull(t, ClientFrames.PULL_MESSAGE, "cg_1", "%RETRY%cg_1"), NameCheck.VALID, null),
            new Case("lite pull from %DLQ%group", t -> pull(t, ClientFrames.LITE_PULL_MESSAGE, "cg_1", "%DLQ%cg_1"),
                NameCheck.VALID, null),
            new Case("QUERY_CONSUMER_OFFSET of %RETRY%group",
                t -> offset(t, ClientFrames.QUERY_CONSUMER_OFFSET, "cg_1", "%RETRY%cg_1"), NameCheck.VALID, null),
            new Case("UPDATE_CONSUMER_OFFSET of a 127-character topic",
                t -> offset(t, ClientFrames.UPDATE_CONSUMER_OFFSET, "cg_1", t127), NameCheck.VALID, null),
            new Case("HEART_BEAT with retry subscriptions",
                t -> heartbeatRequest(t, heartbeat("cg_1", "CLIENT_INNER_PRODUCER", "TopicA", "%RETRY%cg_1")),
                NameCheck.VALID, null),
            new Case("CONSUMER_SEND_MSG_BACK", t -> sendBack(t, "cg_1"), NameCheck.VALID, null),
            new Case("GET_CONSUMER_LIST_BY_GROUP", t -> consumerList(t, "cg_1"), NameCheck.VALID, null),
            new Case("UNREGISTER_CLIENT", t -> unregister(t, "pg_1", null), NameCheck.VALID, null),
            new Case("LOCK_BATCH_MQ", t -> lock(t, LOCK_BATCH_MQ, "cg_1", "TopicA"), NameCheck.VALID, null),
            new Case("UNLOCK_BATCH_MQ", t -> lock(t, UNLOCK_BATCH_MQ, "cg_1", "%RETRY%cg_1"), NameCheck.VALID, null));
    }

    static Stream<Arguments> goodNamesInBothEncodings() {
        List<Arguments> out = new ArrayList<>();
        for (Case c : goodNames()) {
            for (SerializeType t : SerializeType.values()) {
                out.add(Arguments.of(c, t));
            }
        }
        return out.stream();
    }

    /** Sends a request that must be forwarded; returns what the broker received. */
    private static Wire.Frame forwarded(BrokerBehindGateway b, Wire.Builder request) throws Exception {
        int opaque = ++nextOpaque;
        try (RawClient client = b.connect()) {
            client.send(request.opaque(opaque).bytes());
            Wire.Frame got = b.broker.awaitFrame(f -> !f.isResponse() && f.opaque() == opaque, RawClient.WAIT).frame();
            Wire.Frame answer = client.read();
            assertEquals(opaque, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code(), "the broker's answer, not the gateway's: " + answer.remark());
            return got;
        }
    }

    private static double rejectedTotal(BrokerBehindGateway b) {
        double sum = 0;
        for (NameCheck c : NameCheck.values()) {
            sum += MeterReadings.of(b.gateway.metrics()).namesRejected(c.label());
        }
        return sum;
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("goodNamesInBothEncodings")
    @CoversCodes({SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE, PULL_MESSAGE, LITE_PULL_MESSAGE, QUERY_CONSUMER_OFFSET,
        UPDATE_CONSUMER_OFFSET, HEART_BEAT, CONSUMER_SEND_MSG_BACK, GET_CONSUMER_LIST_BY_GROUP, UNREGISTER_CLIENT,
        LOCK_BATCH_MQ, UNLOCK_BATCH_MQ})
    void goodNamesRetryAndDlqNamesAmongThemPass(Case c, SerializeType encoding) throws Exception {
        double before = rejectedTotal(checked);
        Wire.Frame got = forwarded(checked, c.request().apply(encoding));
        assertEquals(SerializeType.ROCKETMQ, got.serializeType());
        assertEquals(before, rejectedTotal(checked), 0.0, "nothing refused");
    }

    @Test
    void legacyBrokersAnswerBadNamesWithSystemError() throws Exception {
        try (BrokerBehindGateway legacy = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .names(new NamesConfig(true, null, null, true)))) {
            for (Case c : badNames()) {
                refused(legacy, c, SerializeType.JSON, SYSTEM_ERROR);
            }
            // a forbidden system topic is NO_PERMISSION on every broker version
            String topic = "RMQ_SYS_TRANS_HALF_TOPIC";
            refused(legacy, new Case("send to " + topic, t -> sendV2(t, "pg", topic), NameCheck.SEND_FORBIDDEN,
                "Sending message to topic[" + topic + "] is forbidden."), SerializeType.ROCKETMQ, NO_PERMISSION);
        }
    }

    @Test
    void configuredLimitsApply() throws Exception {
        NameValidator limits = new NameValidator(10, 5, 255);
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .names(new NamesConfig(true, 10, 5, false)))) {
            String topic11 = "t".repeat(11);
            refused(b, new Case("send: 11-character topic", t -> sendV2(t, "pg", topic11), NameCheck.TOO_LONG,
                limits.topicRemark(NameCheck.TOO_LONG, topic11)), SerializeType.JSON, INVALID_PARAMETER);
            assertTrue(limits.topicRemark(NameCheck.TOO_LONG, topic11).endsWith("max length: 10"));
            refused(b, new Case("pull: 11-character topic", t -> pull(t, ClientFrames.PULL_MESSAGE, "cg", topic11),
                NameCheck.TOO_LONG, limits.topicRemark(NameCheck.TOO_LONG, topic11)), SerializeType.ROCKETMQ,
                INVALID_PARAMETER);
            refused(b, new Case("QUERY_CONSUMER_OFFSET: 6-character group",
                t -> offset(t, ClientFrames.QUERY_CONSUMER_OFFSET, "cg_abc", "T"), NameCheck.TOO_LONG,
                limits.groupRemark(NameCheck.TOO_LONG, "cg_abc")), SerializeType.JSON, INVALID_PARAMETER);
            refused(b, new Case("HEART_BEAT: 6-character group", t -> heartbeatRequest(t, heartbeat("cg_abc", "pg", "T")),
                NameCheck.TOO_LONG, limits.groupRemark(NameCheck.TOO_LONG, "cg_abc")), SerializeType.JSON,
                INVALID_PARAMETER);

            forwarded(b, sendV2(SerializeType.JSON, "pg", "t".repeat(10)));
            forwarded(b, pull(SerializeType.JSON, ClientFrames.PULL_MESSAGE, "cg_ab", "%RETRY%cg_ab"));
            assertEquals(4, rejectedTotal(b), 0.0);
        }
    }

    @Test
    void withChecksOffEveryNameIsForwardedAsItCame() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.PRESERVE)
            .responseEncoding(ResponseEncoding.MIRROR).names(new NamesConfig(false, null, null, null)))) {
            for (Case c : badNames()) {
                for (SerializeType t : SerializeType.values()) {
                    byte[] request = c.request().apply(t).bytes(); // opaque 1 on each fresh connection
                    try (RawClient client = b.connect()) {
                        client.send(request);
                        Wire.Frame got = b.broker.awaitFrame(f -> !f.isResponse(), RawClient.WAIT).frame();
                        assertArrayEquals(request, got.bytes(), c + ", " + t);
                        assertEquals(Wire.SUCCESS, client.read().code());
                    }
                }
            }
            assertEquals(0, rejectedTotal(b), 0.0);
        }
    }
}
