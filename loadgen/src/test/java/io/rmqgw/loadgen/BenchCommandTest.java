package io.rmqgw.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

class BenchCommandTest {

    private static BenchSettings parse(String... args) {
        CommandLine cl = new CommandLine(new BenchCommand());
        CommandLine.ParseResult pr = cl.parseArgs(args);
        CommandLine sub = pr.subcommand().commandSpec().commandLine();
        BenchCommand.Mode mode = sub.getCommand();
        return mode.settings(mode.base(mode instanceof BenchCommand.Consume ? null : Duration.ofSeconds(20)));
    }

    @Test
    void produceDefaults() {
        BenchSettings s = parse("produce");
        assertEquals(BenchSettings.Mode.PRODUCE, s.mode());
        assertEquals("127.0.0.1:9876", s.namesrv());
        assertNull(s.adminNamesrv());
        assertEquals("rmqgw_bench", s.topic());
        assertEquals(16, s.threads());
        assertEquals(1024, s.size());
        assertEquals(Duration.ofSeconds(5), s.warmup());
        assertEquals(Duration.ofSeconds(20), s.duration());
        assertEquals(0, s.count());
        assertFalse(s.async());
        assertEquals(0, s.queues());
        assertEquals(0.0, s.rate());
        assertEquals(0, s.retries());
        assertEquals(Duration.ofSeconds(3), s.sendTimeout());
        assertEquals(Duration.ofSeconds(5 + 20 + 120), s.timeout());
    }

    @Test
    void produceOptions() {
        BenchSettings s = parse("produce", "--namesrv", "127.0.0.1:1;127.0.0.1:2", "--admin-namesrv", "127.0.0.1:3",
            "--topic", "t1", "--threads", "64", "--size", "128", "--warmup", "0s", "--count", "1000", "--async",
            "--window", "256", "--queues", "8", "--rate", "500.5", "--clients", "2", "--json-file", "x.jsonl", "--label", "gw");
        assertEquals("127.0.0.1:1;127.0.0.1:2", s.namesrv());
        assertEquals("127.0.0.1:3", s.adminNamesrv());
        assertEquals(64, s.threads());
        assertEquals(128, s.size());
        assertEquals(Duration.ZERO, s.warmup());
        assertNull(s.duration());
        assertEquals(Long.MAX_VALUE, s.durationNanos());
        assertEquals(1000, s.count());
        assertTrue(s.async());
        assertEquals(256, s.window());
        assertEquals(8, s.queues());
        assertEquals(500.5, s.rate());
        assertEquals(2, s.clients());
        assertEquals(Path.of("x.jsonl"), s.jsonFile());
        assertEquals("gw", s.label());
        assertEquals(Duration.ofMinutes(12), s.timeout());
    }

    @Test
    void consumeAndLatency() {
        BenchSettings c = parse("consume", "--count", "5000", "--threads", "8", "--pull-batch", "64", "--warmup", "1s");
        assertEquals(BenchSettings.Mode.CONSUME, c.mode());
        assertEquals(5000, c.count());
        assertNull(c.duration());
        assertEquals(8, c.consumeThreads());
        assertEquals(64, c.pullBatch());
        BenchSettings both = parse("consume", "--count", "5000", "--duration", "10s");
        assertEquals(5000, both.count());
        assertEquals(Duration.ofSeconds(10), both.duration());
        assertEquals(1, c.clients());
        assertEquals(Duration.ZERO, c.work());
        BenchSettings b = parse("consume", "--backlog", "300");
        assertEquals(300, b.backlog());
        assertFalse(b.settleFirst());
        assertTrue(parse("consume", "--backlog", "300", "--settle-first").settleFirst());
        BenchSettings slow = parse("consume", "--duration", "30s", "--clients", "16", "--threads", "1", "--work", "5ms",
            "--group", "GID_slow");
        assertEquals(16, slow.clients());
        assertEquals(1, slow.consumeThreads());
        assertEquals(Duration.ofMillis(5), slow.work());
        assertEquals("GID_slow", slow.group());
        assertEquals(Duration.ZERO, parse("produce").work());
        BenchSettings l = parse("latency", "--rate", "2000", "--duration", "30s", "--threads", "8");
        assertEquals(BenchSettings.Mode.LATENCY, l.mode());
        assertEquals(2000.0, l.rate());
        assertEquals(8, l.threads());
        assertTrue(l.endToEnd());
        assertFalse(parse("latency", "--rate", "1", "--no-e2e").endToEnd());
    }

    @Test
    void fanoutOperations() {
        assertNull(parse("produce").fanout());
        BenchSettings direct = parse("produce", "--fanout", "a,b,c,d", "--batch", "8");
        assertEquals(List.of("a", "b", "c", "d"), direct.fanout().destinations());
        assertEquals(8, direct.fanout().batch());
        assertNull(direct.fanout().viaTopic());
        BenchSettings via = parse("produce", "--fanout", "a,b", "--fanout-topic", "RMQGW_FANOUT");
        assertEquals(2, via.fanout().batch());
        assertEquals("RMQGW_FANOUT", via.fanout().viaTopic());
        assertEquals("RMQGW_DESTINATIONS", via.fanout().destinationProperty());
    }

    @Test
    void badOptionsAreUsageErrors() {
        for (List<String> args : List.of(
            List.of("produce", "--size", "0"),
            List.of("produce", "--threads", "0"),
            List.of("produce", "--count", "10", "--duration", "1s"),
            List.of("produce", "--duration", "0s"),
            List.of("produce", "--duration", "5 parsecs"),
            List.of("produce", "--topic", "bad topic"),
            List.of("produce", "--namesrv", "nohost"),
            List.of("produce", "--async", "--window", "0"),
            List.of("produce", "--queues", "0"),
            List.of("produce", "--rate", "-1"),
            List.of("consume"),
            List.of("consume", "--count", "5", "--pull-batch", "0"),
            List.of("consume", "--count", "5", "--work", "-1ms"),
            List.of("consume", "--count", "5", "--work", "11s"),
            List.of("consume", "--count", "5", "--work", "busy"),
            List.of("consume", "--count", "5", "--clients", "0"),
            List.of("consume", "--count", "5", "--clients", "65"),
            List.of("consume", "--count", "5", "--settle-first"),
            List.of("latency", "--rate", "0"),
            List.of("produce", "--fanout", "a,b,c", "--batch", "2"),
            List.of("produce", "--fanout", "a,bad topic"),
            List.of("produce", "--fanout", "a", "--async"),
            List.of("produce", "--batch", "8"),
            List.of("produce", "--fanout-topic", "RMQGW_FANOUT"))) {
            assertThrows(RuntimeException.class, () -> parse(args.toArray(String[]::new)), args.toString());
        }
        ParameterException e = assertThrows(ParameterException.class, () -> parse("produce", "--size", "0"));
        assertTrue(e.getMessage().contains("--size"), e.getMessage());
    }

    @Test
    void summaryAsJsonAndText() {
        BenchSettings s = parse("produce", "--label", "gateway \"A\"", "--size", "1024");
        Tally t = new Tally(0, 0, 10 * 1_000_000_000L, 0);
        for (int i = 0; i < 1000; i++) {
            t.success(Tally.Phase.MEASURE, 10 * 1_000_000_000L, 1_000 + i);
        }
        t.failure(Tally.Phase.MEASURE, 5, "MQBrokerException:2");
        BenchResult r = new BenchResult(s, "V5_4_0", Instant.parse("2025-01-01T00:00:00Z"), t.summary(), null, 0, 0, 0);
        String json = r.toJson();
        assertTrue(json.startsWith("{\"mode\":\"produce\",\"label\":\"gateway \\\"A\\\"\",\"client\":\"V5_4_0\""), json);
        assertTrue(json.contains("\"ok\":1000,\"errors\":1,\"errorsByReason\":{\"MQBrokerException:2\":1}"), json);
        assertTrue(json.contains("\"tps\":100,"), json);
        assertTrue(json.contains("\"latencyUs\":{\"count\":1000,\"p50\":1499,\"p90\":1899,\"p99\":1989,\"p999\":1998,\"max\":1999,\"mean\":1499.5}"), json);
        assertEquals(0, r.exitCode());
        StringWriter text = new StringWriter();
        r.printText(new PrintWriter(text));
        assertTrue(text.toString().contains("throughput  100 msg/s, 0.1 MiB/s"), text.toString());
        assertTrue(text.toString().contains("p50 1.50ms, p90 1.90ms, p99 1.99ms"), text.toString());
        assertTrue(text.toString().contains("{MQBrokerException:2=1}"), text.toString());

        BenchResult none = new BenchResult(s, "V5_4_0", Instant.EPOCH, new Tally(0, 0, 1, 0).summary(), null, 0, 0, 0);
        assertEquals(1, none.exitCode());
        assertTrue(none.toJson().contains("\"tps\":0,"), none.toJson());
    }

    @Test
    void consumeSummaryHasTheWorkAndEachConsumersCount() throws Exception {
        BenchSettings s = parse("consume", "--duration", "10s", "--clients", "3", "--threads", "1", "--work", "5ms");
        Tally t = new Tally(0, 0, 10 * 1_000_000_000L, 0);
        for (int i = 0; i < 600; i++) {
            t.success(Tally.Phase.MEASURE, 10 * 1_000_000_000L, 1_000);
        }
        BenchResult r = new BenchResult(s, "V5_4_0", Instant.EPOCH, t.summary(), null, 0, 0, 0, List.of(300L, 300L, 0L));
        var json = new ObjectMapper().readTree(r.toJson());
        assertEquals(5.0, json.get("workMs").asDouble());
        assertEquals(3, json.get("clients").asInt());
        assertEquals("[300,300,0]", json.get("receivedPerClient").toString());
        assertEquals(60, json.get("tps").asLong());
        StringWriter text = new StringWriter();
        r.printText(new PrintWriter(text));
        assertTrue(text.toString().contains("3 consumers x 1 consume threads, pull batch 32, 5ms of work per message"),
            text.toString());
        assertTrue(text.toString().contains("consumers   3: 0 to 300 messages each (from the start until it shut down), 1 got none"),
            text.toString());
        // produce and latency results carry no per-consumer figures
        BenchResult p = new BenchResult(parse("produce"), "V5_4_0", Instant.EPOCH, t.summary(), null, 0, 0, 0);
        assertFalse(p.toMap().containsKey("receivedPerClient"));
    }

    @Test
    void workSleepsAtLeastItsDuration() {
        long nanos = Duration.ofMillis(5).toNanos();
        long start = System.nanoTime();
        for (int i = 0; i < 4; i++) {
            ConsumeRun.spend(nanos);
        }
        assertTrue(System.nanoTime() - start >= 4 * nanos);
    }

    @Test
    void reportAppendsOneJsonLinePerRunAndPrintsOne(@TempDir Path dir) throws Exception {
        BenchSettings s = parse("produce", "--label", "multi\nline \"label\"");
        Tally t = new Tally(0, 0, 1, 0);
        BenchResult r = new BenchResult(s, "V5_4_0", Instant.EPOCH, t.summary(), null, 0, 0, 0);
        Path file = dir.resolve("runs/bench.jsonl");
        StringWriter json = new StringWriter();
        StringWriter text = new StringWriter();
        BenchCommand.report(r, file, new PrintWriter(json, true), new PrintWriter(text, true));
        BenchCommand.report(r, file, null, new PrintWriter(text, true));
        List<String> lines = Files.readAllLines(file);
        assertEquals(2, lines.size(), lines::toString);
        ObjectMapper mapper = new ObjectMapper();
        for (String line : lines) {
            assertEquals("multi\nline \"label\"", mapper.readTree(line).get("label").asText(), line);
        }
        assertEquals(1, json.toString().lines().count(), json::toString);
        assertEquals(lines.get(0), json.toString().strip());
        assertTrue(text.toString().contains("rmqgw bench produce"), text::toString);
    }
}
