package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What real RocketMQ Java clients (4.9.7 and 5.4.0, forked JVMs) must be able to do through
 * whatever {@link #clientNamesrv()} points at: the brokers directly ({@link DirectBaselineIT}) or,
 * later, the gateway. Subclasses say where clients connect and which ports they may connect to.
 */
public abstract class ClientScenarioContract {

    protected static final Duration SEND_TIMEOUT = Duration.ofSeconds(30);
    protected static final Duration CONSUME_TIMEOUT = Duration.ofSeconds(60);

    /** The namesrvAddr clients are given. */
    protected abstract String clientNamesrv();

    /** A fresh topic / group name. */
    protected abstract String topic(String hint);

    protected abstract String group(String hint);

    /** The only remote ports a client process may connect to (checked on every scenario run). */
    protected abstract Set<Integer> allowedClientRemotePorts();

    protected ScenarioRunner.Spec scenario(ClientVersion version, String scenario, String topic) {
        return ScenarioRunner.scenario(version, scenario).namesrv(clientNamesrv()).topic(topic);
    }

    /** Runs, asserts ok and that the process only connected to {@link #allowedClientRemotePorts()}. */
    protected ScenarioResult run(ScenarioRunner.Spec spec) throws Exception {
        ScenarioResult r = spec.run();
        System.err.println("[it] " + r + (r.summary() != null ? " (scenario " + r.summaryLong("elapsedMs") + " ms)" : ""));
        r.assertOk();
        Set<Integer> unexpected = new TreeSet<>(r.remotePorts());
        unexpected.removeAll(allowedClientRemotePorts());
        assertTrue(unexpected.isEmpty(), () -> "client connected to unexpected ports " + unexpected + ": "
            + r.connections() + "\n" + r.describe());
        assertTrue(!r.connections().isEmpty(), () -> "no connection sampled for " + r.describe());
        return r;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(ClientVersion.class)
    void everySendModeThenPushAndLitePull(ClientVersion version) throws Exception {
        String topic = topic("modes_" + version.version().replace('.', '_'));
        int n = 20;
        List<ScenarioResult> sends = new ArrayList<>();
        for (String mode : List.of("sync-send", "async-send", "oneway-send", "batch-send")) {
            ScenarioResult r = run(scenario(version, mode, topic).count(n).keyPrefix(mode).timeout(SEND_TIMEOUT));
            assertEquals(n, r.summaryLong("sent"), r::describe);
            assertEquals(n, r.lines("sent").size(), r::describe);
            sends.add(r);
        }
        Set<String> sentKeys = new HashSet<>();
        Set<String> sentIds = new HashSet<>();
        Map<String, String> offsetIdByKey = new HashMap<>();
        for (ScenarioResult r : sends) {
            sentKeys.addAll(r.keys("sent"));
            sentIds.addAll(r.msgIds("sent"));
            for (JsonNode l : r.lines("sent")) {
                if (l.hasNonNull("offsetMsgId")) {
                    offsetIdByKey.put(l.path("key").asText(), l.path("offsetMsgId").asText());
                }
            }
        }
        assertEquals(4 * n, sentKeys.size(), "distinct keys sent");
        assertEquals(4 * n, sentIds.size(), "distinct message ids sent");

        for (String consumer : List.of("push-consume", "lite-pull-consume")) {
            ScenarioResult r = run(scenario(version, consumer, topic).group(group(consumer)).count(4 * n)
                .arg("linger-ms", 500).timeout(CONSUME_TIMEOUT));
            assertEquals(sentKeys, new HashSet<>(r.keys("received")), () -> consumer + " keys\n" + r.describe());
            assertEquals(sentIds, r.msgIds("received"), () -> consumer + " message ids\n" + r.describe());
            assertEquals(0, r.summaryLong("duplicates"), r::describe);
            assertTrue(r.summary().path("queuesInOrder").asBoolean(), () -> "per-queue order\n" + r.describe());
            for (JsonNode l : r.lines("received")) {
                String expected = offsetIdByKey.get(l.path("key").asText());
                if (expected != null) {
                    assertEquals(expected, l.path("offsetMsgId").asText(), () -> "offsetMsgId of " + l);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(ClientVersion.class)
    void transactionCommittedAndCheckedBack(ClientVersion version) throws Exception {
        ScenarioResult r = run(scenario(version, "transaction", topic("tx")).timeout(CONSUME_TIMEOUT));
        assertTrue(r.summary().path("unknownCheckedBack").asBoolean(), r::describe);
        String unknownKey = r.summary().path("unknownKey").asText();
        assertTrue(r.keys("checked").contains(unknownKey), r::describe);
        assertEquals(Set.of(unknownKey, r.summary().path("commitKey").asText()), new HashSet<>(r.keys("received")),
            r::describe);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(ClientVersion.class)
    void orderlyPerKeyOrder(ClientVersion version) throws Exception {
        ScenarioResult r = run(scenario(version, "orderly", topic("orderly")).count(40).arg("keys", 4)
            .timeout(CONSUME_TIMEOUT));
        assertTrue(r.summary().path("keysInOrder").asBoolean(), r::describe);
        assertEquals(4, r.summary().path("perKey").size(), r::describe);
        assertEquals(40, r.summaryLong("received"), r::describe);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(ClientVersion.class)
    void reconsumeLaterIsRedelivered(ClientVersion version) throws Exception {
        ScenarioResult r = run(scenario(version, "reconsume", topic("retry")).count(2).timeout(CONSUME_TIMEOUT));
        assertEquals(2, r.summary().path("redelivered").size(), r::describe);
        long retried = r.lines("received").stream().filter(l -> l.path("reconsumeTimes").asInt() > 0).count();
        assertTrue(retried >= 2, r::describe);
    }

    /** 4.9.7 and 5.4.0 producers write one topic; each version's consumers read everything. */
    @ParameterizedTest(name = "consumer {0}")
    @EnumSource(ClientVersion.class)
    void crossVersion(ClientVersion consumerVersion) throws Exception {
        String topic = topic("cross_" + consumerVersion.version().replace('.', '_'));
        Set<String> keys = new HashSet<>();
        for (ClientVersion producer : ClientVersion.values()) {
            keys.addAll(run(scenario(producer, "sync-send", topic).count(10).keyPrefix("from-" + producer.version())
                .timeout(SEND_TIMEOUT)).keys("sent"));
        }
        ScenarioResult r = run(scenario(consumerVersion, "push-consume", topic).group(group("cross")).count(20)
            .timeout(CONSUME_TIMEOUT));
        assertEquals(keys, new HashSet<>(r.keys("received")), r::describe);
    }
}
