package io.rmqgw.probe;

import io.rmqgw.probe.LatencyBudget.Breach;
import io.rmqgw.probe.LatencyBudget.Limit;
import io.rmqgw.probe.ProbeTally.Counts;
import io.rmqgw.tools.Histogram;
import io.rmqgw.tools.Json;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The outcome of one probe run, its exit code and its two renderings (text for people, JSON for
 * scripts). The run failed (exit 1) when a message was lost, a send failed, a latency bound was
 * breached, nothing was sent, or the run could not get going ({@link #error}).
 *
 * @param settings what was asked
 * @param runId    this run's id (in every message's properties and keys)
 * @param group    the consumer group used
 * @param counts   the tally at the end
 * @param error    why the run stopped early (cannot reach the name server, no route, consumer not ready),
 *                 or {@code null}
 * @param ready    time from the start until the consumer was ready (route found, queues owned and pulled)
 * @param sending  time from the first send to the last outcome
 * @param draining time from the last send outcome until everything arrived or the drain timeout
 * @param cleanup  {@code "ok"}, {@code "skipped"}, or what went wrong deleting the run's group
 * @param logDir   where the client logs went, or {@code null} once removed
 */
public record ProbeResult(ProbeSettings settings, String runId, String group, Counts counts, String error,
                          Duration ready, Duration sending, Duration draining, String cleanup, String logDir) {

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;

    private static final double[] REPORTED = {50, 90, 99, 100};

    public ProbeResult {
        Objects.requireNonNull(settings);
        Objects.requireNonNull(counts);
        ready = Objects.requireNonNullElse(ready, Duration.ZERO);
        sending = Objects.requireNonNullElse(sending, Duration.ZERO);
        draining = Objects.requireNonNullElse(draining, Duration.ZERO);
    }

    /** The latency bounds not met. */
    public List<Breach> breaches() {
        return settings.budget().check(counts.latencies());
    }

    /** Why the run failed, one short phrase each; empty when it passed. */
    public List<String> failures() {
        List<String> f = new ArrayList<>();
        if (error != null) {
            f.add(error);
        }
        if (counts.lost() > 0) {
            f.add(counts.lost() + " lost");
        }
        if (counts.sendErrors() > 0) {
            f.add(counts.sendErrors() + " send error" + (counts.sendErrors() == 1 ? "" : "s"));
        }
        if (error == null && counts.sent() == 0 && counts.sendErrors() == 0) {
            f.add("nothing sent");
        }
        if (error == null) {
            for (Breach b : breaches()) {
                f.add(b.toString());
            }
        }
        return f;
    }

    public boolean passed() {
        return failures().isEmpty();
    }

    /** 0 when the run passed, 1 otherwise. */
    public int exitCode() {
        return passed() ? OK : FAILED;
    }

    /** The human-readable report: a header, one line per aspect, then {@code OK} or {@code FAILED: reasons}. */
    public void printText(PrintWriter out) {
        Counts c = counts;
        out.println("rmqgw probe: run " + runId + " via " + settings.namesrv() + ", topic " + settings.topic()
            + ", group " + group + (ready.isZero() ? "" : "; consumer ready after " + seconds(ready)));
        out.println("  sent       " + c.sent() + " of " + settings.count() + " at " + number(settings.rate()) + "/s, "
            + settings.size() + " bytes each, in " + seconds(sending) + "; " + c.sendErrors() + " send error"
            + (c.sendErrors() == 1 ? "" : "s"));
        String received = "  received   " + c.received() + "; lost " + c.lost() + ", duplicates " + c.duplicates();
        if (c.receivedAfterSendError() > 0) {
            received += ", " + c.receivedAfterSendError() + " arrived although their send failed";
        }
        if (c.foreign() > 0) {
            received += " (ignored " + c.foreign() + " from other runs)";
        }
        out.println(received + "; waited " + seconds(draining) + " after the last send");
        Histogram l = c.latencies();
        if (l.count() == 0) {
            out.println("  latency    none measured (nothing received)");
        } else {
            out.println("  latency    p50 " + l.valueAt(50) + "ms, p90 " + l.valueAt(90) + "ms, p99 "
                + l.valueAt(99) + "ms, max " + l.max() + "ms (born timestamp to receipt, " + l.count()
                + " messages)");
        }
        if (!settings.budget().isEmpty()) {
            List<Breach> breaches = breaches();
            List<String> parts = new ArrayList<>();
            for (Limit limit : settings.budget().limits()) {
                boolean breached = breaches.stream().anyMatch(b -> b.limit().equals(limit));
                parts.add(limit + (breached ? " BREACHED" : " ok"));
            }
            out.println("  budget     " + String.join(", ", parts));
        }
        for (String e : c.errorSamples()) {
            out.println("  error      " + e);
        }
        if (cleanup != null && !"ok".equals(cleanup) && !"skipped".equals(cleanup)) {
            out.println("  cleanup    " + cleanup);
        }
        if (logDir != null) {
            out.println("  client log " + logDir);
        }
        List<String> failures = failures();
        out.println(failures.isEmpty() ? "OK" : "FAILED: " + String.join("; ", failures));
        out.flush();
    }

    /** The machine-readable report: one JSON object on one line. */
    public String toJson() {
        return Json.write(toMap());
    }

    /** The report's fields, in the order written. */
    public Map<String, Object> toMap() {
        Map<String, Object> root = new LinkedHashMap<>();
        List<String> failures = failures();
        root.put("status", failures.isEmpty() ? "ok" : "failed");
        root.put("exitCode", exitCode());
        root.put("failures", failures);
        root.put("runId", runId);
        root.put("namesrv", settings.namesrv());
        root.put("topic", settings.topic());
        root.put("group", group);
        root.put("rate", settings.rate());
        root.put("size", settings.size());
        root.put("requested", settings.count());
        Counts c = counts;
        root.put("attempted", c.attempted());
        root.put("sent", c.sent());
        root.put("sendErrors", c.sendErrors());
        root.put("received", c.received());
        root.put("lost", c.lost());
        root.put("duplicates", c.duplicates());
        root.put("foreign", c.foreign());
        root.put("receivedAfterSendError", c.receivedAfterSendError());
        Map<String, Object> latency = new LinkedHashMap<>();
        Histogram l = c.latencies();
        latency.put("samples", l.count());
        for (double p : REPORTED) {
            latency.put(p == 100 ? "max" : "p" + (int) p, l.count() == 0 ? null : l.valueAt(p));
        }
        root.put("latencyMs", latency);
        List<Map<String, Object>> budget = new ArrayList<>();
        List<Breach> breaches = breaches();
        for (Limit limit : settings.budget().limits()) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("limit", limit.toString());
            b.put("percentile", limit.percentile());
            b.put("boundMs", limit.bound().toMillis());
            b.put("observedMs", l.count() == 0 ? null : l.valueAt(limit.percentile()));
            b.put("ok", breaches.stream().noneMatch(x -> x.limit().equals(limit)));
            budget.add(b);
        }
        root.put("budget", budget);
        root.put("errors", c.errorSamples());
        root.put("error", error);
        root.put("readySeconds", secondsValue(ready));
        root.put("sendSeconds", secondsValue(sending));
        root.put("drainSeconds", secondsValue(draining));
        root.put("groupCleanup", cleanup);
        root.put("clientLogDir", logDir);
        return root;
    }

    private static String number(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }

    private static String seconds(Duration d) {
        return secondsValue(d) + "s";
    }

    private static double secondsValue(Duration d) {
        return BigDecimal.valueOf(d.toMillis()).divide(BigDecimal.valueOf(1000), 2, RoundingMode.HALF_UP).doubleValue();
    }
}
