package io.rmqgw.gateway.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rmqgw.gateway.multicluster.LogicalTopicMeters;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.metrics.ListenerMeters;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The shipped monitoring files parse, and every PromQL expression in them (recording and alerting
 * rules, dashboard panels and variables) names only series that exist: what a populated
 * {@link GatewayMetrics#prometheus()} registry with the admin port's readiness gauge actually exports,
 * the rules' own recorded series, and Prometheus's {@code up}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class MonitoringConfigTest {

    /** Series Prometheus itself adds for every scrape target. */
    private static final Set<String> PROMETHEUS_SERIES = Set.of("up");

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();

    private Path conf;
    private Set<String> exported;

    @BeforeAll
    void scrapeAPopulatedRegistry() throws Exception {
        conf = confDir();
        GatewayMetrics metrics = GatewayMetrics.prometheus();
        AdminServer admin = AdminServer.start("127.0.0.1", 0, metrics, new Readiness()); // registers rmqgw_ready
        List<EmbeddedChannel> channels = new ArrayList<>();
        try {
            metrics.requestCompleted(RequestCode.SEND_MESSAGE_V2, ResponseCode.SUCCESS, 10_000, 1_000_000);
            metrics.requestAnswered(RequestCode.PULL_MESSAGE, ResponseCode.SYSTEM_BUSY);
            metrics.oneway(RequestCode.HEART_BEAT);
            metrics.decodeError("bad_length");
            metrics.nameRejected("illegal_character");
            metrics.connectionClosed("broker", "malformed_frame");
            metrics.upstreamFailure(UpstreamFailure.TIMEOUT);
            metrics.routeRewritten();
            metrics.routeServedFromCache();
            metrics.headerConverted(SerializeType.JSON, SerializeType.ROCKETMQ);
            metrics.namesrvUp("10.0.0.1:9876", true);
            metrics.brokerUp("10.0.0.5:10911", false);
            metrics.topicLabels(true, 10);
            metrics.topicRequest("TopicA", RequestCode.SEND_MESSAGE_V2);
            LogicalTopicMeters logical = new LogicalTopicMeters(metrics.registry());
            logical.cluster("idc2", c -> 0.5, c -> "degraded");
            logical.broker("idc2", "10.1.0.5:10911", b -> 0.5);
            logical.redirected("idc2", "default", "down");
            for (ListenerMeters listener : List.of(metrics.namesrvListener(), metrics.brokerListener("10.0.0.5:10911"))) {
                channels.add(new EmbeddedChannel(listener.clientHandler()));
                channels.add(new EmbeddedChannel(listener.upstreamHandler()));
            }
            exported = sampleNames(metrics.scrape());
            // JVM GC pause timers appear with the first GC notification
            for (int i = 0; i < 50 && !exported.contains("jvm_gc_pause_seconds_count"); i++) {
                System.gc();
                Thread.sleep(100);
                exported = sampleNames(metrics.scrape());
            }
        } finally {
            channels.forEach(EmbeddedChannel::finishAndReleaseAll);
            admin.close();
            metrics.close();
        }
        assertTrue(exported.contains("rmqgw_ready"), () -> "scrape without rmqgw_ready: " + exported);
        assertTrue(exported.contains("rmqgw_request_upstream_duration_seconds_bucket"), exported::toString);
    }

    private static Path confDir() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("conf/prometheus.yml"))) {
                return d.resolve("conf");
            }
        }
        throw new AssertionError("conf/prometheus.yml not found above " + Path.of("").toAbsolutePath());
    }

    /** The names of the samples in Prometheus text format: counters' _total, histograms' _bucket/_count/_sum... */
    static Set<String> sampleNames(String scrape) {
        Set<String> names = new TreeSet<>();
        for (String line : scrape.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)").matcher(line);
            if (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    // ------------------------------------------------------------------ PromQL: the series an expression names

    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
        "bool", "offset", "and", "or", "unless", "inf", "nan", "atan2");

    /**
     * Metric names referenced by a PromQL expression (Grafana variables allowed): identifiers outside label
     * matchers, ranges, strings and grouping clauses that are not functions, aggregations or keywords.
     */
    static Set<String> metricNames(String promql) {
        String s = promql;
        s = s.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", " ");         // strings
        s = s.replaceAll("'(?:[^'\\\\]|\\\\.)*'", " ");
        s = s.replaceAll("`[^`]*`", " ");
        s = s.replaceAll("\\$\\{[^}]*}", " ");                      // ${var}
        s = s.replaceAll("\\$[A-Za-z_][A-Za-z0-9_]*", " ");         // $var, $__rate_interval
        s = s.replaceAll("\\{[^}]*}", " ");                          // label matchers
        s = s.replaceAll("\\[[^]]*]", " ");                          // ranges, subqueries
        s = s.replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
        s = s.replaceAll("(?<![A-Za-z0-9_:])\\d+(ms|s|m|h|d|w|y)\\b", " ");  // durations (offset 5m)
        s = s.replaceAll("(?<![A-Za-z0-9_:.])\\d+(\\.\\d+)?([eE][+-]?\\d+)?", " "); // numbers
        Set<String> names = new LinkedHashSet<>();
        Matcher m = Pattern.compile("[A-Za-z_:][A-Za-z0-9_:]*").matcher(s);
        while (m.find()) {
            String token = m.group();
            int next = m.end();
            while (next < s.length() && Character.isWhitespace(s.charAt(next))) {
                next++;
            }
            boolean call = next < s.length() && s.charAt(next) == '(';
            if (!call && !KEYWORDS.contains(token.toLowerCase())) {
                names.add(token);
            }
        }
        return names;
    }

    @Test
    void theExtractorFindsMetricNamesOnly() {
        assertEquals(Set.of("rmqgw_request_upstream_duration_seconds_bucket"), metricNames(
            "histogram_quantile(0.99, sum by (code, le) (rate(rmqgw_request_upstream_duration_seconds_bucket"
                + "{job=~\"$job\", code!~\"PULL_MESSAGE|X\"}[$__rate_interval])))"));
        assertEquals(Set.of("a_total", "b:ratio", "up"), metricNames(
            "sum by (job) (rate(a_total[5m] offset 1h)) / clamp_min(b:ratio, 1e-9) > 0.01 and on (job) up == 0"));
        assertEquals(Set.of("x"), metricNames("-sum(x{id=\"direct\"} > 0) * 2.5"));
    }

    // ------------------------------------------------------------------ the files

    @Test
    void prometheusScrapeConfig() throws IOException {
        JsonNode config = YAML.readTree(conf.resolve("prometheus.yml").toFile());
        JsonNode job = null;
        for (JsonNode j : config.path("scrape_configs")) {
            if ("rmqgw".equals(j.path("job_name").asText())) {
                job = j;
            }
        }
        assertNotNull(job, "a scrape job named rmqgw");
        assertEquals("/metrics", job.path("metrics_path").asText());
        List<String> targets = new ArrayList<>();
        job.path("static_configs").forEach(sc -> sc.path("targets").forEach(t -> targets.add(t.asText())));
        assertEquals(List.of("127.0.0.1:9877"), targets, "the admin port's default address");
        List<String> ruleFiles = new ArrayList<>();
        config.path("rule_files").forEach(f -> ruleFiles.add(f.asText()));
        assertEquals(List.of("prometheus-rules.yml"), ruleFiles);
        assertTrue(Files.isRegularFile(conf.resolve(ruleFiles.get(0))));
    }

    @Test
    void rulesParseAndNameOnlyExportedSeries() throws IOException {
        JsonNode rules = YAML.readTree(conf.resolve("prometheus-rules.yml").toFile());
        Set<String> recorded = recordedNames(rules);
        Set<String> alerts = new HashSet<>();
        Set<String> used = new TreeSet<>();
        for (JsonNode group : rules.path("groups")) {
            assertFalse(group.path("name").asText().isBlank(), "every group is named");
            for (JsonNode rule : group.path("rules")) {
                String expr = rule.path("expr").asText();
                assertFalse(expr.isBlank(), () -> "rule without expr: " + rule);
                checkExpression(expr, recorded, rule.toString());
                used.addAll(metricNames(expr));
                if (rule.has("alert")) {
                    String name = rule.path("alert").asText();
                    assertTrue(alerts.add(name), "alert " + name + " twice");
                    assertTrue(Set.of("critical", "warning", "info").contains(rule.path("labels").path("severity").asText()),
                        () -> name + " has a severity");
                    assertFalse(rule.path("annotations").path("summary").asText().isBlank(), () -> name + " summary");
                    assertFalse(rule.path("annotations").path("description").asText().isBlank(), () -> name + " description");
                    if (rule.has("for")) {
                        assertTrue(rule.path("for").asText().matches("\\d+[smh]"), () -> name + " for: " + rule.path("for"));
                    }
                } else {
                    assertTrue(rule.has("record"), () -> "neither alert nor record: " + rule);
                }
            }
        }
        // the alerts worth setting, as the README lists them
        for (String alert : List.of("RmqgwDown", "RmqgwNotReady", "RmqgwAllNamesrvDown", "RmqgwNamesrvDown", "RmqgwBrokerDown",
            "RmqgwUpstreamFailures", "RmqgwDecodeErrors", "RmqgwUpstreamLatencyHigh")) {
            assertTrue(alerts.contains(alert), alert + " missing: " + alerts);
        }
        for (String series : List.of("rmqgw_upstream_failures_total", "rmqgw_decode_errors_total", "rmqgw_broker_up",
            "rmqgw_namesrv_up", "rmqgw_ready", "rmqgw_request_upstream_duration_seconds_bucket")) {
            assertTrue(used.contains(series), series + " not used by any rule: " + used);
        }
    }

    private static Set<String> recordedNames(JsonNode rules) {
        Set<String> recorded = new HashSet<>();
        for (JsonNode group : rules.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                if (rule.has("record")) {
                    String name = rule.path("record").asText();
                    assertTrue(name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*") && name.contains(":"),
                        () -> "recording rule names are level:metric:operations, was " + name);
                    assertTrue(recorded.add(name), name + " recorded twice");
                }
            }
        }
        return recorded;
    }

    @Test
    void dashboardParsesAndNamesOnlyExportedSeries() throws IOException {
        JsonNode dashboard = JSON.readTree(conf.resolve("grafana-dashboard.json").toFile());
        assertFalse(dashboard.path("title").asText().isBlank());
        assertFalse(dashboard.path("uid").asText().isBlank());
        assertTrue(dashboard.path("schemaVersion").asInt() >= 36, "a current Grafana JSON model");
        Set<String> recorded = recordedNames(YAML.readTree(conf.resolve("prometheus-rules.yml").toFile()));

        // a Prometheus data-source variable, used by every panel and query
        Map<String, JsonNode> variables = new LinkedHashMap<>();
        dashboard.path("templating").path("list").forEach(v -> variables.put(v.path("name").asText(), v));
        JsonNode ds = variables.get("datasource");
        assertNotNull(ds, "a datasource variable: " + variables.keySet());
        assertEquals("datasource", ds.path("type").asText());
        assertEquals("prometheus", ds.path("query").asText());
        for (JsonNode v : variables.values()) {
            if ("query".equals(v.path("type").asText())) {
                assertEquals("${datasource}", v.path("datasource").path("uid").asText(), v::toString);
                JsonNode q = v.path("query");
                String query = q.isTextual() ? q.asText() : q.path("query").asText();
                Matcher m = Pattern.compile("^label_values\\((.*),\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\)$").matcher(query.trim());
                assertTrue(m.matches(), () -> "variable query " + query);
                checkExpression(m.group(1), recorded, "variable " + v.path("name").asText());
            }
        }

        Set<Integer> ids = new HashSet<>();
        Set<String> titles = new HashSet<>();
        Set<String> used = new TreeSet<>();
        int queries = 0;
        List<JsonNode> panels = new ArrayList<>();
        dashboard.path("panels").forEach(p -> {
            panels.add(p);
            p.path("panels").forEach(panels::add); // collapsed rows keep theirs inside
        });
        for (JsonNode panel : panels) {
            String title = panel.path("title").asText();
            assertTrue(ids.add(panel.path("id").asInt()), "panel id " + panel.path("id") + " twice");
            assertTrue(titles.add(title), "panel title " + title + " twice");
            for (String g : List.of("h", "w", "x", "y")) {
                assertTrue(panel.path("gridPos").has(g), () -> title + " gridPos." + g);
            }
            assertTrue(panel.path("gridPos").path("x").asInt() + panel.path("gridPos").path("w").asInt() <= 24, title);
            if ("row".equals(panel.path("type").asText())) {
                continue;
            }
            assertEquals("prometheus", panel.path("datasource").path("type").asText(), title);
            assertEquals("${datasource}", panel.path("datasource").path("uid").asText(), title);
            assertTrue(panel.path("targets").size() > 0, () -> title + " has queries");
            Set<String> refIds = new HashSet<>();
            for (JsonNode target : panel.path("targets")) {
                assertTrue(refIds.add(target.path("refId").asText()), title + " refIds unique");
                assertEquals("${datasource}", target.path("datasource").path("uid").asText(), title);
                String expr = target.path("expr").asText();
                checkExpression(expr, recorded, "panel " + title);
                used.addAll(metricNames(expr));
                queries++;
            }
        }
        assertTrue(queries > 20, "queries: " + queries);
        // the panels the README describes
        for (String series : List.of("rmqgw_requests_total", "rmqgw_request_gateway_duration_seconds_bucket",
            "rmqgw_request_upstream_duration_seconds_bucket", "rmqgw_received_bytes_total", "rmqgw_sent_bytes_total",
            "rmqgw_client_connections", "rmqgw_upstream_connections", "rmqgw_decode_errors_total",
            "rmqgw_names_rejected_total", "rmqgw_upstream_failures_total", "rmqgw_namesrv_up", "rmqgw_broker_up",
            "rmqgw_ready", "rmqgw_netty_pooled_memory_used_bytes", "jvm_memory_used_bytes", "jvm_gc_pause_seconds_sum")) {
            assertTrue(used.contains(series), series + " on no panel: " + used);
        }
    }

    /** {@code expr} is non-empty, balanced, names only known series, and takes quantiles over buckets only. */
    private void checkExpression(String expr, Set<String> recorded, String where) {
        assertFalse(expr.isBlank(), where + ": empty expression");
        int depth = 0;
        for (char c : expr.toCharArray()) {
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            if (depth < 0) {
                fail(where + ": unbalanced parentheses in " + expr);
            }
        }
        assertEquals(0, depth, where + ": unbalanced parentheses in " + expr);
        Set<String> names = metricNames(expr);
        assertFalse(names.isEmpty(), () -> where + ": no series in " + expr);
        for (String name : names) {
            assertTrue(exported.contains(name) || recorded.contains(name) || PROMETHEUS_SERIES.contains(name),
                () -> where + ": " + name + " is not exported by rmqgw (nor recorded by the rules) in\n  " + expr
                    + "\nexported: " + exported);
        }
        if (expr.contains("histogram_quantile(")) {
            assertTrue(names.stream().allMatch(n -> n.endsWith("_bucket")),
                () -> where + ": histogram_quantile over something else than _bucket series: " + names);
        }
    }
}
