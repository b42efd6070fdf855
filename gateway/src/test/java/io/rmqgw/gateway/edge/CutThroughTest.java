package io.rmqgw.gateway.edge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Large sends stream through the gateway: the head goes upstream (re-encoded, its length the whole frame's)
 * before the body has arrived. The gateway stores at most 64 KiB of a frame whole here, so a 1 MiB send that
 * reaches the broker intact cannot have been stored whole.
 */
class CutThroughTest {

    private static final int WHOLE_LIMIT = 64 * 1024;
    private static final int BODY = 1024 * 1024;
    private static final int MAX_FRAME = 16 * 1024 * 1024;

    private static BrokerBehindGateway start() throws Exception {
        return BrokerBehindGateway.start(o -> o.headerEncoding(HeaderEncoding.ROCKETMQ)
            .names(new NamesConfig(true, null, null, null)).maxFrameLength(MAX_FRAME)
            .incompleteFrames(WHOLE_LIMIT, 64L * 1024 * 1024));
    }

    private static ClientFrames.Spec send(byte[] body) {
        ClientFrames.Spec s = ClientFrames.sendV2();
        return new ClientFrames.Spec(s.name(), s.code(), s.opaque(), false, s.version(), s.language(), s.remark(),
            s.ext(), body);
    }

    private static byte[] encoded(ClientFrames.Spec spec, SerializeType type) {
        return type == SerializeType.JSON ? spec.json() : spec.encoded(type);
    }

    private static int headLength(byte[] frame) {
        return 8 + (ByteBuffer.wrap(frame).getInt(4) & 0xFFFFFF);
    }

    /** Sends the frame's first bytes, then its header but one byte, then the rest in reads of 16 KiB. */
    private static void sendInPieces(RawClient client, byte[] frame, int upTo) throws Exception {
        int head = headLength(frame);
        int[] cuts = {3, head - 1, head + 100};
        int from = 0;
        for (int cut : cuts) {
            client.send(Arrays.copyOfRange(frame, from, cut));
            from = cut;
        }
        for (; from < upTo; from += 16 * 1024) {
            client.send(Arrays.copyOfRange(frame, from, Math.min(upTo, from + 16 * 1024)));
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void aLargeSendReachesTheBrokerByteExactWithItsHeaderReencoded(SerializeType clientEncoding) throws Exception {
        try (BrokerBehindGateway b = start(); RawClient client = b.connect()) {
            b.broker.awaitDialBy(client, RawClient.WAIT);
            // the same send with a small body, stored whole: its head at the broker is what the large one's must be
            client.send(encoded(send(new byte[10]), clientEncoding));
            byte[] smallAtBroker = b.broker.awaitFrame(f -> f.code() == ClientFrames.SEND_MESSAGE_V2, RawClient.WAIT)
                .frame().bytes();
            assertEquals(Wire.SUCCESS, client.read().code());

            byte[] body = new byte[BODY];
            new Random(42).nextBytes(body);
            byte[] large = encoded(send(body), clientEncoding);
            sendInPieces(client, large, large.length);
            byte[] atBroker = b.broker.awaitFrame(f -> f.code() == ClientFrames.SEND_MESSAGE_V2, RawClient.WAIT)
                .frame().bytes();

            int head = headLength(smallAtBroker);
            ByteBuffer expected = ByteBuffer.allocate(head + BODY);
            expected.putInt(head - 4 + BODY).put(smallAtBroker, 4, head - 4).put(body);
            assertArrayEquals(expected.array(), atBroker, "prefix with the whole frame's length, ROCKETMQ header, body");
            assertEquals(SerializeType.ROCKETMQ, Wire.parse(atBroker).serializeType());
            Wire.Frame answer = client.read();
            assertEquals(Wire.SUCCESS, answer.code());
            assertEquals(ClientFrames.sendV2().opaque(), answer.opaque());
            assertEquals(0, MeterReadings.of(b.gateway.metrics()).decodeErrors("frame_too_long"), 0.0);
            assertEquals(1, MeterReadings.of(b.gateway.metrics()).framesStreamed(), 0.0,
                "the small send is stored whole, the large streamed");
        }
    }

    @Test
    void aLargeUnknownCodePassesThroughByteForByte() throws Exception {
        try (BrokerBehindGateway b = BrokerBehindGateway.start(o -> o.maxFrameLength(MAX_FRAME)
            .incompleteFrames(WHOLE_LIMIT, 64L << 20));
             RawClient client = b.connect()) {
            // a connection's first request waits for the dial and is stored whole; this one follows it
            b.broker.awaitDialBy(client, SerializeType.ROCKETMQ, RawClient.WAIT);
            byte[] body = new byte[300 * 1024];
            new Random(7).nextBytes(body);
            byte[] frame = Wire.request(ClientFrames.UNKNOWN).opaque(77).type(SerializeType.ROCKETMQ)
                .ext("k", "v").body(body).bytes();
            sendInPieces(client, frame, frame.length);
            assertArrayEquals(frame, b.broker.awaitFrame(f -> f.code() == ClientFrames.UNKNOWN, RawClient.WAIT)
                .frame().bytes());
            assertEquals(77, client.read().opaque());
            assertEquals(1, MeterReadings.of(b.gateway.metrics()).framesStreamed(), 0.0);
        }
    }

    @Test
    void anUpstreamLostMidBodyAnswersTheRequestWithAnErrorAndClosesTheClient() throws Exception {
        try (BrokerBehindGateway b = start(); RawClient client = b.connect()) {
            ScriptedPeer.Connection upstream = b.broker.awaitDialBy(client, SerializeType.ROCKETMQ, RawClient.WAIT);
            byte[] large = encoded(send(new byte[BODY]), SerializeType.JSON);
            sendInPieces(client, large, large.length / 2);
            awaitHeadForwarded(b);
            upstream.close();
            Wire.Frame answer = client.read();
            assertEquals(Wire.SYSTEM_ERROR, answer.code());
            assertEquals(ClientFrames.sendV2().opaque(), answer.opaque());
            assertTrue(answer.remark().contains("closed before answering request code 310"), answer.remark());
            client.assertClosedBy();
            assertEquals(1, MeterReadings.of(b.gateway.metrics()).connectionsClosed(GatewayMetrics.BROKER, CloseReason.UPSTREAM_CLOSED),
                0.0);
        }
    }

    @Test
    void aClientGoneMidBodyClosesTheUpstreamThatHoldsHalfAFrame() throws Exception {
        try (BrokerBehindGateway b = start()) {
            ScriptedPeer.Connection upstream;
            try (RawClient client = b.connect()) {
                upstream = b.broker.awaitDialBy(client, SerializeType.ROCKETMQ, RawClient.WAIT);
                byte[] large = encoded(send(new byte[BODY]), SerializeType.JSON);
                sendInPieces(client, large, large.length / 2);
                awaitHeadForwarded(b);
            }
            Await.until("the upstream holding half a frame closed", RawClient.WAIT, upstream::isClosed);
            assertTrue(b.broker.drainReceived().isEmpty(), "the broker never received a whole frame");
        }
    }

    /** The large send's head was converted JSON -> ROCKETMQ, so it went upstream with its body to follow. */
    private static void awaitHeadForwarded(BrokerBehindGateway b) throws InterruptedException {
        Await.until("the head forwarded", RawClient.WAIT,
            () -> MeterReadings.of(b.gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ) >= 1);
    }
}
