package io.rmqgw.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Exit codes and both renderings, from a hand-made tally. */
class ProbeResultTest {

    private static final String RUN = "abc123";

    private static ProbeSettings settings(int count, String budget) {
        return new ProbeSettings("127.0.0.1:9876", "rmqgw_probe", null, 10, 256, count, Duration.ofSeconds(3),
            Duration.ofSeconds(10), Duration.ofSeconds(30), LatencyBudget.parse(budget), true, null);
    }

    /** {@code n} sent; those in {@code received} arrive with latency {@code 10 * (seq + 1)} ms. */
    private static ProbeTally tally(int n, int... received) {
        ProbeTally t = new ProbeTally(RUN, n);
        for (int i = 0; i < n; i++) {
            t.attempted(i);
            t.sent(i);
        }
        for (int seq : received) {
            t.received(RUN, Integer.toString(seq), 1_000, 1_000 + 10L * (seq + 1));
        }
        return t;
    }

    private static ProbeResult result(ProbeSettings s, ProbeTally t, String error) {
        return new ProbeResult(s, RUN, "rmqgw_probe_" + RUN, t.counts(), error, Duration.ofMillis(1500),
            Duration.ofMillis(900), Duration.ofMillis(20), "ok", null);
    }

    private static String text(ProbeResult r) {
        StringWriter w = new StringWriter();
        r.printText(new PrintWriter(w));
        return w.toString();
    }

    private static JsonNode json(ProbeResult r) throws Exception {
        return new ObjectMapper().readTree(r.toJson());
    }

    @Test
    void allArrivedWithinBudgetIsOk() throws Exception {
        ProbeResult r = result(settings(4, "p99<=1s"), tally(4, 0, 1, 2, 3), null);
        assertTrue(r.passed());
        assertEquals(ProbeResult.OK, r.exitCode());
        assertEquals(List.of(), r.failures());
        String text = text(r);
        assertTrue(text.endsWith("OK" + System.lineSeparator()), text);
        assertTrue(text.contains("latency    p50 20ms, p90 40ms, p99 40ms, max 40ms"), text);
        assertTrue(text.contains("budget     p99<=1s ok"), text);
        assertTrue(text.contains("consumer ready after 1.5s"), text);

        JsonNode j = json(r);
        assertEquals("ok", j.get("status").asText());
        assertEquals(0, j.get("exitCode").asInt());
        assertEquals(4, j.get("sent").asInt());
        assertEquals(4, j.get("received").asInt());
        assertEquals(0, j.get("lost").asInt());
        assertEquals(20, j.get("latencyMs").get("p50").asLong());
        assertEquals(40, j.get("latencyMs").get("max").asLong());
        assertEquals(40, j.get("budget").get(0).get("observedMs").asLong());
        assertEquals(1000, j.get("budget").get(0).get("boundMs").asLong());
        assertTrue(j.get("budget").get(0).get("ok").asBoolean());
        assertTrue(j.get("error").isNull());
        assertEquals(RUN, j.get("runId").asText());
        assertEquals(1.5, j.get("readySeconds").asDouble());
    }

    @Test
    void lossFails() throws Exception {
        ProbeResult r = result(settings(4, null), tally(4, 0, 2), null);
        assertEquals(ProbeResult.FAILED, r.exitCode());
        assertEquals(List.of("2 lost"), r.failures());
        assertTrue(text(r).contains("FAILED: 2 lost"), text(r));
        JsonNode j = json(r);
        assertEquals("failed", j.get("status").asText());
        assertEquals(1, j.get("exitCode").asInt());
        assertEquals(2, j.get("lost").asInt());
        assertEquals("2 lost", j.get("failures").get(0).asText());
    }

    @Test
    void duplicatesAloneDoNotFail() {
        ProbeTally t = tally(2, 0, 1);
        t.received(RUN, "1", 1_000, 1_500);
        ProbeResult r = result(settings(2, null), t, null);
        assertEquals(1, r.counts().duplicates());
        assertEquals(ProbeResult.OK, r.exitCode());
        assertTrue(text(r).contains("duplicates 1"), text(r));
    }

    @Test
    void aBudgetBreachFails() throws Exception {
        // latencies 10..100 ms: p50 = 50, p99 = 100
        ProbeResult r = result(settings(10, "p50<=50ms,p99<=80ms"), tally(10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), null);
        assertEquals(ProbeResult.FAILED, r.exitCode());
        assertEquals(List.of("p99 100ms > budget 80ms"), r.failures());
        assertTrue(text(r).contains("budget     p50<=50ms ok, p99<=80ms BREACHED"), text(r));
        JsonNode j = json(r);
        assertTrue(j.get("budget").get(0).get("ok").asBoolean());
        assertFalse(j.get("budget").get(1).get("ok").asBoolean());
        assertEquals(100, j.get("budget").get(1).get("observedMs").asLong());
    }

    @Test
    void aSendFailureFailsEvenWithoutLoss() {
        ProbeTally t = new ProbeTally(RUN, 2);
        t.attempted(0);
        t.sent(0);
        t.attempted(1);
        t.failed(1, "broker busy");
        t.received(RUN, "0", 0, 5);
        ProbeResult r = result(settings(2, null), t, null);
        assertEquals(ProbeResult.FAILED, r.exitCode());
        assertEquals(List.of("1 send error"), r.failures());
        assertTrue(text(r).contains("error      broker busy"), text(r));
    }

    @Test
    void aRunThatCouldNotStartFailsWithItsReason() throws Exception {
        ProbeResult r = new ProbeResult(settings(5, "p99<=1s"), RUN, "g", new ProbeTally(RUN, 5).counts(),
            "cannot get the route of topic rmqgw_probe from 127.0.0.1:9876: connect failed", null, null, null,
            "skipped", "/tmp/rmqgw-probe-1");
        assertEquals(ProbeResult.FAILED, r.exitCode());
        assertEquals(1, r.failures().size(), r.failures()::toString); // the reason, not also "p99 not measured"
        String text = text(r);
        assertTrue(text.contains("FAILED: cannot get the route"), text);
        assertTrue(text.contains("client log /tmp/rmqgw-probe-1"), text);
        assertFalse(text.contains("consumer ready"), text);
        JsonNode j = json(r);
        assertTrue(j.get("latencyMs").get("p99").isNull());
        assertTrue(j.get("budget").get(0).get("observedMs").isNull());
        assertEquals("/tmp/rmqgw-probe-1", j.get("clientLogDir").asText());
        assertTrue(j.get("error").asText().startsWith("cannot get the route"));
    }

    @Test
    void nothingReceivedWithABudgetFailsOnLossAndBudget() {
        ProbeResult r = result(settings(3, "p99<=1s"), tally(3), null);
        assertEquals(ProbeResult.FAILED, r.exitCode());
        assertEquals(2, r.failures().size(), r.failures()::toString);
        assertEquals("3 lost", r.failures().get(0));
        assertTrue(text(r).contains("latency    none measured"), text(r));
    }
}
