package io.rmqgw.gateway.namesrv;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A route request whose JSON header is well-formed JSON with a well-formed envelope but fields the
 * full header decoder refuses (an object where a string belongs). The name-server role decodes the
 * whole header of route requests only, so this is the one place such a header is read past its
 * envelope: it must close the connection like any malformed input, count it once, and leak nothing.
 * (This class fails in afterAll with a Netty leak report when the request frame is not released.)
 */
class MalformedRouteRequestTest {

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer namesrv;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        namesrv = resources.add(ScriptedPeer.start(
            Routes.nameServer(Map.of("TopicA", Map.of("broker-a", "127.0.0.1:1")))));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).start());
    }

    static Stream<Arguments> headers() {
        return Stream.of(
            Arguments.of("extFields value is an object",
                "{\"code\":105,\"flag\":0,\"opaque\":5,\"version\":453,\"extFields\":{\"topic\":\"TopicA\",\"x\":{\"y\":1}}}"),
            Arguments.of("extFields is an array",
                "{\"code\":105,\"flag\":0,\"opaque\":5,\"version\":453,\"extFields\":[\"topic\",\"TopicA\"]}"),
            Arguments.of("remark is an object",
                "{\"code\":105,\"flag\":0,\"opaque\":5,\"version\":453,\"remark\":{\"r\":1},\"extFields\":{\"topic\":\"TopicA\"}}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("headers")
    void routeRequestWithAnUndecodableHeaderClosesTheConnectionAndLeaksNothing(String what, String header) throws Exception {
        try (RawClient good = RawClient.connect(gateway.port()); RawClient bad = RawClient.connect(gateway.port())) {
            good.send(Routes.request("NoSuchTopic", 453).opaque(1).bytes());
            assertEquals(1, good.read().opaque());
            double before = MeterReadings.of(gateway.metrics()).decodeErrors("invalid_json");

            bad.send(Wire.rawFrame(0, Wire.utf8(header), new byte[0]));
            bad.assertClosedBy();
            TestGateway.await(() -> MeterReadings.of(gateway.metrics()).decodeErrors("invalid_json") >= before + 1, RawClient.WAIT,
                "the decode error counted");

            good.send(Routes.request("NoSuchTopic", 453).opaque(2).bytes());
            assertEquals(2, good.read().opaque());
            assertEquals(before + 1, MeterReadings.of(gateway.metrics()).decodeErrors("invalid_json"));
        }
    }
}
