package io.rmqgw.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every line is exactly one JSON value, whatever the strings inside hold. */
class JsonLinesTest {

    private static Map<String, Object> run(int n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run", n);
        m.put("error", "line one\nline two\t\"quoted\" \\ \u0001");
        m.put("latencyMs", Map.of("p99", 12));
        m.put("failures", List.of("1 lost", "p99 900ms > budget 500ms"));
        m.put("rate", 2.5);
        m.put("none", null);
        return m;
    }

    @Test
    void appendBuildsAJsonLinesFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("new/dir/probe.jsonl");
        for (int n = 1; n <= 3; n++) {
            JsonLines.append(file, run(n));
        }
        List<String> lines = Files.readAllLines(file);
        assertEquals(3, lines.size(), lines::toString);
        ObjectMapper mapper = new ObjectMapper();
        for (int n = 1; n <= 3; n++) {
            JsonNode j = mapper.readTree(lines.get(n - 1));
            assertTrue(j.isObject());
            assertEquals(n, j.get("run").asInt());
            assertEquals("line one\nline two\t\"quoted\" \\ \u0001", j.get("error").asText());
            assertEquals(2.5, j.get("rate").asDouble());
            assertTrue(j.get("none").isNull());
        }
    }

    @Test
    void printIsOneLine() throws Exception {
        StringWriter out = new StringWriter();
        JsonLines.print(new PrintWriter(out), run(7));
        assertEquals(1, out.toString().lines().count(), out::toString);
        assertEquals(7, new ObjectMapper().readTree(out.toString()).get("run").asInt());
    }
}
