package io.rmqgw.gateway.edge;

import static io.rmqgw.gateway.edge.BrokerBehindGateway.assertSameCommand;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.config.ResponseEncoding;
import io.rmqgw.gateway.testing.Records;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageId;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code downstream.response-encoding}, as a client sees it: {@code mirror} answers in the encoding the
 * client spoke whatever the broker answered in, {@code json} and {@code rocketmq} force theirs; requests
 * a broker sends to a client follow the same rule, and rewritten send answers too.
 */
class ResponseEncodingTest {

    private static final InetSocketAddress FOREIGN_STORE = new InetSocketAddress("10.1.2.3", 10911);
    private static final long OFFSET = 0x0000_0001_2345_6789L;

    private static SerializeType expected(ResponseEncoding mode, SerializeType client) {
        return switch (mode) {
            case MIRROR -> client;
            case JSON -> SerializeType.JSON;
            case ROCKETMQ -> SerializeType.ROCKETMQ;
        };
    }

    private static SerializeType other(SerializeType t) {
        return t == SerializeType.JSON ? SerializeType.ROCKETMQ : SerializeType.JSON;
    }

    /** A request and the answer a broker gives it (opaque patched in later). */
    private record Exchange(String name, Wire.Builder request, Wire.Builder answer) {
    }

    private static List<Exchange> exchanges() throws Exception {
        byte[] records = Records.concat(Records.record("TopicA", "one", FOREIGN_STORE, 1000, 1),
            Records.record("TopicA", "two", FOREIGN_STORE, 2000, 2));
        return List.of(
            new Exchange("GET_MAX_OFFSET (generic)",
                Wire.request(ClientFrames.GET_MAX_OFFSET).ext("topic", "TopicA").ext("queueId", "1"),
                Wire.response(Wire.SUCCESS, 0).language(LanguageCode.CPP).version(401).remark("r\u00e9ponse \u2713")
                    .ext("offset", "77").ext("x-odd", ClientFrames.ODD).body(ClientFrames.bytes(100, 17))),
            new Exchange("PULL_MESSAGE (typed answer, records of another broker)",
                Wire.request(ClientFrames.PULL_MESSAGE).ext("consumerGroup", "cg").ext("topic", "TopicA")
                    .ext("queueId", "1").ext("queueOffset", "0").ext("maxMsgNums", "32").ext("sysFlag", "0")
                    .ext("commitOffset", "0").ext("suspendTimeoutMillis", "15000").ext("subVersion", "0"),
                Wire.response(Wire.SUCCESS, 0).ext("nextBeginOffset", "3").ext("minOffset", "0").ext("maxOffset", "3")
                    .ext("suggestWhichBrokerId", "0").ext("x-odd", ClientFrames.ODD).body(records)),
            new Exchange("SEND_MESSAGE_V2 (typed answer, id of another broker)",
                Wire.request(ClientFrames.SEND_MESSAGE_V2).ext("a", "pg").ext("b", "TopicA").ext("c", "TBW102")
                    .ext("d", "4").ext("e", "1").ext("f", "0").ext("g", "1700000000000").ext("h", "0")
                    .ext("i", ClientFrames.PROPERTIES).body("hello"),
                Wire.response(Wire.SUCCESS, 0).ext("msgId", MessageDecoder.createMessageId(FOREIGN_STORE, OFFSET))
                    .ext("queueId", "1").ext("queueOffset", "42").ext("MSG_REGION", "DefaultRegion")
                    .ext("TRACE_ON", "true")));
    }

    @ParameterizedTest
    @EnumSource(ResponseEncoding.class)
    void answersReachTheClientInTheConfiguredEncodingWithEveryField(ResponseEncoding mode) throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.PRESERVE)
            .responseEncoding(mode))) {
            GatewayMetrics metrics = b.gateway.metrics();
            int opaque = 1000;
            for (SerializeType client : SerializeType.values()) {
                for (SerializeType broker : SerializeType.values()) {
                    for (Exchange x : exchanges()) {
                        String what = x.name() + ", client " + client + ", broker answers " + broker + ", " + mode;
                        byte[] answer = x.answer().opaque(++opaque).type(broker).bytes();
                        b.answers.set(f -> answer);
                        double before = MeterReadings.of(metrics).headerConversions(broker, other(broker));
                        try (RawClient c = b.connect()) {
                            c.send(x.request().opaque(opaque).type(client).bytes());
                            byte[] got = c.readBytes(RawClient.WAIT);
                            Wire.Frame frame = Wire.parse(got);
                            SerializeType want = expected(mode, client);
                            assertEquals(want, frame.serializeType(), what);
                            if (want == broker) {
                                assertArrayEquals(answer, got, what + ": the broker's answer byte for byte");
                                assertEquals(before, MeterReadings.of(metrics).headerConversions(broker, other(broker)), 0.0, what);
                            } else {
                                assertSameCommand(Wire.parse(answer), frame);
                                assertEquals(before + 1, MeterReadings.of(metrics).headerConversions(broker, want), 0.0, what);
                            }
                        }
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ResponseEncoding.class)
    void aLegacyJsonClientBehindABinaryUpstreamGetsAnswersAsConfigured(ResponseEncoding mode) throws Exception {
        // the production default: requests go upstream as ROCKETMQ, so the broker answers in ROCKETMQ
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .responseEncoding(mode).names(new NamesConfig(true, null, null, null)));
             RawClient client = b.connect()) {
            Wire.Builder reply = Wire.response(Wire.SUCCESS, 0).remark("stored \u2713").ext("offset", "9")
                .ext("x-odd", ClientFrames.ODD).body(ClientFrames.bytes(40, 3));
            b.answers.set(f -> reply.opaque(f.opaque()).type(f.serializeType()).bytes());
            client.send(LegacyJson.request(ClientFrames.GET_MAX_OFFSET).opaque(5).ext("topic", "TopicA")
                .ext("queueId", "0").bytes());
            Wire.Frame upstream = b.broker.awaitFrame(f -> f.opaque() == 5, RawClient.WAIT).frame();
            assertEquals(SerializeType.ROCKETMQ, upstream.serializeType());
            Wire.Frame got = client.read();
            assertEquals(expected(mode, SerializeType.JSON), got.serializeType());
            assertSameCommand(Wire.parse(reply.opaque(5).type(SerializeType.ROCKETMQ).bytes()), got);
        }
    }

    static Stream<Arguments> brokerRequestCases() {
        return Stream.of(
            Arguments.of(ResponseEncoding.MIRROR, SerializeType.JSON),
            Arguments.of(ResponseEncoding.MIRROR, SerializeType.ROCKETMQ),
            Arguments.of(ResponseEncoding.JSON, SerializeType.ROCKETMQ),
            Arguments.of(ResponseEncoding.ROCKETMQ, SerializeType.JSON));
    }

    @ParameterizedTest(name = "{0}, client {1}")
    @MethodSource("brokerRequestCases")
    void requestsFromTheBrokerReachTheClientInItsEncoding(ResponseEncoding mode, SerializeType clientEncoding)
        throws Exception {
        SerializeType want = expected(mode, clientEncoding);
        SerializeType brokerEncoding = other(want); // the broker writes the other one: the gateway must convert
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .responseEncoding(mode).names(new NamesConfig(true, null, null, null)));
             RawClient client = b.connect()) {
            ScriptedPeer.Connection upstream = b.broker.awaitDialBy(client, RawClient.WAIT);
            // a consumer's first words: its heartbeat, in its own encoding
            String heartbeat = "{\"clientID\":\"127.0.0.1@4711\",\"consumerDataSet\":[{\"consumeFromWhere\":"
                + "\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":\"cg_1\","
                + "\"messageModel\":\"CLUSTERING\",\"subscriptionDataSet\":[{\"classFilterMode\":false,\"codeSet\":[],"
                + "\"expressionType\":\"TAG\",\"subString\":\"*\",\"subVersion\":1700000000000,\"tagsSet\":[],"
                + "\"topic\":\"TopicA\"},{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\","
                + "\"subString\":\"*\",\"subVersion\":1700000000001,\"tagsSet\":[],\"topic\":\"%RETRY%cg_1\"}],"
                + "\"unitMode\":false}],\"producerDataSet\":[{\"groupName\":\"CLIENT_INNER_PRODUCER\"}]}";
            client.send(Wire.request(ClientFrames.HEART_BEAT).opaque(1).type(clientEncoding).body(heartbeat).bytes());
            assertEquals(1, client.read().opaque());
            GatewayMetrics metrics = b.gateway.metrics();
            double before = MeterReadings.of(metrics).headerConversions(brokerEncoding, want);

            byte[] notify = Wire.request(ClientFrames.NOTIFY_CONSUMER_IDS_CHANGED).opaque(9001).oneway()
                .type(brokerEncoding).ext("consumerGroup", "cg_1").ext("x-odd", ClientFrames.ODD).bytes();
            upstream.send(notify);
            Wire.Frame got = client.read();
            assertEquals(want, got.serializeType(), "NOTIFY_CONSUMER_IDS_CHANGED");
            assertSameCommand(Wire.parse(notify), got);
            assertEquals(before + 1, MeterReadings.of(metrics).headerConversions(brokerEncoding, want), 0.0);

            // a transaction check-back naming a half message this broker stores: rebuilt, and in the client's encoding
            InetSocketAddress real = b.brokerAddress();
            byte[] record = Records.record("TopicTx", "half message", real, 8192, 4);
            byte[] check = Wire.request(ClientFrames.CHECK_TRANSACTION_STATE).opaque(9002).oneway().type(brokerEncoding)
                .ext("tranStateTableOffset", "4").ext("commitLogOffset", "8192")
                .ext("offsetMsgId", MessageDecoder.createMessageId(real, 8192)).ext("msgId", "7F000001B2C018B4AAC26F3A2B0C0000")
                .ext("transactionId", "tx-\u00e9-1").body(record).bytes();
            upstream.send(check);
            got = client.read();
            assertEquals(want, got.serializeType(), "CHECK_TRANSACTION_STATE");
            assertEquals(ClientFrames.CHECK_TRANSACTION_STATE, got.code());
            assertEquals(9002, got.opaque());
            assertTrue(got.isOneway());
            MessageId id = MessageDecoder.decodeMessageId(got.ext().get("offsetMsgId"));
            assertEquals(b.gatewayAddress(), id.getAddress(), "the check-back names the gateway");
            assertEquals(8192, id.getOffset());
            Map<String, String> rest = new HashMap<>(got.ext());
            rest.remove("offsetMsgId");
            Map<String, String> sent = new HashMap<>(Wire.parse(check).ext());
            sent.remove("offsetMsgId");
            assertEquals(sent, rest, "every other field as the broker sent it");
            List<MessageExt> messages = Records.decode(got.body());
            assertEquals(1, messages.size());
            assertEquals(b.gatewayAddress(), messages.get(0).getStoreHost());
            assertEquals("half message", new String(messages.get(0).getBody(), StandardCharsets.UTF_8));

            // a request that wants an answer: the client's answer goes back upstream as ROCKETMQ
            byte[] running = Wire.request(ClientFrames.GET_CONSUMER_RUNNING_INFO).opaque(9003).type(brokerEncoding)
                .ext("consumerGroup", "cg_1").ext("clientId", "127.0.0.1@4711").ext("jstackEnable", "false").bytes();
            upstream.send(running);
            got = client.read();
            assertEquals(want, got.serializeType(), "GET_CONSUMER_RUNNING_INFO");
            assertSameCommand(Wire.parse(running), got);
            byte[] answer = Wire.response(Wire.SUCCESS, 9003).type(got.serializeType()).remark("running \u2713")
                .body("{\"properties\":{\"consumeType\":\"CONSUME_PASSIVELY\"}}").bytes();
            client.send(answer);
            Wire.Frame atBroker = b.broker.awaitFrame(Wire.Frame::isResponse, RawClient.WAIT).frame();
            assertEquals(SerializeType.ROCKETMQ, atBroker.serializeType(), "upstream.header-encoding applies to answers too");
            assertSameCommand(Wire.parse(answer), atBroker);
        }
    }

    static Stream<Arguments> sendRewriteCases() {
        return Stream.of(ResponseEncoding.values()).flatMap(m ->
            Stream.of(SerializeType.values()).map(c -> Arguments.of(m, c)));
    }

    @ParameterizedTest(name = "{0}, client {1}")
    @MethodSource("sendRewriteCases")
    void aRewrittenSendAnswerIsInTheClientsEncodingAndNamesTheGateway(ResponseEncoding mode, SerializeType clientEncoding)
        throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .responseEncoding(mode).names(new NamesConfig(true, null, null, null)));
             RawClient client = b.connect()) {
            String realId = MessageDecoder.createMessageId(b.brokerAddress(), OFFSET);
            Wire.Builder reply = Wire.response(Wire.SUCCESS, 0).remark("stored \u2713").ext("msgId", realId)
                .ext("queueId", "1").ext("queueOffset", "42").ext("MSG_REGION", "DefaultRegion").ext("TRACE_ON", "true")
                .ext("x-odd", ClientFrames.ODD);
            SerializeType want = expected(mode, clientEncoding);
            // the broker answers in the other encoding: the rebuilt answer is converted as well
            b.answers.set(f -> reply.opaque(f.opaque()).type(other(want)).bytes());
            ClientFrames.Spec send = ClientFrames.sendV2();
            client.send(clientEncoding == SerializeType.JSON ? send.json() : send.encoded(SerializeType.ROCKETMQ));
            assertEquals(SerializeType.ROCKETMQ,
                b.broker.awaitFrame(f -> f.opaque() == send.opaque(), RawClient.WAIT).frame().serializeType());
            // a JSON client's request went upstream converted JSON -> ROCKETMQ: the same counter when want is ROCKETMQ
            double upstreamConversions = clientEncoding == SerializeType.JSON && want == SerializeType.ROCKETMQ ? 1 : 0;

            Wire.Frame got = client.read();
            assertEquals(want, got.serializeType());
            assertEquals(upstreamConversions + 1, MeterReadings.of(b.gateway.metrics()).headerConversions(other(want), want), 0.0);
            assertEquals(send.opaque(), got.opaque());
            assertEquals(Wire.SUCCESS, got.code());
            assertEquals("stored \u2713", got.remark());
            String id = got.ext().get("msgId");
            assertNotEquals(realId, id);
            MessageId decoded = MessageDecoder.decodeMessageId(id);
            assertEquals(b.gatewayAddress(), decoded.getAddress(), "the id names the gateway's port for the broker");
            assertEquals(OFFSET, decoded.getOffset());
            Map<String, String> others = new HashMap<>(got.ext());
            others.remove("msgId");
            assertEquals(Map.of("queueId", "1", "queueOffset", "42", "MSG_REGION", "DefaultRegion", "TRACE_ON", "true",
                "x-odd", ClientFrames.ODD), others);
        }
    }
}
