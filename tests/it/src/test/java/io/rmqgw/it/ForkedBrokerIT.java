package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A broker in its own JVM, registered with the shared name server, killed and restarted on the
 * same ports while a client keeps sending: the fixture the gateway's broker-down test needs,
 * exercised directly.
 */
@ExtendWith(SharedClusterExtension.class)
class ForkedBrokerIT {

    @Test
    void clientSendsAgainAfterBrokerRestart(SharedCluster shared) throws Exception {
        String topic = shared.topic("forked");
        try (ForkedBroker broker = ForkedBroker.create(shared.dir().resolve("forked-broker"),
            shared.namesrvAddress(), "ItForkedCluster", "it-forked-a").start()) {
            System.err.println("[it] " + broker + " started in " + broker.lastStartTime().toMillis() + " ms");
            // The topic lives on the forked broker only, so it is unroutable while that broker is down.
            Admin.createTopic(broker.brokerAddress(), topic, 4);
            Admin.awaitRoute(shared.namesrvAddress(), topic, broker.brokerName(), Duration.ofSeconds(30));

            ScenarioResult before = ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send")
                .namesrv(shared.namesrvAddress()).topic(topic).count(10).keyPrefix("before")
                .arg("create-topic-key", "RMQGW_NO_SUCH_TOPIC")
                .timeout(Duration.ofSeconds(30)).run().assertOk();
            assertTrue(before.lines("sent").stream().allMatch(l -> broker.brokerName().equals(l.path("broker").asText())),
                before::describe);

            long killedAt = System.nanoTime();
            broker.kill();
            System.err.println("[it] forked broker killed; name server dropped it after "
                + (System.nanoTime() - killedAt) / 1_000_000 + " ms");

            // Both client versions keep sending while the broker is down; it comes back once both
            // have seen a failure.
            Set<String> afterKeys = new HashSet<>();
            List<ScenarioProcess> senders = new ArrayList<>();
            try {
                for (ClientVersion version : ClientVersion.values()) {
                    senders.add(ScenarioRunner.scenario(version, "send-until-success")
                        .namesrv(shared.namesrvAddress()).topic(topic).count(3).keyPrefix("after-" + version.version())
                        .arg("interval-ms", 200).arg("send-timeout-ms", 3000).arg("poll-namesrv-ms", 1000)
                        // without a route the producer would auto-create the topic on the shared broker
                        .arg("create-topic-key", "RMQGW_NO_SUCH_TOPIC")
                        .timeout(Duration.ofSeconds(120)).start());
                }
                for (ScenarioProcess sender : senders) {
                    JsonNode failure = sender.awaitLine("attempt", Duration.ofSeconds(60));
                    assertNotNull(failure, () -> "no failed attempt while the broker was down: " + sender.linesSoFar());
                }
                long t0 = System.nanoTime();
                broker.start();
                System.err.println("[it] forked broker restarted in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
                for (ScenarioProcess sender : senders) {
                    ScenarioResult r = sender.await().assertOk();
                    assertTrue(r.summaryLong("failedAttempts") >= 1, r::describe);
                    assertEquals(3, r.summaryLong("sent"), r::describe);
                    assertTrue(r.lines("sent").stream()
                        .allMatch(l -> broker.brokerName().equals(l.path("broker").asText())), r::describe);
                    System.err.println("[it] " + r + ": first success after " + r.summaryLong("firstSuccessMs")
                        + " ms, " + r.summaryLong("failedAttempts") + " failed attempts");
                    afterKeys.addAll(r.keys("sent"));
                }
            } finally {
                senders.forEach(ScenarioProcess::close);
            }

            // Messages written before the SIGKILL survived it (page cache) and recovery kept them.
            Set<String> expected = new HashSet<>(before.keys("sent"));
            expected.addAll(afterKeys);
            ScenarioResult consumed = ScenarioRunner.scenario(ClientVersion.V5_4_0, "push-consume")
                .namesrv(shared.namesrvAddress()).topic(topic).group(shared.group("forked")).count(expected.size())
                .timeout(Duration.ofSeconds(60)).run().assertOk();
            assertEquals(expected, new HashSet<>(consumed.keys("received")), consumed::describe);
        }
    }
}
