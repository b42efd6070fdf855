package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Large messages stream through the gateway (cut-through): real 4.9.7 and 5.4.0 producers send 100 KiB and
 * almost 4 MiB messages of random bytes (RocketMQ's default limit is 4 MiB with the properties) through the
 * gateway to a real broker, a consumer of the same version receives every one byte for byte, and the gateway
 * counted the sends after each connection's first (which waits for the dial and is stored whole) as streamed.
 */
@RocketMqCluster
class CutThroughIT {

    private static final int COUNT = 4;
    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    static ClusterUnderTest cluster;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        gateway = shared.closeAfterClass(GatewayFixture.on(shared).start());
    }

    @ParameterizedTest(name = "{0} {1} bytes")
    @CsvSource({"V4_9_7, 102400", "V5_4_0, 102400", "V4_9_7, 4177920", "V5_4_0, 4177920"})
    void largeMessagesArriveIntactAndStreamThrough(ClientVersion version, int bodySize) throws Exception {
        String topic = UniqueNames.topic("cut_through_" + bodySize);
        double streamedBefore = MeterReadings.of(gateway.metrics()).framesStreamed();
        ScenarioResult sent = run(ScenarioRunner.scenario(version, "sync-send").namesrv(gateway.namesrvAddress())
            .topic(topic).count(COUNT).arg("body-size", bodySize).arg("random-body", true)
            .arg("send-timeout-ms", 15_000).timeout(TIMEOUT));
        double streamed = MeterReadings.of(gateway.metrics()).framesStreamed() - streamedBefore;
        assertTrue(streamed >= COUNT - 1, "sends after the first on a connection streamed: " + streamed);

        ScenarioResult received = run(ScenarioRunner.scenario(version, "push-consume").namesrv(gateway.namesrvAddress())
            .topic(topic).group(cluster.group("cut_through")).count(COUNT).timeout(TIMEOUT));
        assertEquals(new HashSet<>(sent.keys("sent")), new HashSet<>(received.keys("received")), received::describe);
        List<JsonNode> lines = received.lines("received");
        for (JsonNode line : lines) {
            assertEquals(bodySize, line.get("bodyLength").asInt(), line::toString);
            assertTrue(line.get("bodyIntact").asBoolean(false), () -> "body not as sent: " + line);
        }
    }

    private static ScenarioResult run(ScenarioRunner.Spec spec) throws Exception {
        ScenarioResult r = spec.run();
        System.err.println("[it] " + r);
        r.assertOk();
        Set<Integer> unexpected = new HashSet<>(r.remotePorts());
        unexpected.removeAll(gateway.clientPorts());
        assertTrue(unexpected.isEmpty(), () -> "client connected around the gateway: " + unexpected);
        return r;
    }
}
