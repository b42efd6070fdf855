package io.rmqgw.gateway.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.message.BatchBody;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.gateway.ReloadResult;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.edge.BrokerBehindGateway;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Coalescing through a real gateway in front of a scripted broker that holds its answers: sends that arrive
 * while a queue's batches are in flight go together once one is answered, up to max-in-flight batches of a queue
 * go out at once on one connection in order, each client gets its own id, offset and opaque in its own header
 * encoding, and an error answer or a lost connection reaches every send of its batch.
 */
class CoalescingRelayTest {

    private static final String TOPIC = "Orders";
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** One batch per queue at a time: the next waits for the answer to the previous. */
    private static final CoalescingConfig ONE_IN_FLIGHT = new CoalescingConfig(List.of(TOPIC), null, null, null, 1);

    private BrokerBehindGateway b;
    private GatewayMetrics metrics;

    @BeforeEach
    void start() throws Exception {
        b = BrokerBehindGateway.start(o -> o.coalescing(ONE_IN_FLIGHT));
        // the broker holds every batch: the test answers them itself
        b.answers.set(f -> f.code() == RequestCode.SEND_BATCH_MESSAGE ? null : BrokerBehindGateway.SUCCESS_IN_KIND.apply(f));
        metrics = b.gateway.metrics();
    }

    @AfterEach
    void stop() {
        b.close();
    }

    private static byte[] send(int opaque, SerializeType type, String key, String extraProperties) {
        return send(opaque, type, key, extraProperties, 2);
    }

    private static byte[] send(int opaque, SerializeType type, String key, String extraProperties, int queueId) {
        String props = "KEYS\u0001" + key + "\u0002UNIQ_KEY\u0001U" + key + "\u0002WAIT\u0001true\u0002" + extraProperties;
        return Wire.request(RequestCode.SEND_MESSAGE_V2).opaque(opaque).type(type).ext("a", "pg").ext("b", TOPIC)
            .ext("c", "TBW102").ext("d", "4").ext("e", Integer.toString(queueId)).ext("f", "0").ext("g", "1700000000000").ext("h", "0")
            .ext("i", props).ext("j", "0").ext("k", "false").body("body of " + key).bytes();
    }

    /** An offsetMsgId of the scripted broker's store host. */
    private String brokerId(long offset) {
        return MessageIds.create(0x7F000001, b.broker.port(), offset);
    }

    /** The same id as the gateway rewrites it: its port for the broker. */
    private String gatewayId(long offset) {
        return MessageIds.create(0x7F000001, b.port(), offset);
    }

    private ScriptedPeer.Received nextBatch() throws InterruptedException {
        return b.broker.awaitFrame(f -> f.code() == RequestCode.SEND_BATCH_MESSAGE, WAIT);
    }

    private static void answer(ScriptedPeer.Received batch, byte[] frame) throws Exception {
        batch.connection().send(frame);
    }

    private void awaitTaken(double count) {
        io.rmqgw.gateway.testing.TestGateway.await(() -> MeterReadings.of(metrics).coalesceSendsCount("coalesced") >= count, WAIT,
            count + " sends taken by the coalescer");
    }

    /** The keys of a batch body's messages, in order. */
    private static List<String> keys(Wire.Frame batch) {
        ByteBuf body = Unpooled.wrappedBuffer(batch.body());
        return BatchBody.read(body).stream().map(e -> {
            String props = body.toString(e.propertiesIndex(), e.propertiesLength(), StandardCharsets.UTF_8);
            return props.substring(props.indexOf("KEYS\u0001") + 5, props.indexOf('\u0002'));
        }).toList();
    }

    @Test
    void sendsWaitingForTheBatchInFlightGoTogetherAndEachClientGetsItsOwnAnswerInItsDialect() throws Exception {
        try (RawClient a = b.connect(); RawClient json = b.connect(); RawClient binary = b.connect()) {
            a.send(send(11, SerializeType.ROCKETMQ, "a", ""));
            ScriptedPeer.Received first = nextBatch();
            assertEquals(List.of("a"), keys(first.frame()), "an idle queue: at once, alone");
            assertEquals(TOPIC, first.frame().ext().get("b"));
            assertEquals("2", first.frame().ext().get("e"));
            assertEquals("1700000000000", first.frame().ext().get("g"), "the first message's born timestamp");

            json.send(send(22, SerializeType.JSON, "b", "color\u0001red\u0002"));
            awaitTaken(2);
            binary.send(send(33, SerializeType.ROCKETMQ, "c", ""));
            awaitTaken(3);
            answer(first, Wire.response(Wire.SUCCESS, first.frame().opaque()).ext("msgId", brokerId(1000))
                .ext("queueId", "2").ext("queueOffset", "100").bytes());
            Wire.Frame toA = a.read();
            assertEquals(11, toA.opaque());
            assertEquals(Wire.SUCCESS, toA.code());
            assertEquals(gatewayId(1000), toA.ext().get("msgId"), "the id leads to the gateway");
            assertEquals("100", toA.ext().get("queueOffset"));

            ScriptedPeer.Received second = nextBatch();
            assertEquals(List.of("b", "c"), keys(second.frame()), "the waiting sends, in arrival order");
            String body = new String(second.frame().body(), StandardCharsets.ISO_8859_1);
            assertTrue(body.contains("color\u0001red\u0002") && body.contains("body of b"), "each message as sent");
            answer(second, Wire.response(Wire.SUCCESS, second.frame().opaque())
                .ext("msgId", brokerId(2000) + "," + brokerId(2100)).ext("queueId", "2").ext("queueOffset", "200")
                .ext("MSG_REGION", "DefaultRegion").bytes());
            Wire.Frame toB = json.read();
            assertEquals(SerializeType.JSON, toB.serializeType(), "a JSON client's answer in JSON");
            assertEquals(22, toB.opaque());
            assertEquals(gatewayId(2000), toB.ext().get("msgId"));
            assertEquals("200", toB.ext().get("queueOffset"));
            assertEquals("2", toB.ext().get("queueId"));
            assertEquals("DefaultRegion", toB.ext().get("MSG_REGION"), "the broker's other answer fields");
            Wire.Frame toC = binary.read();
            assertEquals(SerializeType.ROCKETMQ, toC.serializeType());
            assertEquals(33, toC.opaque());
            assertEquals(gatewayId(2100), toC.ext().get("msgId"));
            assertEquals("201", toC.ext().get("queueOffset"), "base + index");
        }
        assertEquals(2, MeterReadings.of(metrics).coalesceBatchCount());
        assertEquals(3.0, MeterReadings.of(metrics).coalesceBatchMessagesTotal());
        assertEquals(2.0, MeterReadings.of(metrics).coalesceBatchesCount("stored"));
    }

    @Test
    void upToMaxInFlightBatchesOfAQueueGoAtOnceOnOneConnectionInOrderAnsweredInAnyOrder() throws Exception {
        io.rmqgw.gateway.Gateway gw = b.gateway.gateway();
        ReloadResult two = gw.reload(gw.config().withCoalescing(new CoalescingConfig(List.of(TOPIC), null, null, null, 2)));
        assertEquals(List.of("coalescing"), two.applied(), "max-in-flight is reloaded");
        try (RawClient a = b.connect(); RawClient c1 = b.connect(); RawClient c2 = b.connect();
             RawClient other = b.connect()) {
            a.send(send(1, SerializeType.ROCKETMQ, "a", ""));
            ScriptedPeer.Received first = nextBatch();
            c1.send(send(2, SerializeType.JSON, "b", ""));
            ScriptedPeer.Received second = nextBatch();
            assertEquals(List.of("b"), keys(second.frame()), "a second slot: b does not wait for a's answer");
            assertEquals(first.connection().id(), second.connection().id(), "the one pooled connection to the broker");
            assertTrue(second.frame().opaque() > first.frame().opaque(), "written in the order taken");

            c2.send(send(3, SerializeType.ROCKETMQ, "c", ""));
            awaitTaken(3);
            // queue 3 has a lane of its own on the same connection and event loop: had c gone, it would be first
            other.send(send(4, SerializeType.ROCKETMQ, "d", "", 3));
            ScriptedPeer.Received queue3 = nextBatch();
            assertEquals(List.of("d"), keys(queue3.frame()), "c waits: both slots of queue 2 are taken");
            assertEquals("3", queue3.frame().ext().get("e"));
            answer(queue3, Wire.response(Wire.SUCCESS, queue3.frame().opaque()).ext("msgId", brokerId(4000))
                .ext("queueId", "3").ext("queueOffset", "40").bytes());
            assertEquals("40", other.read().ext().get("queueOffset"));

            // the broker answers the second batch first (several send threads): its slot goes to c
            answer(second, Wire.response(Wire.SUCCESS, second.frame().opaque()).ext("msgId", brokerId(2000))
                .ext("queueId", "2").ext("queueOffset", "200").bytes());
            Wire.Frame toB = c1.read();
            assertEquals(SerializeType.JSON, toB.serializeType());
            assertEquals(2, toB.opaque());
            assertEquals(gatewayId(2000), toB.ext().get("msgId"));
            ScriptedPeer.Received third = nextBatch();
            assertEquals(List.of("c"), keys(third.frame()));
            assertTrue(third.frame().opaque() > second.frame().opaque());

            answer(first, Wire.response(Wire.SUCCESS, first.frame().opaque()).ext("msgId", brokerId(1000))
                .ext("queueId", "2").ext("queueOffset", "100").bytes());
            Wire.Frame toA = a.read();
            assertEquals(1, toA.opaque());
            assertEquals("100", toA.ext().get("queueOffset"));
            answer(third, Wire.response(Wire.SUCCESS, third.frame().opaque()).ext("msgId", brokerId(3000))
                .ext("queueId", "2").ext("queueOffset", "300").bytes());
            Wire.Frame toC = c2.read();
            assertEquals(3, toC.opaque());
            assertEquals(gatewayId(3000), toC.ext().get("msgId"));
            assertEquals("300", toC.ext().get("queueOffset"));
        }
        assertEquals(4.0, MeterReadings.of(metrics).coalesceBatchesCount("stored"));
    }

    @Test
    void anErrorAnswerReachesEverySendOfTheBatchAndALostConnectionFailsTheBatchInFlight() throws Exception {
        try (RawClient a = b.connect(); RawClient c1 = b.connect(); RawClient c2 = b.connect()) {
            a.send(send(1, SerializeType.ROCKETMQ, "a", ""));
            ScriptedPeer.Received first = nextBatch();
            c1.send(send(2, SerializeType.ROCKETMQ, "b", ""));
            awaitTaken(2);
            c2.send(send(3, SerializeType.JSON, "c", ""));
            awaitTaken(3);
            // the pooled connection drops with the first batch in flight: its send fails, the waiting ones go next
            first.connection().close();
            Wire.Frame lost = a.read();
            assertEquals(1, lost.opaque());
            assertEquals(Wire.SYSTEM_ERROR, lost.code(), lost.toString());
            assertTrue(lost.remark().contains("a coalesced batch of 1 send"), lost.remark());

            ScriptedPeer.Received second = nextBatch();
            assertEquals(List.of("b", "c"), keys(second.frame()));
            answer(second, Wire.response(16, second.frame().opaque()).remark("the topic[Orders] sending is forbidden")
                .bytes());
            for (RawClient c : List.of(c1, c2)) {
                Wire.Frame refused = c.read();
                assertEquals(16, refused.code(), refused.toString());
                assertEquals("the topic[Orders] sending is forbidden (a coalesced batch of 2 sends; none was stored)",
                    refused.remark());
            }
        }
        assertEquals(1.0, MeterReadings.of(metrics).coalesceBatchesCount("failed"));
        assertEquals(1.0, MeterReadings.of(metrics).coalesceBatchesCount("refused"));
    }

    @Test
    void aReloadTurnsCoalescingOffAndOnForTheNextSendOnAnOpenConnection() throws Exception {
        io.rmqgw.gateway.Gateway gw = b.gateway.gateway();
        try (RawClient client = b.connect()) {
            ReloadResult off = gw.reload(gw.config().withCoalescing(CoalescingConfig.NONE));
            assertEquals(List.of("coalescing"), off.applied());
            client.send(send(7, SerializeType.ROCKETMQ, "e", ""));
            Wire.Frame relayed = b.broker.awaitFrame(f -> f.code() == RequestCode.SEND_MESSAGE_V2, WAIT).frame();
            assertEquals(7, relayed.opaque(), "not coalesced: relayed as the client sent it");
            assertEquals(7, client.read().opaque());

            ReloadResult on = gw.reload(gw.config().withCoalescing(CoalescingConfig.of(TOPIC)));
            assertEquals(List.of("coalescing"), on.applied());
            client.send(send(8, SerializeType.ROCKETMQ, "f", ""));
            ScriptedPeer.Received batch = nextBatch();
            assertEquals(List.of("f"), keys(batch.frame()));
            answer(batch, Wire.response(Wire.SUCCESS, batch.frame().opaque()).ext("msgId", brokerId(3000))
                .ext("queueId", "2").ext("queueOffset", "7").bytes());
            Wire.Frame answered = client.read();
            assertEquals(8, answered.opaque());
            assertEquals("7", answered.ext().get("queueOffset"), answered.toString());
        }
        assertEquals(1.0, MeterReadings.of(metrics).coalesceSendsCount("coalesced"));
    }

    @Test
    void aSendTheBrokerWouldTreatDifferentlyInABatchGoesOnItsOwnConnectionAsItCame() throws Exception {
        b.answers.set(BrokerBehindGateway.SUCCESS_IN_KIND);
        try (RawClient client = b.connect()) {
            client.send(send(5, SerializeType.ROCKETMQ, "d", "DELAY\u00013\u0002"));
            Wire.Frame relayed = b.broker.awaitFrame(f -> f.code() == RequestCode.SEND_MESSAGE_V2, WAIT).frame();
            assertEquals(5, relayed.opaque(), "the client's own request, its own opaque");
            assertEquals(Wire.SUCCESS, client.read().code());
        }
        assertEquals(1.0, MeterReadings.of(metrics).coalescePassedThroughCount("delayed"));
        assertEquals(0.0, MeterReadings.of(metrics).coalesceSendsCount("coalesced"));
    }
}
