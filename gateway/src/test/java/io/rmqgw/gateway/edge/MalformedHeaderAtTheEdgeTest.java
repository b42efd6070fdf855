package io.rmqgw.gateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.Wire;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A JSON header whose envelope reads fine but whose extFields cannot be decoded (a value that is an
 * object or an array) is only found out when the edge decodes the whole header: for the typed send and
 * pull headers (name check or re-encoding) and for name-checked codes such as QUERY_CONSUMER_OFFSET.
 * Such a frame closes that connection as malformed input does everywhere else (decode error
 * {@code invalid_json} counted once; other clients carry on), and its buffer is released:
 * LeakCheckExtension fails this class on a leak report.
 */
class MalformedHeaderAtTheEdgeTest {

    private static final NamesConfig NAMES_ON = new NamesConfig(true, null, null, null);
    private static final NamesConfig NAMES_OFF = new NamesConfig(false, null, null, null);

    static Stream<Arguments> cases() {
        UnaryOperator<io.rmqgw.gateway.testing.TestGateway.Builder> rocketmq =
            o -> o.headerEncoding(HeaderEncoding.ROCKETMQ).names(NAMES_OFF);
        UnaryOperator<io.rmqgw.gateway.testing.TestGateway.Builder> preserveChecked =
            o -> o.headerEncoding(HeaderEncoding.PRESERVE).names(NAMES_ON);
        String sendV2 = "{\"code\":310,\"extFields\":{\"a\":\"pg\",\"b\":{\"nested\":\"TopicA\"},\"c\":\"TBW102\"},"
            + "\"flag\":0,\"language\":\"JAVA\",\"opaque\":9,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":407}";
        String pull = "{\"code\":11,\"extFields\":{\"consumerGroup\":\"cg\",\"topic\":\"TopicA\",\"queueId\":[0]},"
            + "\"flag\":0,\"language\":\"JAVA\",\"opaque\":9,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":407}";
        String queryOffset = "{\"code\":14,\"extFields\":{\"consumerGroup\":\"cg\",\"topic\":\"TopicA\",\"queueId\":{}},"
            + "\"flag\":0,\"language\":\"JAVA\",\"opaque\":9,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":407}";
        String unknown = "{\"code\":4321,\"extFields\":{\"x\":[1,2]},"
            + "\"flag\":0,\"language\":\"JAVA\",\"opaque\":9,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":407}";
        return Stream.of(
            Arguments.of("SEND_MESSAGE_V2, header-encoding rocketmq", rocketmq, sendV2),
            Arguments.of("SEND_MESSAGE_V2, names checked, preserve", preserveChecked, sendV2),
            Arguments.of("PULL_MESSAGE, header-encoding rocketmq", rocketmq, pull),
            Arguments.of("QUERY_CONSUMER_OFFSET, names checked, preserve", preserveChecked, queryOffset),
            Arguments.of("unknown code, header-encoding rocketmq", rocketmq, unknown));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void anUndecodableHeaderClosesThatConnectionAndIsReleased(String what,
                                                             UnaryOperator<TestGateway.Builder> options,
                                                             String header) throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(options);
             RawClient good = b.connect();
             RawClient bad = b.connect()) {
            roundTrip(b, good, 1);
            double before = MeterReadings.of(b.gateway.metrics()).decodeErrors("invalid_json");
            bad.send(Wire.rawFrame(0, Wire.utf8(header), Wire.utf8("body")));
            bad.assertClosedBy();
            TestGateway.await(() -> MeterReadings.of(b.gateway.metrics()).decodeErrors("invalid_json") >= before + 1, RawClient.WAIT,
                "decode error counted");
            roundTrip(b, good, 2);
            assertEquals(before + 1, MeterReadings.of(b.gateway.metrics()).decodeErrors("invalid_json"), 0.0);
        }
    }

    private static void roundTrip(BrokerBehindGateway b, RawClient client, int opaque) throws Exception {
        client.send(Wire.request(ClientFrames.GET_MAX_OFFSET).opaque(opaque).ext("topic", "T").ext("queueId", "0").bytes());
        Wire.Frame answer = client.read();
        assertEquals(opaque, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code());
    }
}
