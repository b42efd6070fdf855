package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Half-sent frames: what all client connections hold in frames not yet whole stays within
 * {@code downstream.incomplete-frame-budget} (the connection whose read would pass it is closed and
 * counted), a frame over {@code downstream.max-incomplete-frame-bytes} is refused when its length
 * arrives, stalled connections go at the frame timeout and give their bytes back, and a healthy client
 * is served throughout.
 */
class IncompleteFrameBudgetTest {

    private static final int CODE = 4300;
    private static final int PART = 100 * 1024;
    private static final long BUDGET = 5L * PART / 2; // two and a half partial frames
    private static final String ROLE = "namesrv";

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer namesrv;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        namesrv = resources.add(ScriptedPeer.start(ScriptedPeer.Script.ECHO));
    }

    private static byte[] largeFrame(int opaque) {
        return Wire.request(CODE).opaque(opaque).body(new byte[4 * PART]).bytes();
    }

    private void roundTrip(RawClient client, int opaque) throws IOException {
        client.send(Wire.request(CODE).opaque(opaque).bytes());
        Wire.Frame answer = client.read(RawClient.WAIT);
        assertEquals(opaque, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code());
    }

    @Test
    void halfSentFramesStayWithinTheBudgetThenGoAtTheFrameTimeout() throws Exception {
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).maxFrameLength(1024 * 1024)
            .clientTimeouts(Duration.ZERO, Duration.ofSeconds(2)).incompleteFrames(1024 * 1024, BUDGET).start());
        List<RawClient> stalled = new ArrayList<>();
        try (RawClient healthy = RawClient.connect(gateway.port())) {
            roundTrip(healthy, 1);
            for (int i = 0; i < 4; i++) {
                RawClient c = RawClient.connect(gateway.port());
                stalled.add(c);
                c.send(Arrays.copyOf(largeFrame(10 + i), PART));
                long expected = Math.min(BUDGET / PART, i + 1) * PART;
                TestGateway.await(() -> MeterReadings.of(gateway.metrics()).incompleteFrameBytes() == expected
                    || MeterReadings.of(gateway.metrics()).connectionsClosed(ROLE, CloseReason.INCOMPLETE_FRAME_BUDGET) > 0,
                    RawClient.WAIT, "partial frame " + i + " held");
                assertTrue(MeterReadings.of(gateway.metrics()).incompleteFrameBytes() <= BUDGET);
            }
            // two fit whole; the third's read passes the budget half way: that connection is closed
            TestGateway.await(() -> MeterReadings.of(gateway.metrics()).connectionsClosed(ROLE, CloseReason.INCOMPLETE_FRAME_BUDGET) == 2,
                RawClient.WAIT, "the connections over the budget closed");
            assertEquals(2 * PART, MeterReadings.of(gateway.metrics()).incompleteFrameBytes());
            stalled.get(2).assertClosedBy();
            stalled.get(3).assertClosedBy();
            roundTrip(healthy, 2);

            // the two within the budget stall: the frame timeout closes them and they give their bytes back
            stalled.get(0).assertClosedBy(Duration.ofSeconds(5));
            stalled.get(1).assertClosedBy(Duration.ofSeconds(5));
            TestGateway.await(() -> MeterReadings.of(gateway.metrics()).incompleteFrameBytes() == 0, RawClient.WAIT, "all given back");
            assertEquals(2, MeterReadings.of(gateway.metrics()).connectionsClosed(ROLE, CloseReason.FRAME_TIMEOUT));
            roundTrip(healthy, 3);

            // with room again, a frame that fits the budget goes through
            try (RawClient whole = RawClient.connect(gateway.port())) {
                whole.send(Wire.request(CODE).opaque(4).body(new byte[2 * PART]).bytes());
                assertEquals(4, whole.read(RawClient.WAIT).opaque());
            }
            assertEquals(0, MeterReadings.of(gateway.metrics()).incompleteFrameBytes());
        } finally {
            stalled.forEach(RawClient::close);
        }
    }

    @Test
    void aFrameOverTheConnectionBoundIsRefusedWhenItsLengthArrives() throws Exception {
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).maxFrameLength(1024 * 1024)
            .incompleteFrames(2 * PART, BUDGET).start());
        try (RawClient healthy = RawClient.connect(gateway.port()); RawClient big = RawClient.connect(gateway.port())) {
            big.send(Arrays.copyOf(largeFrame(5), 16)); // the length alone: 400 KiB > 200 KiB
            big.assertClosedBy();
            assertEquals(1, MeterReadings.of(gateway.metrics()).decodeErrors("frame_too_long"));
            assertEquals(0, MeterReadings.of(gateway.metrics()).incompleteFrameBytes(), "nothing buffered for it");
            roundTrip(healthy, 1);
            // a frame within the bound is served
            healthy.send(Wire.request(CODE).opaque(2).body(new byte[PART]).bytes());
            assertEquals(2, healthy.read(RawClient.WAIT).opaque());
        }
    }
}
