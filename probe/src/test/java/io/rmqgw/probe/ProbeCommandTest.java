package io.rmqgw.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Option parsing, usage errors and exit codes; a recording runner stands in for the clients. */
class ProbeCommandTest {

    private final List<ProbeSettings> runs = new ArrayList<>();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private int lost;

    private ProbeResult fakeRun(ProbeSettings s) {
        runs.add(s);
        ProbeTally t = new ProbeTally("r", s.count());
        for (int i = 0; i < s.count(); i++) {
            t.attempted(i);
            t.sent(i);
            if (i >= lost) {
                t.received("r", Integer.toString(i), 0, 3);
            }
        }
        return new ProbeResult(s, "r", "rmqgw_probe_r", t.counts(), null, Duration.ofSeconds(1), Duration.ofSeconds(1),
            Duration.ZERO, "ok", null);
    }

    /** Runs {@code command} as picocli would from {@code rmqgw probe}: usage errors exit 2. */
    static int execute(ProbeCommand command, PrintWriter out, PrintWriter err, String... args) {
        CommandLine probe = new CommandLine(command);
        probe.setOut(out);
        probe.setErr(err);
        return probe.execute(args);
    }

    private int run(String... args) {
        return execute(new ProbeCommand(this::fakeRun), new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    @Test
    void defaults() {
        assertEquals(0, run(), err::toString);
        ProbeSettings s = runs.get(0);
        assertEquals("127.0.0.1:9876", s.namesrv());
        assertEquals("rmqgw_probe", s.topic());
        assertNull(s.group());
        assertEquals(10.0, s.rate());
        assertEquals(256, s.size());
        assertEquals(100, s.count(), "10 s at 10/s");
        assertEquals(Duration.ofSeconds(10), s.drainTimeout());
        assertEquals(Duration.ofSeconds(3), s.sendTimeout());
        assertEquals(Duration.ofSeconds(30), s.readyTimeout());
        assertTrue(s.budget().isEmpty());
        assertTrue(s.cleanup());
        assertNull(s.logDir());
        assertTrue(out.toString().strip().endsWith("OK"), out::toString);
    }

    @Test
    void everyOption() {
        assertEquals(0, run("--namesrv", " a:1 ; b:2 ", "--topic", "T1", "--group", "G_1", "--rate", "2.5", "--size", "10",
            "--duration", "4s", "--timeout", "1500ms", "--send-timeout", "1s", "--ready-timeout", "5s",
            "--latency-budget", "p99<=500ms", "--keep-group", "--log-dir", "/tmp/x"), err::toString);
        ProbeSettings s = runs.get(0);
        assertEquals("a:1;b:2", s.namesrv());
        assertEquals("T1", s.topic());
        assertEquals("G_1", s.group());
        assertEquals(2.5, s.rate());
        assertEquals(10, s.size());
        assertEquals(10, s.count(), "4 s at 2.5/s");
        assertEquals(Duration.ofMillis(1500), s.drainTimeout());
        assertEquals(Duration.ofSeconds(1), s.sendTimeout());
        assertEquals(Duration.ofSeconds(5), s.readyTimeout());
        assertEquals("p99<=500ms", s.budget().toString());
        assertEquals(false, s.cleanup());
        assertEquals(Path.of("/tmp/x"), s.logDir());
    }

    @Test
    void countAndShortDurations() {
        assertEquals(0, run("--count", "7", "--rate", "1000"));
        assertEquals(7, runs.get(0).count());
        assertEquals(0, run("--duration", "100ms", "--rate", "1"));
        assertEquals(0, run("--duration", "3s", "--rate", "2"));
        assertEquals(6, runs.get(runs.size() - 1).count());
        assertEquals(1, runs.get(1).count(), "at least one message");
        assertEquals(Duration.ZERO, runs.get(1).sendingTime());
        assertEquals(Duration.ofMillis(6), runs.get(0).sendingTime());
    }

    @Test
    void jsonIsTheOnlyOutput() throws Exception {
        assertEquals(0, run("--count", "3", "--json"));
        assertEquals(1, out.toString().lines().count(), () -> "one line: " + out);
        JsonNode j = new ObjectMapper().readTree(out.toString());
        assertEquals("ok", j.get("status").asText());
        assertEquals(3, j.get("received").asInt());
        assertEquals("", err.toString());
    }

    @Test
    void jsonFileGetsOneLinePerRun(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("logs/probe.jsonl");
        assertEquals(0, run("--count", "3", "--json-file", file.toString()));
        assertTrue(out.toString().endsWith("OK" + System.lineSeparator()), "text on stdout as without the file: " + out);
        lost = 1;
        assertEquals(1, run("--count", "2", "--json-file", file.toString(), "--json"));
        List<String> lines = Files.readAllLines(file);
        assertEquals(2, lines.size(), lines::toString);
        ObjectMapper mapper = new ObjectMapper();
        assertEquals("ok", mapper.readTree(lines.get(0)).get("status").asText());
        JsonNode second = mapper.readTree(lines.get(1));
        assertEquals("failed", second.get("status").asText());
        assertEquals(1, second.get("lost").asInt());
        assertEquals(lines.get(1), out.toString().lines().reduce((a, b) -> b).orElseThrow(),
            "--json prints the line the file got");
    }

    @Test
    void lossExitsOne() throws Exception {
        lost = 2;
        assertEquals(1, run("--count", "5", "--json"));
        JsonNode j = new ObjectMapper().readTree(out.toString());
        assertEquals(2, j.get("lost").asInt());
        assertEquals("failed", j.get("status").asText());
    }

    @Test
    void budgetBreachExitsOne() {
        // the fake latencies are 3 ms
        assertEquals(1, run("--count", "5", "--latency-budget", "p50<=2ms"));
        assertTrue(out.toString().contains("FAILED: p50 3ms > budget 2ms"), out::toString);
        assertEquals(0, run("--count", "5", "--latency-budget", "p50<=3ms"));
    }

    @Test
    void usageErrorsExitTwoAndRunNothing() {
        String[][] bad = {
            {"--count", "5", "--duration", "3s"},
            {"--count", "0"},
            {"--count", "1000001"},
            {"--rate", "0"},
            {"--rate", "-1"},
            {"--rate", "NaN"},
            {"--rate", "fast"},
            {"--size", "0"},
            {"--size", "4194305"},
            {"--duration", "0s"},
            {"--duration", "1000s", "--rate", "10000"},
            {"--timeout", "soon"},
            {"--send-timeout", "0ms"},
            {"--latency-budget", "p99<500ms"},
            {"--latency-budget", "p99<=500"},
            {"--namesrv", ""},
            {"--namesrv", "nohost"},
            {"--topic", "bad topic"},
            {"--topic", "x".repeat(128)},
            {"--group", "g/1"},
            {"--unknown"},
        };
        for (String[] args : bad) {
            err.getBuffer().setLength(0);
            assertEquals(2, run(args), () -> String.join(" ", args) + ": " + err);
            assertTrue(err.toString().startsWith("probe: ") || err.toString().contains("probe"), err::toString);
        }
        assertEquals(List.of(), runs);
    }
}
