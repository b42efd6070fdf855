package io.rmqgw.metrics;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Prometheus naming conventions every {@code rmqgw_} series follows, checked on a scrape: counters end in
 * {@code _total}, histograms in {@code _seconds} unless they count something else (then they name their unit),
 * gauges not in {@code _total}, and every other sample is a {@code _total}, {@code _bytes}, {@code _up} or
 * {@code _connections} series. In the test jar, for the meters of this module and the features' own meters.
 */
public final class PrometheusConventions {

    private static final Pattern TYPE = Pattern.compile("^# TYPE (rmqgw_\\S+) (\\w+)$", Pattern.MULTILINE);

    private PrometheusConventions() {
    }

    /**
     * Asserts the conventions on every {@code rmqgw_} family of {@code scrape}; {@code countHistograms} are the
     * histograms that count something other than seconds (named with their unit). Returns the families seen.
     */
    public static int assertFollowed(String scrape, Set<String> countHistograms) {
        Matcher m = TYPE.matcher(scrape);
        Set<String> histograms = new HashSet<>();
        int seen = 0;
        while (m.find()) {
            seen++;
            String name = m.group(1);
            switch (m.group(2)) {
                case "counter" -> assertTrue(name.endsWith("_total"), name);
                // durations in seconds; the count histograms name their unit
                case "histogram" -> {
                    assertTrue(name.endsWith("_seconds") || countHistograms.contains(name), name);
                    histograms.add(name);
                }
                case "gauge" -> assertFalse(name.endsWith("_total"), name);
                default -> { }
            }
        }
        // counters are exported as NAME_total samples
        for (String line : scrape.split("\n")) {
            if (line.startsWith("rmqgw_") && histograms.stream().noneMatch(line::startsWith)) {
                String name = line.substring(0, line.indexOf(line.contains("{") ? '{' : ' '));
                assertTrue(name.endsWith("_total") || name.endsWith("_bytes") || name.endsWith("_up")
                    || name.endsWith("_connections"), name);
            }
        }
        return seen;
    }
}
