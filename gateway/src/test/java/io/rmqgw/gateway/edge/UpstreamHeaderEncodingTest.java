package io.rmqgw.gateway.edge;

import static io.rmqgw.gateway.edge.BrokerBehindGateway.assertSameCommand;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.Wire;
import java.util.List;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2;
import org.junit.jupiter.api.Test;

/**
 * {@code upstream.header-encoding}, as the broker sees it: {@code rocketmq} turns a 4.9.7 client's JSON
 * headers into ROCKETMQ binary carrying exactly the same command; {@code preserve} forwards every frame
 * byte for byte; {@code json} turns a binary client's headers into JSON.
 */
class UpstreamHeaderEncodingTest {

    private static final NamesConfig NAMES_ON = new NamesConfig(true, null, null, null);

    /** Sends {@code request}, returns the frame the broker received for it, and reads the client's answer (if any). */
    private static Wire.Frame relay(BrokerBehindGateway b, RawClient client, ClientFrames.Spec spec, byte[] request)
        throws Exception {
        client.send(request);
        Wire.Frame got = b.broker.awaitFrame(f -> !f.isResponse() && f.opaque() == spec.opaque(), RawClient.WAIT).frame();
        if (!spec.oneway()) {
            Wire.Frame answer = client.read();
            assertEquals(spec.opaque(), answer.opaque(), spec + ": the answer to this request");
            assertEquals(Wire.SUCCESS, answer.code(), spec + ": " + answer);
            assertEquals("ok " + spec.code(), answer.remark());
        }
        return got;
    }

    @Test
    void rocketmqTurnsLegacyJsonRequestsIntoBinaryWithEveryFieldKept() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ).names(NAMES_ON));
             RawClient client = b.connect()) {
            GatewayMetrics metrics = b.gateway.metrics();
            List<ClientFrames.Spec> specs = ClientFrames.hotPath();
            int answered = 0;
            for (int i = 0; i < specs.size(); i++) {
                ClientFrames.Spec spec = specs.get(i);
                byte[] json = spec.json();
                Wire.Frame sent = Wire.parse(json);
                Wire.Frame got = relay(b, client, spec, json);

                assertEquals(SerializeType.ROCKETMQ, got.serializeType(), spec + " reaches the broker as ROCKETMQ");
                assertSameCommand(sent, got);
                assertEquals(i + 1, MeterReadings.of(metrics).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0,
                    spec + ": one conversion per converted frame");
                answered += spec.oneway() ? 0 : 1;
                // the broker answered in binary; the JSON client got its answers in JSON (mirror)
                assertEquals(answered, MeterReadings.of(metrics).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON), 0.0);
            }
        }
    }

    @Test
    void convertedSendsAndPullsDecodeAsTheBrokerDecodesThem() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ).names(NAMES_ON));
             RawClient client = b.connect()) {
            ClientFrames.Spec v2 = ClientFrames.sendV2();
            RemotingCommand got = relay(b, client, v2, v2.json()).command();
            SendMessageRequestHeader send = SendMessageRequestHeaderV2.createSendMessageRequestHeaderV1(
                (SendMessageRequestHeaderV2) got.decodeCommandCustomHeader(SendMessageRequestHeaderV2.class));
            assertEquals("please_rename_unique_group_name", send.getProducerGroup());
            assertEquals("TopicTest", send.getTopic());
            assertEquals(3, send.getQueueId());
            assertEquals(1700000000123L, send.getBornTimestamp());
            assertEquals(ClientFrames.PROPERTIES, send.getProperties());
            assertEquals("\u8ba2\u5355-42 order", MessageDecoder.string2messageProperties(send.getProperties()).get("KEYS"));
            assertEquals(16, send.getMaxReconsumeTimes());
            assertEquals(ClientFrames.SIGNATURE, got.getExtFields().get("Signature"), "the ACL signature is carried exactly");

            ClientFrames.Spec pullSpec = ClientFrames.pull();
            got = relay(b, client, pullSpec, pullSpec.json()).command();
            PullMessageRequestHeader pull = (PullMessageRequestHeader) got.decodeCommandCustomHeader(PullMessageRequestHeader.class);
            assertEquals("cg_1", pull.getConsumerGroup());
            assertEquals("TopicTest", pull.getTopic());
            assertEquals(12345L, pull.getQueueOffset());
            assertEquals(15000L, pull.getSuspendTimeoutMillis());
            assertEquals("TagA || TagB", pull.getSubscription());
        }
    }

    @Test
    void rocketmqLeavesBinaryRequestsAsTheyAre() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ).names(NAMES_ON));
             RawClient client = b.connect()) {
            for (ClientFrames.Spec spec : ClientFrames.hotPath()) {
                byte[] binary = spec.encoded(SerializeType.ROCKETMQ);
                assertArrayEquals(binary, relay(b, client, spec, binary).bytes(), spec + " arrives byte for byte");
            }
            assertEquals(0, MeterReadings.of(b.gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0);
            assertEquals(0, MeterReadings.of(b.gateway.metrics()).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON), 0.0);
        }
    }

    @Test
    void aCodeTooLargeForTheBinaryHeaderStaysJson() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ).names(NAMES_ON));
             RawClient client = b.connect()) {
            ClientFrames.Spec pop = ClientFrames.pop();
            byte[] json = pop.json();
            Wire.Frame got = relay(b, client, pop, json);
            assertEquals(SerializeType.JSON, got.serializeType());
            assertEquals(ClientFrames.POP_MESSAGE, got.code(), "the code is not truncated to 16 bits");
            assertArrayEquals(json, got.bytes(), "POP_MESSAGE arrives byte for byte");
            assertEquals(0, MeterReadings.of(b.gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0,
                "nothing was converted");

            // the connection goes on converting what can be converted
            ClientFrames.Spec v2 = ClientFrames.sendV2();
            assertEquals(SerializeType.ROCKETMQ, relay(b, client, v2, v2.json()).serializeType());
            assertEquals(1, MeterReadings.of(b.gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0);
        }
    }

    @Test
    void nameServerRequestsAreConvertedTooAndRouteAnswersKeepTheirDialect() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ).names(NAMES_ON))) {
            String brokerAddress = b.broker.address();
            // a name server answers in the encoding it was asked in, in the JSON dialect the client's version asks for
            b.namesrv.script((c, f) -> {
                if (!f.isResponse() && !f.isOneway()) {
                    c.send(Wire.response(Wire.SUCCESS, f.opaque()).type(f.serializeType()).remark("route \u2713")
                        .ext("x-odd", ClientFrames.ODD)
                        .body(Routes.body("broker-a", brokerAddress, Routes.wantsFastjson(f))).bytes());
                }
            });
            GatewayMetrics metrics = b.gateway.metrics();
            double toBinary = MeterReadings.of(metrics).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ);
            double toJson = MeterReadings.of(metrics).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON);
            try (RawClient client = RawClient.connect(b.gateway.port())) {
                // an old client: fastjson's dialect (unquoted integer keys in brokerAddrs)
                byte[] request = LegacyJson.request(Routes.GET_ROUTEINFO_BY_TOPIC).opaque(31).version(317)
                    .ext("topic", "TopicA").ext("AccessKey", ClientFrames.ACCESS_KEY).ext("Signature", ClientFrames.SIGNATURE)
                    .bytes();
                client.send(request);
                Wire.Frame atNamesrv = b.namesrv.awaitFrame(f -> f.opaque() == 31, RawClient.WAIT).frame();
                assertEquals(SerializeType.ROCKETMQ, atNamesrv.serializeType());
                assertSameCommand(Wire.parse(request), atNamesrv);

                Wire.Frame answer = client.read();
                assertEquals(SerializeType.JSON, answer.serializeType(), "mirrored to the JSON client");
                assertEquals(31, answer.opaque());
                assertEquals(Wire.SUCCESS, answer.code());
                assertEquals("route \u2713", answer.remark());
                assertEquals(ClientFrames.ODD, answer.ext().get("x-odd"));
                String advertised = "127.0.0.1:" + b.port();
                assertEquals(Routes.body("broker-a", advertised, true), answer.bodyText(),
                    "the route names the gateway, in the dialect the name server chose");
            }
            assertEquals(toBinary + 1, MeterReadings.of(metrics).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0);
            assertEquals(toJson + 1, MeterReadings.of(metrics).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON), 0.0);
        }
    }

    @Test
    void preserveForwardsEveryFrameByteForByte() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.PRESERVE).names(NAMES_ON));
             RawClient client = b.connect()) {
            List<ClientFrames.Spec> specs = new java.util.ArrayList<>(ClientFrames.hotPath());
            specs.add(ClientFrames.pop());
            for (ClientFrames.Spec spec : specs) {
                byte[] json = spec.json();
                assertArrayEquals(json, relay(b, client, spec, json).bytes(), spec + " (JSON) arrives byte for byte");
            }
            for (ClientFrames.Spec spec : ClientFrames.hotPath()) {
                byte[] binary = spec.encoded(SerializeType.ROCKETMQ);
                assertArrayEquals(binary, relay(b, client, spec, binary).bytes(), spec + " (ROCKETMQ) arrives byte for byte");
            }
            assertEquals(0, MeterReadings.of(b.gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ), 0.0);
            assertEquals(0, MeterReadings.of(b.gateway.metrics()).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON), 0.0);
        }
    }

    @Test
    void jsonTurnsBinaryRequestsIntoJsonWithEveryFieldKept() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.JSON).names(NAMES_ON));
             RawClient client = b.connect()) {
            GatewayMetrics metrics = b.gateway.metrics();
            List<ClientFrames.Spec> specs = ClientFrames.hotPath();
            for (int i = 0; i < specs.size(); i++) {
                ClientFrames.Spec spec = specs.get(i);
                byte[] binary = spec.encoded(SerializeType.ROCKETMQ);
                Wire.Frame got = relay(b, client, spec, binary);
                assertEquals(SerializeType.JSON, got.serializeType(), spec + " reaches the broker as JSON");
                assertSameCommand(Wire.parse(binary), got);
                assertEquals(i + 1, MeterReadings.of(metrics).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON), 0.0,
                    spec.name());
            }
            // a JSON client's frames are already what the broker should get
            ClientFrames.Spec v2 = ClientFrames.sendV2();
            byte[] json = v2.json();
            assertArrayEquals(json, relay(b, client, v2, json).bytes());
            assertTrue(MeterReadings.of(metrics).headerConversions(SerializeType.ROCKETMQ, SerializeType.JSON) == specs.size());
        }
    }
}
