package io.rmqgw.gateway.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * LITE_PULL_MESSAGE (361) to a broker older than 5.0.0 goes as PULL_MESSAGE (11), same header and fields: at once
 * once an answer told the broker's version, or, before that, sent again as 11 when the broker answers
 * REQUEST_CODE_NOT_SUPPORTED. A scripted broker plays 4.9.7 (version 407) or 5.x; LegacyLitePullIT runs a real one.
 */
class LitePullTranslationTest {

    private static final int V4_9_7 = MQVersion.Version.V4_9_7.ordinal();
    private static final int V5_4_0 = MQVersion.Version.V5_4_0.ordinal();
    private static final int REQUEST_CODE_NOT_SUPPORTED = 3;
    private static final int PULL_NOT_FOUND = 19;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;
    /** The version the scripted broker's answers carry, and whether it knows 361. */
    private volatile int brokerVersion;
    private volatile boolean knows361;
    private final List<Integer> silentCodes = new CopyOnWriteArrayList<>();

    private void start(int version, boolean serves361) throws Exception {
        brokerVersion = version;
        knows361 = serves361;
        ScriptedCluster cluster = ScriptedCluster.options().broker((c, f) -> {
            if (f.isResponse() || f.isOneway() || silentCodes.contains(f.code())) {
                return;
            }
            byte[] answer;
            if (f.code() == RequestCode.LITE_PULL_MESSAGE && !knows361) {
                // as a 4.9.7 broker's NettyRemotingAbstract answers a code without processor
                answer = Wire.response(REQUEST_CODE_NOT_SUPPORTED, f.opaque()).type(f.serializeType())
                    .version(brokerVersion).remark(" request type 361 not supported").bytes();
            } else if (f.code() == RequestCode.PULL_MESSAGE || f.code() == RequestCode.LITE_PULL_MESSAGE) {
                answer = Wire.response(PULL_NOT_FOUND, f.opaque()).type(f.serializeType()).version(brokerVersion)
                    .ext("suggestWhichBrokerId", "0").ext("nextBeginOffset", "5").ext("minOffset", "0")
                    .ext("maxOffset", "5").remark("answered code " + f.code()).bytes();
            } else {
                answer = Wire.response(Wire.SUCCESS, f.opaque()).type(f.serializeType()).version(brokerVersion)
                    .ext("offset", "5").bytes();
            }
            c.send(answer);
        }).gateway(g -> g.requestTimeout(Duration.ofMillis(500)).longPollTimeout(Duration.ofMillis(800))).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    private int brokerPort() {
        // the start's one discovery may time out on a loaded machine: ask again, as the gateway would
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!gateway.gateway().brokerListeners().containsKey(broker.address()) && System.nanoTime() < deadline) {
            gateway.gateway().discoverCluster();
        }
        return gateway.brokerPort(broker.address());
    }

    private static byte[] litePull(int opaque, SerializeType type) {
        return Wire.request(RequestCode.LITE_PULL_MESSAGE).opaque(opaque).type(type)
            .ext("consumerGroup", "cg").ext("topic", "t").ext("queueId", "0").ext("queueOffset", "0")
            .ext("maxMsgNums", "32").ext("sysFlag", "20").ext("commitOffset", "0").ext("suspendTimeoutMillis", "0")
            .ext("subscription", "*").ext("subVersion", "0").ext("expressionType", "TAG").bytes();
    }

    /** The pull the broker received next, after the greeting. */
    private ScriptedPeer.Received nextPull() throws InterruptedException {
        return broker.awaitFrame(f -> f.code() == RequestCode.PULL_MESSAGE || f.code() == RequestCode.LITE_PULL_MESSAGE,
            RawClient.WAIT);
    }

    private static void assertPullAnswer(Wire.Frame answer, int opaque, SerializeType type, int servedAs) {
        assertTrue(answer.isResponse(), answer.toString());
        assertEquals(opaque, answer.opaque());
        assertEquals(PULL_NOT_FOUND, answer.code(), answer.toString());
        assertEquals(type.getCode(), answer.serializeTypeByte(), "in the client's encoding");
        assertEquals("5", answer.ext().get("nextBeginOffset"));
        assertEquals("answered code " + servedAs, answer.remark());
    }

    @Test
    void theVersionBoundIsMqVersionsOwn() {
        assertEquals(MQVersion.Version.V5_0_0.ordinal(), LitePullHandler.V5_0_0);
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    @CoversCodes(RequestCode.LITE_PULL_MESSAGE)
    void beforeTheVersionIsKnownA361RefusedBy497IsSentAgainAs11Once(SerializeType type) throws Exception {
        start(V4_9_7, false);
        try (RawClient client = RawClient.connect(brokerPort())) {
            // the greeting is oneway: no answer, the broker's version is still unknown
            broker.awaitDialBy(client, type, RawClient.WAIT);
            client.send(litePull(41, type));
            Wire.Frame first = nextPull().frame();
            Wire.Frame again = nextPull().frame();
            assertEquals(RequestCode.LITE_PULL_MESSAGE, first.code());
            assertEquals(RequestCode.PULL_MESSAGE, again.code());
            assertEquals(41, again.opaque());
            assertEquals(type, again.serializeType());
            assertEquals(first.ext(), again.ext(), "same header fields");
            assertPullAnswer(client.read(), 41, type, RequestCode.PULL_MESSAGE);
            assertEquals(1.0, MeterReadings.of(gateway.metrics()).litePullsTranslated());

            // now known: the next goes as 11 at once
            client.send(litePull(42, type));
            assertEquals(RequestCode.PULL_MESSAGE, nextPull().frame().code());
            assertPullAnswer(client.read(), 42, type, RequestCode.PULL_MESSAGE);
            assertEquals(2.0, MeterReadings.of(gateway.metrics()).litePullsTranslated());
            assertEquals(Map.of(), Map.copyOf(extraPulls()), "nothing else reached the broker");
        }
    }

    @Test
    void aBrokerAnsweringAs497BeforeTheFirstLitePullGetsItAs11AtOnce() throws Exception {
        start(V4_9_7, false);
        try (RawClient client = RawClient.connect(brokerPort())) {
            client.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(1).ext("topic", "t").ext("queueId", "0").bytes());
            assertEquals("5", client.read().ext().get("offset"));
            client.send(litePull(2, SerializeType.JSON));
            Wire.Frame atBroker = nextPull().frame();
            assertEquals(RequestCode.PULL_MESSAGE, atBroker.code());
            assertEquals("20", atBroker.ext().get("sysFlag"), "the lite-pull flag goes along; 4.9.7 ignores it");
            assertPullAnswer(client.read(), 2, SerializeType.JSON, RequestCode.PULL_MESSAGE);
            assertEquals(1.0, MeterReadings.of(gateway.metrics()).litePullsTranslated());
        }
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void a5xBrokerGets361AsItCame(SerializeType type) throws Exception {
        start(V5_4_0, true);
        try (RawClient client = RawClient.connect(brokerPort())) {
            broker.awaitDialBy(client, type, RawClient.WAIT);
            // before the version is known, and after
            for (int opaque = 7; opaque <= 8; opaque++) {
                client.send(litePull(opaque, type));
                assertEquals(RequestCode.LITE_PULL_MESSAGE, nextPull().frame().code());
                assertPullAnswer(client.read(), opaque, type, RequestCode.LITE_PULL_MESSAGE);
            }
        }
        assertEquals(0.0, MeterReadings.of(gateway.metrics()).litePullsTranslated());
    }

    @Test
    void aBrokerGivingNoVersionIsJudgedByItsAnswerTo361() throws Exception {
        start(0, true);
        try (RawClient client = RawClient.connect(brokerPort())) {
            client.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(1).ext("topic", "t").ext("queueId", "0").bytes());
            assertEquals("5", client.read().ext().get("offset"));
            for (int opaque = 2; opaque <= 3; opaque++) {
                client.send(litePull(opaque, SerializeType.JSON));
                assertEquals(RequestCode.LITE_PULL_MESSAGE, nextPull().frame().code());
                assertPullAnswer(client.read(), opaque, SerializeType.JSON, RequestCode.LITE_PULL_MESSAGE);
            }
        }
        assertEquals(0.0, MeterReadings.of(gateway.metrics()).litePullsTranslated());
    }

    /** The copy kept for a resend is released when no answer comes (the leak detector runs PARANOID). */
    @Test
    void aLitePullUnansweredBeforeTheVersionIsKnownGetsSystemBusyAndLeavesNothingHeld() throws Exception {
        start(V4_9_7, false);
        silentCodes.add(RequestCode.LITE_PULL_MESSAGE);
        try (RawClient client = RawClient.connect(brokerPort())) {
            broker.awaitDialBy(client, RawClient.WAIT);
            client.send(litePull(5, SerializeType.JSON));
            Wire.Frame busy = client.read();
            assertEquals(5, busy.opaque());
            assertEquals(Wire.SYSTEM_BUSY, busy.code(), busy.toString());
        }
        assertEquals(0.0, MeterReadings.of(gateway.metrics()).litePullsTranslated());
    }

    @Test
    void aLitePullPendingWhenTheBrokerHangsUpGetsSystemErrorAndLeavesNothingHeld() throws Exception {
        start(V4_9_7, false);
        silentCodes.add(RequestCode.LITE_PULL_MESSAGE);
        try (RawClient client = RawClient.connect(brokerPort())) {
            ScriptedPeer.Connection upstream = broker.awaitDialBy(client, RawClient.WAIT);
            client.send(litePull(6, SerializeType.JSON));
            nextPull();
            upstream.close();
            Wire.Frame error = client.read();
            assertEquals(6, error.opaque());
            assertEquals(Wire.SYSTEM_ERROR, error.code(), error.toString());
        }
    }

    private Map<Integer, Integer> extraPulls() {
        Map<Integer, Integer> extra = new java.util.TreeMap<>();
        for (ScriptedPeer.Received r : broker.drainReceived()) {
            extra.merge(r.frame().code(), 1, Integer::sum);
        }
        return extra;
    }
}
