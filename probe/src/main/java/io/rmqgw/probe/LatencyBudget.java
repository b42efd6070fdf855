package io.rmqgw.probe;

import io.rmqgw.tools.Durations;
import io.rmqgw.tools.Histogram;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Upper bounds on end-to-end latency percentiles, written {@code p99<=500ms}, several separated by
 * commas: {@code p50<=50ms,p99<=500ms,max<=2s}. A percentile is {@code pN} with {@code 0 < N <= 100}
 * ({@code p99.9} allowed) or {@code max}; the bound is a duration ({@link Durations}).
 *
 * @param limits the bounds, in the order written; empty means no budget
 */
public record LatencyBudget(List<Limit> limits) {

    /** No budget: nothing can be breached. */
    public static final LatencyBudget NONE = new LatencyBudget(List.of());

    private static final Pattern LIMIT =
        Pattern.compile("(max|p(\\d{1,3}(?:\\.\\d{1,3})?))\\s*<=\\s*(\\S+)", Pattern.CASE_INSENSITIVE);

    /**
     * One bound.
     *
     * @param name       {@code p99}, {@code p99.9} or {@code max}, as written (lower case)
     * @param percentile in (0, 100]; 100 for {@code max}
     * @param bound      the largest acceptable latency
     */
    public record Limit(String name, double percentile, Duration bound) {
        @Override
        public String toString() {
            return name + "<=" + Durations.format(bound);
        }
    }

    /**
     * A bound not met.
     *
     * @param limit    the bound
     * @param observed the latency measured in milliseconds, or {@code null} when nothing was received
     */
    public record Breach(Limit limit, Long observed) {
        @Override
        public String toString() {
            return observed == null
                ? limit.name() + " not measured (no message received), budget " + Durations.format(limit.bound())
                : limit.name() + " " + observed + "ms > budget " + Durations.format(limit.bound());
        }
    }

    public LatencyBudget {
        limits = List.copyOf(limits);
    }

    /**
     * Parses {@code text}; {@code null} or blank is {@link #NONE}.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static LatencyBudget parse(String text) {
        if (text == null || text.isBlank()) {
            return NONE;
        }
        List<Limit> limits = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String p = part.trim();
            Matcher m = LIMIT.matcher(p);
            if (!m.matches()) {
                throw new IllegalArgumentException("expected PERCENTILE<=DURATION such as p99<=500ms or max<=2s, was '"
                    + p + "'");
            }
            String name = m.group(1).toLowerCase(Locale.ROOT);
            double percentile = m.group(2) == null ? 100 : Double.parseDouble(m.group(2));
            if (!(percentile > 0 && percentile <= 100)) {
                throw new IllegalArgumentException("percentile must be above 0 and at most 100, was '" + name + "'");
            }
            Duration bound;
            if (m.group(3).chars().allMatch(c -> Character.isDigit(c) || c == '.')) {
                // Durations refuses a bare number too; this says it in a latency's terms (ms or s)
                throw new IllegalArgumentException(name + ": the bound needs a unit, e.g. " + m.group(3) + "ms or "
                    + m.group(3) + "s, was '" + p + "'");
            }
            bound = Durations.parse(name, m.group(3), Durations.TOOL_MAX);
            if (limits.stream().anyMatch(l -> l.percentile() == percentile)) {
                throw new IllegalArgumentException(name + " is given twice");
            }
            limits.add(new Limit(name, percentile, bound));
        }
        return new LatencyBudget(limits);
    }

    /** The bounds {@code latencies} does not meet (every bound is breached when nothing was received). */
    public List<Breach> check(Histogram latencies) {
        List<Breach> breaches = new ArrayList<>();
        for (Limit limit : limits) {
            if (latencies.count() == 0) {
                breaches.add(new Breach(limit, null));
                continue;
            }
            long observed = latencies.valueAt(limit.percentile());
            if (observed > limit.bound().toMillis()) {
                breaches.add(new Breach(limit, observed));
            }
        }
        return breaches;
    }

    public boolean isEmpty() {
        return limits.isEmpty();
    }

    @Override
    public String toString() {
        return String.join(",", limits.stream().map(Limit::toString).toList());
    }
}
