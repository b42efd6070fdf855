package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** An upstream that is connected but misbehaves: silent, hanging up mid-request; and oneway requests. */
class UpstreamFailureTest {

    /** A code the scripted name server never answers. */
    private static final int UNANSWERED = 4242;
    /** A code the scripted name server answers at once. */
    private static final int ANSWERED = 4243;
    /** A code on which the scripted name server closes the connection. */
    private static final int HANG_UP = 4244;
    /** A code the scripted name server answers with bytes that are no remoting frame. */
    private static final int GARBAGE = 4245;
    private static final Duration REQUEST_TIMEOUT = Duration.ofMillis(300);

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private TestGateway gateway;
    private ScriptedPeer namesrv;

    private void start() throws Exception {
        namesrv = resources.add(ScriptedPeer.start((c, f) -> {
            if (f.isResponse()) {
                return;
            }
            switch (f.code()) {
                case ANSWERED -> c.send(Wire.response(Wire.SUCCESS, f.opaque()).type(f.serializeType())
                    .remark("answered " + f.opaque()).bytes());
                case HANG_UP -> c.close();
                case GARBAGE -> c.send(Wire.rawFrame(0, Wire.utf8("{\"code\":0,\"flag\":1,\"opaque\":"), new byte[0]));
                default -> {
                    // UNANSWERED and oneway requests: silence
                }
            }
        }));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address())
            .requestTimeout(REQUEST_TIMEOUT).start());
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void silentUpstreamGetsSystemBusyAfterTheRequestTimeoutAndTheLateAnswerIsDropped(SerializeType type) throws Exception {
        start();
        try (RawClient client = RawClient.connect(gateway.port())) {
            long sent = System.nanoTime();
            client.send(Wire.request(UNANSWERED).opaque(31).type(type).bytes());
            ScriptedPeer.Received atUpstream = namesrv.awaitFrame(f -> f.code() == UNANSWERED, RawClient.WAIT);

            Wire.Frame busy = client.read();
            long waitedMillis = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(busy.isResponse(), busy.toString());
            assertEquals(31, busy.opaque());
            assertEquals(Wire.SYSTEM_BUSY, busy.code());
            assertEquals(type.getCode(), busy.serializeTypeByte(), "answered in the request's encoding");
            assertTrue(busy.remark().contains(namesrv.address()), "remark names the upstream: " + busy.remark());
            assertTrue(busy.remark().contains(String.valueOf(UNANSWERED)), "remark names the code: " + busy.remark());
            assertTrue(waitedMillis >= REQUEST_TIMEOUT.toMillis(), "answered after the timeout, not before: " + waitedMillis);
            assertEquals(1.0, MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.TIMEOUT));

            // the upstream answers late; then a fresh request is answered at once
            atUpstream.connection().send(Wire.response(Wire.SUCCESS, 31).type(type).remark("too late").bytes());
            client.send(Wire.request(ANSWERED).opaque(32).type(type).bytes());
            Wire.Frame next = client.read();
            assertEquals(32, next.opaque(), "the late answer to opaque 31 was dropped, next frame: " + next);
            assertEquals("answered 32", next.remark());
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void upstreamClosingWithARequestPendingAnswersSystemErrorThenClosesTheClient(SerializeType type) throws Exception {
        start();
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(HANG_UP).opaque(77).type(type).bytes());
            Wire.Frame error = client.read();
            assertTrue(error.isResponse(), error.toString());
            assertEquals(77, error.opaque());
            assertEquals(Wire.SYSTEM_ERROR, error.code());
            assertEquals(type.getCode(), error.serializeTypeByte());
            assertTrue(error.remark().contains(namesrv.address()), "remark names the upstream: " + error.remark());
            client.assertClosedBy();
        }
        assertEquals(1.0, MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.CONNECTION_LOST));
    }

    @Test
    void malformedUpstreamAnswerIsCountedAndThePendingRequestGetsSystemError() throws Exception {
        start();
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(GARBAGE).opaque(88).bytes());
            Wire.Frame error = client.read();
            assertEquals(88, error.opaque());
            assertEquals(Wire.SYSTEM_ERROR, error.code());
            assertTrue(error.remark().contains(namesrv.address()), "remark names the upstream: " + error.remark());
            client.assertClosedBy();
        }
        assertEquals(1.0, MeterReadings.of(gateway.metrics()).decodeErrors("invalid_json"));
    }

    @Test
    void everyPendingRequestIsAnsweredWhenTheUpstreamCloses() throws Exception {
        start();
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(UNANSWERED).opaque(1).bytes());
            client.send(Wire.request(UNANSWERED).opaque(2).type(SerializeType.ROCKETMQ).bytes());
            namesrv.awaitFrame(f -> f.opaque() == 2, RawClient.WAIT);
            client.send(Wire.request(HANG_UP).opaque(3).bytes());

            List<Integer> opaques = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Wire.Frame f = client.read();
                assertEquals(Wire.SYSTEM_ERROR, f.code(), f.toString());
                assertEquals(f.opaque() == 2 ? 1 : 0, f.serializeTypeByte(), "each in its request's encoding: " + f);
                opaques.add(f.opaque());
            }
            opaques.sort(null);
            assertEquals(List.of(1, 2, 3), opaques);
            client.assertClosedBy();
        }
    }

    @Test
    void clientClosingClosesItsUpstreamConnection() throws Exception {
        start();
        ScriptedPeer.Connection upstream;
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(UNANSWERED).opaque(9).bytes());
            upstream = namesrv.awaitFrame(f -> f.opaque() == 9, RawClient.WAIT).connection();
        }
        ScriptedPeer.Connection u = upstream;
        TestGateway.await(u::isClosed, RawClient.WAIT, "the gateway closing the upstream connection");
    }

    @Test
    void onewayRequestsAreForwardedAndNeverAnswered() throws Exception {
        start();
        try (RawClient client = RawClient.connect(gateway.port())) {
            byte[] oneway = Wire.request(UNANSWERED).opaque(50).oneway().ext("k", "v").bytes();
            client.send(oneway);
            ScriptedPeer.Received got = namesrv.awaitFrame(f -> f.opaque() == 50, RawClient.WAIT);
            assertArrayEquals(oneway, got.frame().bytes(), "forwarded unchanged");
            assertTrue(got.frame().isOneway());

            // a sentinel sent after it times out: once its SYSTEM_BUSY is here, the oneway's deadline has passed too
            client.send(Wire.request(UNANSWERED).opaque(51).bytes());
            List<Wire.Frame> seen = client.readUntil(f -> f.opaque() == 51, RawClient.WAIT);
            assertEquals(Wire.SYSTEM_BUSY, seen.get(seen.size() - 1).code());
            // anything written by that timeout scan precedes the answer to a request sent now
            client.send(Wire.request(ANSWERED).opaque(52).bytes());
            seen = new ArrayList<>(seen);
            seen.addAll(client.readUntil(f -> f.opaque() == 52, RawClient.WAIT));
            assertFalse(seen.stream().anyMatch(f -> f.opaque() == 50), "the oneway request got an answer: " + seen);
            assertEquals(1.0, MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.TIMEOUT), "only the sentinel timed out");
        }
    }
}
