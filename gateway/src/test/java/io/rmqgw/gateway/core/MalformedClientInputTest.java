package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Input that cannot be a remoting frame closes that connection only: the decode-error counter for
 * the reason goes up once, and another client on the same gateway carries on.
 */
class MalformedClientInputTest {

    private static final int MAX_FRAME = 64 * 1024;
    private static final int CODE = 4300;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private TestGateway gateway;
    private ScriptedPeer namesrv;

    @BeforeEach
    void start() throws Exception {
        namesrv = resources.add(ScriptedPeer.start(ScriptedPeer.Script.ECHO));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).maxFrameLength(MAX_FRAME).start());
    }

    static Stream<Arguments> malformed() {
        byte[] binaryHeaderTooShort = new byte[10];
        ByteBuffer remarkPastHeader = ByteBuffer.allocate(21);
        remarkPastHeader.putShort((short) CODE).put((byte) 0).putShort((short) 453).putInt(9).putInt(0).putInt(1000).putInt(0);
        byte[] oversizedPrefix = ByteBuffer.allocate(16).putInt(MAX_FRAME + 1).putInt(0x00000010).array();
        byte[] fullOversized = Wire.request(CODE).body(new byte[MAX_FRAME]).bytes();
        return Stream.of(
            Arguments.of("HTTP request", "not_remoting", Wire.utf8("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")),
            Arguments.of("negative length garbage", "bad_length", new byte[] {
                (byte) 0xFF, (byte) 0xFE, (byte) 0xFD, (byte) 0xFC, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
            Arguments.of("length too short for a header length", "bad_length", new byte[] {0, 0, 0, 2, 0, 0}),
            Arguments.of("length prefix over max-frame-length", "frame_too_long", oversizedPrefix),
            Arguments.of("whole frame over max-frame-length", "frame_too_long", fullOversized),
            Arguments.of("header length past the frame", "header_past_frame",
                ByteBuffer.allocate(12).putInt(8).putInt(500).putInt(0).array()),
            Arguments.of("binary header shorter than its fixed fields", "truncated_binary_field",
                Wire.rawFrame(1, binaryHeaderTooShort, new byte[0])),
            Arguments.of("binary remark length past the header", "truncated_binary_field",
                Wire.rawFrame(1, remarkPastHeader.array(), new byte[0])),
            Arguments.of("invalid JSON header", "invalid_json",
                Wire.rawFrame(0, Wire.utf8("{\"code\":" + CODE + ",\"opaque\":"), new byte[0])),
            Arguments.of("JSON header that is not an object", "invalid_json",
                Wire.rawFrame(0, Wire.utf8("[1,2,3]"), new byte[0])),
            Arguments.of("JSON header without code", "missing_field",
                Wire.rawFrame(0, Wire.utf8("{\"opaque\":1,\"flag\":0}"), new byte[0])),
            Arguments.of("unknown serialize type", "unknown_serialize_type",
                Wire.rawFrame(7, Wire.utf8("{\"code\":" + CODE + "}"), new byte[0])));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedInputClosesOnlyThatConnection(String what, String reason, byte[] input) throws Exception {
        try (RawClient good = RawClient.connect(gateway.port()); RawClient bad = RawClient.connect(gateway.port())) {
            roundTrip(good, 1);
            double before = MeterReadings.of(gateway.metrics()).decodeErrors(reason);
            double totalBefore = totalDecodeErrors();

            try {
                bad.send(input);
            } catch (IOException e) {
                // the gateway may hang up (reset) before a large write is through: that is the point
            }
            bad.assertClosedBy();
            TestGateway.await(() -> MeterReadings.of(gateway.metrics()).decodeErrors(reason) >= before + 1, RawClient.WAIT,
                "decode error " + reason + " counted");

            roundTrip(good, 2);
            try (RawClient another = RawClient.connect(gateway.port())) {
                roundTrip(another, 3);
            }
            assertEquals(before + 1, MeterReadings.of(gateway.metrics()).decodeErrors(reason),
                "one malformed connection counts one decode error for " + reason);
            assertEquals(totalBefore + 1, totalDecodeErrors(), "one malformed connection counts one decode error in all");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedInputAfterAGoodFrameInTheSameWriteStillGetsTheGoodFrameAnswered(String what, String reason, byte[] input)
        throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            roundTrip(client, 1);
            double closedBefore = MeterReadings.of(gateway.metrics()).connectionsClosed("namesrv", CloseReason.MALFORMED_FRAME);
            client.send(concat(Wire.request(CODE).opaque(2).bytes(), Wire.request(CODE).opaque(3).bytes(), input));

            Wire.Frame first = client.read(RawClient.WAIT);
            Wire.Frame second = client.read(RawClient.WAIT);
            assertEquals(List.of(2, 3), List.of(first.opaque(), second.opaque()), "both requests before the bad bytes answered");
            assertEquals(Wire.SUCCESS, second.code());
            client.assertClosedBy();
            assertEquals(1, MeterReadings.of(gateway.metrics()).decodeErrors(reason), "counted once");
            assertEquals(closedBefore + 1, MeterReadings.of(gateway.metrics()).connectionsClosed("namesrv", CloseReason.MALFORMED_FRAME));
        }
    }

    @Test
    void theConnectionStaysOpenUntilASlowUpstreamAnswersWhatCameBeforeTheBadBytes() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        namesrv.script((c, f) -> {
            if (f.opaque() == 7) {
                release.await(10, TimeUnit.SECONDS);
            }
            ScriptedPeer.Script.ECHO.onFrame(c, f);
        });
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(concat(Wire.request(CODE).opaque(7).bytes(), Wire.utf8("GET / HTTP/1.1\r\n\r\n")));
            namesrv.awaitFrame(f -> f.opaque() == 7, RawClient.WAIT);
            TestGateway.await(() -> MeterReadings.of(gateway.metrics()).decodeErrors("not_remoting") >= 1, RawClient.WAIT,
                "decode error counted");
            client.send(Wire.request(CODE).opaque(8).bytes()); // after the bad bytes: read and discarded
            release.countDown();

            Wire.Frame answer = client.read(RawClient.WAIT);
            assertEquals(7, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code());
            client.assertClosedBy();
            assertEquals(List.of(), namesrv.drainReceived().stream().filter(r -> r.frame().opaque() == 8).toList(),
                "nothing after the bad bytes is relayed");
        }
    }

    @Test
    void aRequestTheUpstreamNeverAnswersGetsItsTimeoutAnswerThenTheClose() throws Exception {
        namesrv.script(ScriptedPeer.Script.SILENT);
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(concat(Wire.request(CODE).opaque(9).bytes(), new byte[] {0, 0, 0, 2, 0, 0}));
            Wire.Frame answer = client.read(RawClient.WAIT);
            assertEquals(9, answer.opaque());
            assertTrue(answer.code() == Wire.SYSTEM_BUSY || answer.code() == Wire.SYSTEM_ERROR, "an error: " + answer.code());
            client.assertClosedBy();
        }
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            all.writeBytes(p);
        }
        return all.toByteArray();
    }

    private double totalDecodeErrors() {
        double total = 0;
        for (MalformedReason r : MalformedReason.values()) {
            total += MeterReadings.of(gateway.metrics()).decodeErrors(r.label());
        }
        return total;
    }

    private void roundTrip(RawClient client, int opaque) throws Exception {
        client.send(Wire.request(CODE).opaque(opaque).bytes());
        Wire.Frame answer = client.read(Duration.ofSeconds(5));
        assertEquals(opaque, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code());
    }
}
