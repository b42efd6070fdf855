package io.rmqgw.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shipped alerting rules (conf/prometheus-rules.yml) against what the gateway really exports: promtool
 * validates them and runs their unit tests (conf/prometheus-rules.test.yml), in which every alert fires on
 * its first event; and a real Prometheus scrape of {@link GatewayMetrics} shows every counter those
 * first-event alerts read at 0 before any event, with the label values the rule tests use.
 */
@Timeout(120)
class PrometheusRulesTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Path CONF = confDir();
    private static final Path RULES = CONF.resolve("prometheus-rules.yml");
    private static final Path RULE_TESTS = CONF.resolve("prometheus-rules.test.yml");
    /** name{labels} value */
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})?\\s+(\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*=\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

    // ---------------------------------------------------------------- promtool

    @Test
    void promtoolChecksTheRules() throws Exception {
        Result r = promtool("check", "rules", RULES.getFileName().toString());
        assertEquals(0, r.exit, () -> "promtool check rules:\n" + r.output);
        assertTrue(r.output.contains("SUCCESS"), r.output);
    }

    @Test
    void promtoolRunsTheRuleTestsAndEveryAlertFiresOnItsFirstEvent() throws Exception {
        Result r = promtool("test", "rules", RULE_TESTS.getFileName().toString());
        assertEquals(0, r.exit, () -> "promtool test rules:\n" + r.output);
        assertTrue(r.output.contains("SUCCESS"), r.output);
    }

    private record Result(int exit, String output) { }

    private static Result promtool(String... args) throws IOException, InterruptedException {
        Optional<Path> promtool = findPromtool();
        assumeTrue(promtool.isPresent(), "promtool is not installed here (Debian: apt-get install prometheus; "
            + ".ci/run installs it, so CI always runs this test)");
        List<String> command = new ArrayList<>();
        command.add(promtool.get().toString());
        command.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(command).directory(CONF.toFile()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("promtool " + String.join(" ", args) + " did not finish within 60 s");
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** $PROMTOOL, else promtool on the PATH. */
    private static Optional<Path> findPromtool() {
        String explicit = System.getenv("PROMTOOL");
        if (explicit != null && !explicit.isBlank()) {
            return Optional.of(Path.of(explicit));
        }
        String path = System.getenv().getOrDefault("PATH", "");
        return Arrays.stream(path.split(File.pathSeparator))
            .filter(d -> !d.isBlank())
            .map(d -> Path.of(d, "promtool"))
            .filter(Files::isExecutable)
            .findFirst();
    }

    // ---------------------------------------------------------------- the rule tests cover every alert

    @Test
    void everyShippedAlertHasATestThatSeesItQuietThenFiring() throws IOException {
        Set<String> alerts = new TreeSet<>();
        for (JsonNode group : YAML.readTree(RULES.toFile()).path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                if (rule.has("alert")) {
                    alerts.add(rule.path("alert").asText());
                }
            }
        }
        assertTrue(alerts.size() >= 12, alerts::toString);
        Map<String, List<JsonNode>> checks = new TreeMap<>();
        for (JsonNode test : YAML.readTree(RULE_TESTS.toFile()).path("tests")) {
            for (JsonNode check : test.path("alert_rule_test")) {
                checks.computeIfAbsent(check.path("alertname").asText(), k -> new ArrayList<>()).add(check);
            }
        }
        for (String alert : alerts) {
            List<JsonNode> forAlert = checks.getOrDefault(alert, List.of());
            assertTrue(forAlert.stream().anyMatch(c -> c.path("exp_alerts").size() > 0),
                () -> alert + ": no rule test in which it fires");
            assertTrue(forAlert.stream().anyMatch(c -> c.path("exp_alerts").isEmpty()),
                () -> alert + ": no rule test in which it is quiet before its first event");
        }
        assertEquals(alerts, new TreeSet<>(checks.keySet()), "rule tests name only shipped alerts");
    }

    // ---------------------------------------------------------------- a real exporter, before any event

    /**
     * Counters the alerts read that exist only once traffic names a request code and result: their alerts are
     * ratios of rates held for minutes ({@code for:}), where the first request makes no difference.
     */
    private static final Set<String> CREATED_BY_TRAFFIC = Set.of("rmqgw_requests_total");

    @Test
    void everyCounterOfTheAlertsIsExportedAtZeroBeforeAnyEvent() throws IOException {
        Set<String> counters = new TreeSet<>();
        Matcher m = Pattern.compile("\\brmqgw_[a-z0-9_]+_total\\b").matcher(ruleExpressions());
        while (m.find()) {
            counters.add(m.group());
        }
        assertTrue(counters.containsAll(Set.of("rmqgw_decode_errors_total", "rmqgw_names_rejected_total",
            "rmqgw_upstream_failures_total")), counters::toString);

        try (GatewayMetrics metrics = GatewayMetrics.prometheus()) {
            List<Sample> scrape = samples(metrics.scrape());
            for (String counter : counters) {
                if (CREATED_BY_TRAFFIC.contains(counter)) {
                    continue;
                }
                List<Sample> series = scrape.stream().filter(s -> s.name.equals(counter)).toList();
                assertFalse(series.isEmpty(), counter + " is not exported before its first event");
                series.forEach(s -> assertEquals(0.0, s.value, s::toString));
            }
            // every label value of every bounded counter, not just some
            assertEquals(labels(MalformedReason.values(), MalformedReason::label),
                values(scrape, "rmqgw_decode_errors_total", "reason"));
            assertEquals(Arrays.stream(NameCheck.values()).filter(c -> !c.isValid()).map(NameCheck::label)
                .collect(Collectors.toCollection(TreeSet::new)), values(scrape, "rmqgw_names_rejected_total", "reason"));
            assertEquals(labels(UpstreamFailure.values(), f -> f.name().toLowerCase(Locale.ROOT)),
                values(scrape, "rmqgw_upstream_failures_total", "reason"));
            assertEquals(labels(CloseReason.values(), CloseReason::label),
                values(scrape, "rmqgw_connections_closed_total", "reason"));
            assertEquals(new TreeSet<>(GatewayMetrics.ROLES), values(scrape, "rmqgw_connections_closed_total", "role"));
            assertEquals(GatewayMetrics.ROLES.size() * CloseReason.values().length,
                scrape.stream().filter(s -> s.name.equals("rmqgw_connections_closed_total")).count());
            assertEquals(new TreeSet<>(NamesrvDiscoveryMeters.RESULTS),
                values(scrape, "rmqgw_namesrv_discovery_total", "result"));
            assertEquals(new TreeSet<>(ConfigReloadMeters.RESULTS), values(scrape, "rmqgw_config_reloads_total", "result"));

            // the first event: 0 -> 1 on the series the alert reads, as in the rule tests
            metrics.decodeError(MalformedReason.BAD_LENGTH);
            metrics.nameRejected(NameCheck.ILLEGAL_CHARACTER);
            metrics.connectionClosed(GatewayMetrics.BROKER, CloseReason.MALFORMED_FRAME);
            List<Sample> after = samples(metrics.scrape());
            assertEquals(1.0, value(after, "rmqgw_decode_errors_total", Map.of("reason", "bad_length")));
            assertEquals(1.0, value(after, "rmqgw_names_rejected_total", Map.of("reason", "illegal_character")));
            assertEquals(1.0, value(after, "rmqgw_connections_closed_total",
                Map.of("reason", "malformed_frame", "role", "broker")));
            assertEquals(0.0, value(after, "rmqgw_decode_errors_total", Map.of("reason", "frame_too_long")));
        }
    }

    /** Registered by the gateway's admin port (io.rmqgw.gateway.admin.AdminServer), not by GatewayMetrics. */
    private static final String ADMIN_PORT_READY = "rmqgw_ready";
    /**
     * Registered by a feature of the gateway module on the registry (multicluster.LogicalTopicMeters), not by
     * GatewayMetrics: the gateway's MonitoringConfigTest checks the rules' names against them.
     */
    private static final Set<String> FEATURE_SERIES = Set.of("rmqgw_cluster_state");

    /** The rule tests feed series the gateway really exports: names, reason/result values and bucket bounds. */
    @Test
    void theRuleTestsUseTheNamesLabelsAndBucketsTheGatewayExports() throws IOException {
        try (GatewayMetrics metrics = GatewayMetrics.prometheus()) {
            for (int code : new int[] {RequestCode.SEND_MESSAGE_V2, RequestCode.PULL_MESSAGE}) {
                metrics.requestCompleted(code, ResponseCode.SUCCESS, 1_000, 1_000_000);
                metrics.requestAnswered(code, ResponseCode.SYSTEM_BUSY);
            }
            metrics.requestAnswered(RequestCode.SEND_MESSAGE_V2, ResponseCode.SYSTEM_ERROR);
            metrics.namesrvUp("10.0.0.1:9876", true);
            metrics.brokerUp("10.0.0.5:10911", true);
            List<Sample> scrape = samples(metrics.scrape());
            int checked = 0;
            for (JsonNode test : YAML.readTree(RULE_TESTS.toFile()).path("tests")) {
                for (JsonNode input : test.path("input_series")) {
                    Sample s = samples(input.path("series").asText().replace('\'', ' ').trim() + " 0").get(0);
                    if (!s.name.startsWith("rmqgw_") || s.name.equals(ADMIN_PORT_READY)
                        || FEATURE_SERIES.contains(s.name)) {
                        continue; // up and jvm_* come from Prometheus and Micrometer, rmqgw_ready from the admin port
                    }
                    Map<String, String> own = new TreeMap<>(s.labels);
                    own.remove("job"); // added by Prometheus at scrape time
                    own.remove("instance");
                    assertTrue(scrape.stream().anyMatch(e -> e.name.equals(s.name) && e.labels.keySet().equals(own.keySet())),
                        () -> s + ": no exported " + s.name + " with labels " + own.keySet());
                    for (String label : List.of("reason", "result", "code", "le")) {
                        if (own.containsKey(label)) {
                            assertTrue(values(scrape, s.name, label).contains(own.get(label)),
                                () -> s + ": " + label + "=\"" + own.get(label) + "\" is not among the exported "
                                    + values(scrape, s.name, label));
                        }
                    }
                    checked++;
                }
            }
            assertTrue(checked > 20, "rmqgw series in the rule tests: " + checked);
        }
    }

    // ---------------------------------------------------------------- the README lists them

    @Test
    void theReadmeListsEverySeriesTheRulesUseAndEveryBoundedLabelValue() throws IOException {
        String readme = Files.readString(CONF.getParent().resolve("README.md"));
        int start = readme.indexOf("## Metrics\n");
        assertTrue(start >= 0, "README has a Metrics section");
        int end = readme.indexOf("\n## ", start + 1);
        String section = readme.substring(start, end < 0 ? readme.length() : end);

        Set<String> used = new TreeSet<>();
        Matcher m = Pattern.compile("\\b(rmqgw_[a-z0-9_]+|jvm_[a-z0-9_]+|process_[a-z0-9_]+)\\b").matcher(ruleExpressions());
        while (m.find()) {
            used.add(m.group(1).replaceAll("_(bucket|count|sum)$", ""));
        }
        assertTrue(used.containsAll(Set.of("rmqgw_ready", "rmqgw_decode_errors_total", "rmqgw_request_upstream_duration_seconds",
            "jvm_memory_max_bytes")), used::toString);
        for (String series : used) {
            assertTrue(section.contains("`" + series + "`"), () -> series + " is used by the alert rules but not listed in the README");
        }
        for (String series : List.of("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
            "process_start_time_seconds", "rmqgw_connections_closed_total")) {
            assertTrue(section.contains("`" + series + "`"), series);
        }
        List<String> values = new ArrayList<>();
        Arrays.stream(MalformedReason.values()).map(MalformedReason::label).forEach(values::add);
        Arrays.stream(NameCheck.values()).filter(c -> !c.isValid()).map(NameCheck::label).forEach(values::add);
        Arrays.stream(CloseReason.values()).map(CloseReason::label).forEach(values::add);
        Arrays.stream(UpstreamFailure.values()).map(f -> f.name().toLowerCase(Locale.ROOT)).forEach(values::add);
        values.addAll(GatewayMetrics.ROLES);
        values.addAll(NamesrvDiscoveryMeters.RESULTS);
        values.addAll(ConfigReloadMeters.RESULTS);
        for (String value : values) {
            assertTrue(section.contains("`" + value + "`"), () -> "label value " + value + " not in the README's Metrics section");
        }
    }

    // ---------------------------------------------------------------- helpers

    private record Sample(String name, Map<String, String> labels, double value) { }

    static List<Sample> samples(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            Matcher m = SAMPLE.matcher(line.trim());
            if (line.startsWith("#") || !m.matches()) {
                continue;
            }
            Map<String, String> labels = new TreeMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
        }
        return samples;
    }

    private static Set<String> values(List<Sample> scrape, String name, String label) {
        return scrape.stream().filter(s -> s.name.equals(name) && s.labels.containsKey(label))
            .map(s -> s.labels.get(label)).collect(Collectors.toCollection(TreeSet::new));
    }

    private static double value(List<Sample> scrape, String name, Map<String, String> labels) {
        List<Sample> found = scrape.stream().filter(s -> s.name.equals(name) && s.labels.equals(labels)).toList();
        assertEquals(1, found.size(), () -> name + labels + " in " + scrape);
        return found.get(0).value;
    }

    private static <T> Set<String> labels(T[] values, java.util.function.Function<T, String> label) {
        return Arrays.stream(values).map(label).collect(Collectors.toCollection(TreeSet::new));
    }

    private static String ruleExpressions() throws IOException {
        StringBuilder all = new StringBuilder();
        for (JsonNode group : YAML.readTree(RULES.toFile()).path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                all.append(rule.path("expr").asText()).append('\n');
            }
        }
        return all.toString();
    }

    private static Path confDir() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("conf/prometheus-rules.yml"))) {
                return d.resolve("conf");
            }
        }
        throw new AssertionError("conf/prometheus-rules.yml not found above " + Path.of("").toAbsolutePath());
    }
}
