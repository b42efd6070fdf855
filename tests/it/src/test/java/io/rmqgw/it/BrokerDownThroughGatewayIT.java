package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ConnectionSampler;
import io.rmqgw.it.support.ProcSockets;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawRemoting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link ForkedBrokerIT} with the gateway in front: a broker in its own JVM, registered with the
 * shared name server, is killed while clients of both versions hold a route to it (through the
 * gateway, their only address). Their sends fail fast with the gateway's error answer (a RocketMQ
 * error code, a remark naming the broker) instead of waiting out the client's 3 s timeout; once the
 * broker is back on the same ports, the same gateway dials it afresh and the sends succeed, and
 * every message is consumable.
 */
@ExtendWith(SharedClusterExtension.class)
class BrokerDownThroughGatewayIT {

    private static final int SEND_TIMEOUT_MS = 3000;

    @Test
    void sendsFailFastWhileTheBrokerIsDownAndSucceedOnceItIsBack(SharedCluster shared) throws Exception {
        String topic = shared.topic("gw_down");
        try (ForkedBroker broker = ForkedBroker.create(shared.dir().resolve("forked-broker-gw"),
                shared.namesrvAddress(), "ItGwDownCluster", "it-gwdown-a").start();
             GatewayFixture gateway = GatewayFixture.start(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ)) {
            System.err.println("[it] " + broker + " started in " + broker.lastStartTime().toMillis() + " ms");
            // The topic lives on the forked broker only, so it is unroutable while that broker is down.
            Admin.createTopic(broker.brokerAddress(), topic, 4);
            Admin.awaitRoute(gateway.namesrvAddress(), topic, broker.brokerName(), Duration.ofSeconds(30));
            int gatewayPort = gateway.brokerPort(broker.brokerAddress());
            String advertised = gateway.gateway().brokerListeners().get(broker.brokerAddress());

            // Each sender first sends two messages (so its producer holds the route through the
            // gateway), then waits for the go file and sends until three more succeeded.
            Path go = shared.dir().resolve("gw-down-go-" + System.nanoTime());
            List<ScenarioProcess> senders = new ArrayList<>();
            ConnectionSampler sampler = null;
            List<String> findings = new ArrayList<>();
            String probeOutcome = null;
            Set<String> expected = new HashSet<>();
            double connectFailuresBefore = MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.CONNECT_FAILED);
            try {
                for (ClientVersion version : ClientVersion.values()) {
                    senders.add(ScenarioRunner.scenario(version, "send-until-success")
                        .namesrv(gateway.namesrvAddress()).topic(topic).count(3).keyPrefix("gwdown-" + version.version())
                        .arg("prime", 2).arg("go-file", go)
                        .arg("interval-ms", 200).arg("send-timeout-ms", SEND_TIMEOUT_MS).arg("poll-namesrv-ms", 1000)
                        // without a route the producer would auto-create the topic on the shared broker
                        .arg("create-topic-key", "RMQGW_NO_SUCH_TOPIC")
                        .timeout(Duration.ofSeconds(120)).start());
                }
                for (ScenarioProcess sender : senders) {
                    assertNotNull(sender.awaitLine("waiting", Duration.ofSeconds(60)),
                        () -> "the sender did not prime: " + sender.linesSoFar() + "\n" + sender.workDir());
                    for (JsonNode l : sender.linesSoFar()) {
                        if ("primed".equals(l.path("type").asText())) {
                            assertEquals(broker.brokerName(), l.path("broker").asText(), l::toString);
                            expected.add(l.path("key").asText());
                        }
                    }
                }
                Set<String> upstreamBefore = gateway.upstreamEnds();

                long killedAt = System.nanoTime();
                broker.kill();
                System.err.println("[it] forked broker killed; name server dropped it after "
                    + (System.nanoTime() - killedAt) / 1_000_000 + " ms");
                // Deterministic probe of the failure answer on one connection: a request gets the
                // gateway's error answer at once, and so must the next request on the same connection.
                String probe = probeTwoRequests(gatewayPort, topic);
                probeOutcome = probe;
                System.err.println("[it] raw probe while the broker is down: " + probe);
                Files.createFile(go);

                for (ScenarioProcess sender : senders) {
                    JsonNode failure = sender.awaitLine("attempt", Duration.ofSeconds(60));
                    assertNotNull(failure, () -> "no failed attempt while the broker was down: " + sender.linesSoFar());
                    System.err.println("[it] " + sender + " first failed attempt: " + failure);
                }
                // from now on: which connections this JVM (the gateway) holds to the broker's port
                sampler = ConnectionSampler.start(ProcessHandle.current().pid(), Duration.ofMillis(50));
                long t0 = System.nanoTime();
                broker.start();
                System.err.println("[it] forked broker restarted in " + (System.nanoTime() - t0) / 1_000_000 + " ms");

                for (ScenarioProcess sender : senders) {
                    ScenarioResult r = sender.await();
                    System.err.println("[it] " + r + ": first success after " + r.summaryLong("firstSuccessMs")
                        + " ms (loop started at " + r.summaryLong("loopStartMs") + " ms), "
                        + r.summaryLong("failedAttempts") + " failed attempts, slowest failure "
                        + r.summaryLong("slowestFailureMs") + " ms");
                    r.assertOk();
                    assertEquals(3, r.summaryLong("sent"), r::describe);
                    assertTrue(r.summaryLong("failedAttempts") >= 1, r::describe);
                    assertTrue(r.lines("sent").stream()
                        .allMatch(l -> broker.brokerName().equals(l.path("broker").asText())), r::describe);
                    List<JsonNode> attempts = r.lines("attempt");
                    long answered = attempts.stream().filter(a -> isGatewayAnswer(a, broker, advertised)).count();
                    long closedChannel = attempts.stream().filter(a -> !a.hasNonNull("brokerCode")
                        && a.path("causes").toString().contains("RemotingSendRequestException")).count();
                    System.err.println("[it] " + r.version() + ": " + attempts.size() + " failed attempts, " + answered
                        + " with the gateway's error answer, " + closedChannel
                        + " written to a connection the gateway had closed after an earlier answer");
                    assertTrue(answered >= 1, () -> "no attempt carried the gateway's error answer:\n"
                        + attempts.stream().map(JsonNode::toString).collect(Collectors.joining("\n")));
                    for (JsonNode a : attempts) {
                        if (a.hasNonNull("brokerCode") && !isGatewayAnswer(a, broker, advertised)) {
                            findings.add(r.version() + ": an error answer that is not SYSTEM_ERROR/SYSTEM_BUSY naming the"
                                + " broker: " + a);
                        }
                        // fast: answered (or refused), never waited out
                        if (a.path("elapsedMs").asLong() >= SEND_TIMEOUT_MS) {
                            findings.add(r.version() + ": attempt " + a.path("attempt").asInt() + " took "
                                + a.path("elapsedMs").asLong() + " ms (the client's " + SEND_TIMEOUT_MS
                                + " ms timeout): " + a.path("causes"));
                        }
                    }
                    Set<Integer> unexpected = new TreeSet<>(r.remotePorts());
                    unexpected.removeAll(gateway.clientPorts());
                    assertTrue(unexpected.isEmpty(), () -> "client connected to " + unexpected + ": " + r.connections());
                    expected.addAll(r.keys("sent"));
                }
                assertTrue(MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.CONNECT_FAILED) > connectFailuresBefore,
                    "the gateway counted no failed upstream dial");

                // the gateway reached the restarted broker over new upstream connections
                sampler.sample();
                Set<String> toBroker = sampler.connections().stream()
                    .filter(c -> c.remotePort() == broker.brokerPort() && !c.listening())
                    .map(ProcSockets.TcpConnection::local).collect(Collectors.toCollection(TreeSet::new));
                System.err.println("[it] gateway connections to the restarted broker: " + toBroker
                    + " (upstream ends before the kill " + upstreamBefore + ")");
                assertFalse(toBroker.isEmpty(), "no connection from this JVM to the restarted broker was seen");
                assertTrue(gateway.upstreamEnds().containsAll(toBroker),
                    () -> "connections to the broker that are no gateway upstream: " + toBroker);
                for (String end : toBroker) {
                    assertFalse(upstreamBefore.contains(end), () -> end + " existed before the kill");
                }
                assertEquals(gatewayPort, gateway.brokerPort(broker.brokerAddress()), "the same gateway port");
            } finally {
                senders.forEach(ScenarioProcess::close);
                if (sampler != null) {
                    sampler.close();
                }
            }

            // every message, before and after the outage, through the same gateway
            ScenarioResult consumed = ScenarioRunner.scenario(ClientVersion.V5_4_0, "push-consume")
                .namesrv(gateway.namesrvAddress()).topic(topic).group(shared.group("gw_down")).count(expected.size())
                .timeout(Duration.ofSeconds(60)).run();
            System.err.println("[it] " + consumed);
            consumed.assertOk();
            assertEquals(expected, new HashSet<>(consumed.keys("received")), consumed::describe);
            Set<Integer> unexpected = new TreeSet<>(consumed.remotePorts());
            unexpected.removeAll(gateway.clientPorts());
            assertTrue(unexpected.isEmpty(), () -> "consumer connected to " + unexpected);

            // Last, so that everything above ran: how failures were answered.
            if (!probeOutcome.startsWith("answered")) {
                findings.add(0, "raw probe: " + probeOutcome);
            }
            assertTrue(findings.isEmpty(), () -> "while the broker was down, requests went unanswered:\n  "
                + String.join("\n  ", findings));
        }
    }

    private static boolean isGatewayAnswer(JsonNode attempt, ForkedBroker broker, String advertised) {
        int code = attempt.path("brokerCode").asInt(-1);
        String remark = attempt.path("brokerRemark").asText("");
        return (code == ResponseCode.SYSTEM_ERROR || code == ResponseCode.SYSTEM_BUSY)
            && (remark.contains(broker.brokerAddress()) || remark.contains(advertised));
    }

    /**
     * On one raw connection to the gateway's port for the dead broker: the first request must get
     * the gateway's error answer quickly (asserted), and the outcome of a second request written
     * right after that answer is returned: "answered ..." or what happened instead.
     */
    private static String probeTwoRequests(int gatewayPort, String topic) throws Exception {
        try (RawRemoting raw = RawRemoting.connect(gatewayPort, Duration.ofSeconds(SEND_TIMEOUT_MS / 1000))) {
            long t0 = System.nanoTime();
            RawRemoting.Answer first = raw.invoke(maxOffset(topic), SerializeType.JSON);
            long firstMs = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(ResponseCode.SYSTEM_ERROR, first.code(), first::toString);
            assertTrue(first.remark() != null && first.remark().contains("broker"), first::toString);
            assertTrue(firstMs < SEND_TIMEOUT_MS, "first answer after " + firstMs + " ms");
            RemotingCommand second = maxOffset(topic);
            long t1 = System.nanoTime();
            try {
                raw.write(RawRemoting.frame(second, SerializeType.JSON));
                while (true) {
                    RawRemoting.Answer a = raw.readFrame();
                    if (a.command().isResponseType() && a.command().getOpaque() == second.getOpaque()) {
                        return "answered the second request too (code " + a.code() + ", " + a.remark() + ") after "
                            + (System.nanoTime() - t1) / 1_000_000 + " ms; first answer " + first + " after " + firstMs
                            + " ms";
                    }
                }
            } catch (IOException e) {
                return "the first request got " + first.code() + " (" + first.remark() + ") after " + firstMs
                    + " ms, but a second request written on the same connection right after that answer got no"
                    + " answer: " + e + " after " + (System.nanoTime() - t1) / 1_000_000 + " ms (the gateway closes"
                    + " the client connection after answering; a client waits out its timeout for such a request)";
            }
        }
    }

    private static RemotingCommand maxOffset(String topic) {
        GetMaxOffsetRequestHeader h = new GetMaxOffsetRequestHeader();
        h.setTopic(topic);
        h.setQueueId(0);
        return RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, h);
    }
}
