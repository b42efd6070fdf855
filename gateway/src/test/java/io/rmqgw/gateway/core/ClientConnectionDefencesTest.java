package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What protects the gateway from clients that hold connections without using them: no upstream
 * before a first request, idle and unfinished-frame timeouts, connection limits.
 */
class ClientConnectionDefencesTest {

    private static final String BROKER = "broker";

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;

    private void start(UnaryOperator<TestGateway.Builder> settings) throws Exception {
        // answers requests, but not the pulls it holds like a broker's long poll
        ScriptedCluster cluster = ScriptedCluster.options()
            .broker(() -> ScriptedPeer.broker(code -> code == RequestCode.PULL_MESSAGE)).gateway(settings).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    private int port() {
        return gateway.brokerPort(broker.address());
    }

    private double closed(CloseReason reason) {
        return MeterReadings.of(gateway.metrics()).connectionsClosed(BROKER, reason);
    }

    @Test
    void idleClientsHoldNoUpstreamConnection() throws Exception {
        start(settings -> settings);
        List<RawClient> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                idle.add(RawClient.connect(port()));
            }
            try (RawClient active = RawClient.connect(port())) {
                active.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(1).bytes());
                assertEquals(1, active.read().opaque());
            }
            assertEquals(1, broker.connectionCount(), "only the client that sent a request got an upstream");
        } finally {
            idle.forEach(RawClient::close);
        }
    }

    @Test
    void anIdleClientIsClosedButNotOneWaitingOnALongPoll() throws Exception {
        start(settings -> settings.longPollTimeout(Duration.ofSeconds(5)).clientTimeouts(Duration.ofMillis(700), Duration.ZERO));
        try (RawClient idle = RawClient.connect(port()); RawClient polling = RawClient.connect(port())) {
            polling.send(Wire.request(RequestCode.PULL_MESSAGE).opaque(7).ext("topic", "TopicA").ext("consumerGroup", "cg")
                .ext("queueId", "0").bytes());
            broker.awaitFrame(f -> f.code() == RequestCode.PULL_MESSAGE, RawClient.WAIT);
            idle.assertClosedBy(Duration.ofSeconds(5));
            assertEquals(1, closed(CloseReason.IDLE));

            // the long poll is answered by the gateway's timeout (SYSTEM_BUSY), not lost to an idle close
            Wire.Frame answer = polling.read(Duration.ofSeconds(10));
            assertEquals(7, answer.opaque());
            assertEquals(Wire.SYSTEM_BUSY, answer.code());
        }
    }

    @Test
    void aFrameNeverFinishedClosesItsConnection() throws Exception {
        start(settings -> settings.clientTimeouts(Duration.ZERO, Duration.ofMillis(800)));
        byte[] whole = Wire.request(RequestCode.GET_MAX_OFFSET).opaque(3).body(new byte[200]).bytes();
        try (RawClient slow = RawClient.connect(port()); RawClient fine = RawClient.connect(port())) {
            slow.send(java.util.Arrays.copyOf(whole, 100)); // half a frame, then nothing
            fine.send(whole);
            assertEquals(3, fine.read().opaque(), "others are served meanwhile");
            slow.assertClosedBy(Duration.ofSeconds(5));
            assertEquals(1, closed(CloseReason.FRAME_TIMEOUT));
        }
    }

    @Test
    void connectionsPastTheLimitsAreRefusedAndCounted() throws Exception {
        start(settings -> settings.connectionLimits(0, 2));
        try (RawClient first = RawClient.connect(port()); RawClient second = RawClient.connect(port())) {
            // accepts run on several event loops: let the first two be admitted before the third comes
            for (RawClient c : List.of(first, second)) {
                c.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(9).bytes());
                assertEquals(9, c.read().opaque());
            }
            try (RawClient third = RawClient.connect(port())) {
                third.assertClosedBy(Duration.ofSeconds(5));
            }
            assertEquals(1, closed(CloseReason.CONNECTION_LIMIT));
            first.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(1).bytes());
            assertEquals(1, first.read().opaque(), "the admitted ones are served");
        }
        // closing frees the slots
        TestGateway.await(() -> {
            try (RawClient again = RawClient.connect(port())) {
                again.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(2).bytes());
                return again.read().opaque() == 2;
            } catch (Exception | AssertionError e) {
                return false;
            }
        }, Duration.ofSeconds(5), "a connection admitted after others closed");
    }

    @Test
    void theTotalLimitCountsEveryListener() throws Exception {
        start(settings -> settings.connectionLimits(1, 0));
        try (RawClient toBroker = RawClient.connect(port())) {
            toBroker.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(1).bytes());
            assertEquals(1, toBroker.read().opaque());
            try (RawClient toNamesrv = RawClient.connect(gateway.port())) {
                toNamesrv.assertClosedBy(Duration.ofSeconds(5));
            }
            assertEquals(1, MeterReadings.of(gateway.metrics()).connectionsClosed(GatewayMetrics.NAMESRV, CloseReason.CONNECTION_LIMIT));
        }
    }
}
