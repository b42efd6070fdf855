package io.rmqgw.loadgen;

import io.rmqgw.tools.Durations;
import io.rmqgw.tools.Histogram;
import io.rmqgw.tools.Json;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a run measured, as text and as one JSON object.
 *
 * @param settings      the run
 * @param clientVersion the RocketMQ client library's version
 * @param startedAt     when the run began
 * @param main          sends (produce, latency) or receipts (consume); latency: send (request to answer) for
 *                      sends, born timestamp to receipt for receipts
 * @param endToEnd      latency runs: receipts of the measured sends, born timestamp to receipt; else null
 * @param late          paced runs: scheduled sends skipped because the sending thread was still waiting for an
 *                      earlier answer (the rate then falls short of the target; latencies of the skipped sends
 *                      are not recorded, so a stall weighs less than it would in an open-loop load)
 * @param unfinished    asynchronous sends never answered before the end (not in any count)
 * @param expected      consume: messages expected (0: unknown); latency: measured successful sends
 * @param perClient     consume: messages each consumer received from its start until it shut down (warm-up, and
 *                      what arrived after the measurement while the consumers shut down one by one, included), in
 *                      instance order; else empty
 */
public record BenchResult(BenchSettings settings, String clientVersion, Instant startedAt, Tally.Summary main,
                          Tally.Summary endToEnd, long late, long unfinished, long expected, List<Long> perClient) {

    public BenchResult {
        perClient = List.copyOf(perClient);
    }

    /** A result without per-consumer counts (produce, latency). */
    public BenchResult(BenchSettings settings, String clientVersion, Instant startedAt, Tally.Summary main,
                       Tally.Summary endToEnd, long late, long unfinished, long expected) {
        this(settings, clientVersion, startedAt, main, endToEnd, late, unfinished, expected, List.of());
    }

    /** 0 when something was measured, 1 when nothing succeeded. */
    public int exitCode() {
        return main.ok() > 0 ? 0 : 1;
    }

    public Map<String, Object> toMap() {
        BenchSettings s = settings;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mode", s.mode().label());
        m.put("label", s.label());
        m.put("client", clientVersion);
        m.put("startedAt", startedAt.toString());
        m.put("namesrv", s.namesrv());
        m.put("topic", s.topic());
        m.put("threads", s.mode() == BenchSettings.Mode.CONSUME ? s.consumeThreads() : s.threads());
        m.put("size", s.size());
        m.put("async", s.async());
        m.put("window", s.async() ? s.window() : 0);
        m.put("rate", s.rate());
        m.put("clients", s.clients());
        if (s.fanout() != null) {
            // throughput and latency count operations: each writes batch messages over the destinations
            m.put("fanoutDestinations", s.fanout().destinations());
            m.put("fanoutBatch", s.fanout().batch());
            m.put("fanoutTopic", s.fanout().viaTopic());
        }
        if (s.mode() == BenchSettings.Mode.CONSUME) {
            m.put("workMs", s.work().toNanos() / 1e6);
            m.put("receivedPerClient", perClient);
        }
        m.put("warmupSeconds", s.warmup().toMillis() / 1000.0);
        m.put("durationSeconds", s.duration() == null ? null : s.duration().toMillis() / 1000.0);
        m.put("count", s.count());
        m.put("measuredSeconds", main.measuredSeconds());
        m.put("ok", main.ok());
        m.put("errors", main.errors());
        m.put("errorsByReason", main.errorsByReason());
        m.put("warmupOk", main.okWarmup());
        m.put("warmupErrors", main.errorsWarmup());
        m.put("tps", main.tps());
        m.put("mibPerSecond", main.tps() * s.size() / (1024.0 * 1024.0));
        m.put("latencyKind", s.mode() == BenchSettings.Mode.CONSUME ? "born-to-receipt" : "send");
        m.put("latencyUs", latency(main.latencyMicros()));
        if (endToEnd != null) {
            m.put("e2eReceived", endToEnd.ok());
            m.put("e2eUs", latency(endToEnd.latencyMicros()));
        }
        m.put("missedSlots", late);
        m.put("unfinished", unfinished);
        m.put("expected", expected);
        return m;
    }

    public String toJson() {
        return Json.write(toMap());
    }

    static Map<String, Object> latency(Histogram h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("count", h.count());
        m.put("p50", h.valueAt(50));
        m.put("p90", h.valueAt(90));
        m.put("p99", h.valueAt(99));
        m.put("p999", h.valueAt(99.9));
        m.put("max", h.max());
        m.put("mean", h.mean());
        return m;
    }

    public void printText(PrintWriter out) {
        BenchSettings s = settings;
        String what = s.mode() == BenchSettings.Mode.CONSUME ? "received" : "sent";
        out.printf(Locale.ROOT, "rmqgw bench %s%s: %s%n", s.mode().label(),
            s.label() == null ? "" : " [" + s.label() + "]", describe());
        out.printf(Locale.ROOT, "  measured    %.1f s after a %s warm-up: %,d %s, %,d errors (warm-up: %,d %s, %,d errors)%n",
            main.measuredSeconds(), Durations.format(s.warmup()), main.ok(), what, main.errors(), main.okWarmup(), what,
            main.errorsWarmup());
        out.printf(Locale.ROOT, "  throughput  %,.0f msg/s, %.1f MiB/s%n", main.tps(), main.tps() * s.size() / 1048576.0);
        out.printf(Locale.ROOT, "  latency     %s (%s)%n", text(main.latencyMicros()),
            s.mode() == BenchSettings.Mode.CONSUME
                ? "born timestamp to receipt: for a backlog this is mostly its age" : "send: request to answer");
        if (endToEnd != null) {
            out.printf(Locale.ROOT, "  end to end  %s (born timestamp to receipt, %,d of %,d measured sends received)%n",
                text(endToEnd.latencyMicros()), endToEnd.ok(), expected);
        }
        if (s.rate() > 0) {
            out.printf(Locale.ROOT, "  pacing      target %,.0f msg/s; %,d scheduled sends skipped (a thread still waiting"
                + " for an earlier answer)%n", s.rate(), late);
        }
        if (unfinished > 0) {
            out.printf(Locale.ROOT, "  unfinished  %,d asynchronous sends were never answered%n", unfinished);
        }
        if (s.mode() == BenchSettings.Mode.CONSUME && expected > 0 && main.ok() + main.okWarmup() < expected) {
            out.printf(Locale.ROOT, "  incomplete  %,d of %,d expected messages arrived%n", main.ok() + main.okWarmup(),
                expected);
        }
        if (!perClient.isEmpty()) {
            long min = perClient.stream().mapToLong(Long::longValue).min().orElse(0);
            long max = perClient.stream().mapToLong(Long::longValue).max().orElse(0);
            long idle = perClient.stream().filter(n -> n == 0).count();
            out.printf(Locale.ROOT, "  consumers   %d: %,d to %,d messages each (from the start until it shut down), %d got none%n",
                perClient.size(), min, max, idle);
        }
        out.printf(Locale.ROOT, "  errors      %s%n", main.errorsByReason().isEmpty() ? "none" : main.errorsByReason());
        out.flush();
    }

    private String describe() {
        BenchSettings s = settings;
        StringBuilder sb = new StringBuilder(128);
        switch (s.mode()) {
            case CONSUME -> {
                sb.append(s.clients()).append(s.clients() == 1 ? " consumer x " : " consumers x ").append(s.consumeThreads())
                    .append(" consume threads, pull batch ").append(s.pullBatch());
                if (!s.work().isZero()) {
                    sb.append(", ").append(Durations.format(s.work())).append(" of work per message");
                }
            }
            default -> {
                sb.append(s.threads()).append(" threads, ");
                sb.append(s.async() ? "async (window " + s.window() + ")" : "sync");
                if (s.rate() > 0) {
                    sb.append(String.format(Locale.ROOT, ", %,.0f msg/s", s.rate()));
                }
            }
        }
        if (s.fanout() != null) {
            BenchSettings.FanoutSends f = s.fanout();
            sb.append(", operations of ").append(f.batch()).append(" messages to ").append(String.join(",", f.destinations()))
                .append(f.viaTopic() == null ? " (a batch send per topic)" : " (one batch to " + f.viaTopic() + ")");
        }
        sb.append(", ").append(s.size()).append(" B, topic ").append(s.topic()).append(" via ").append(s.namesrv())
            .append(" (client ").append(clientVersion).append(')');
        return sb.toString();
    }

    static String text(Histogram h) {
        if (h.count() == 0) {
            return "none measured";
        }
        return String.format(Locale.ROOT, "p50 %s, p90 %s, p99 %s, p999 %s, max %s, mean %s", ms(h.valueAt(50)),
            ms(h.valueAt(90)), ms(h.valueAt(99)), ms(h.valueAt(99.9)), ms(h.max()), ms(Math.round(h.mean())));
    }

    /** Microseconds as milliseconds with a sensible number of digits. */
    static String ms(long micros) {
        double ms = micros / 1000.0;
        if (ms < 10) {
            return String.format(Locale.ROOT, "%.2fms", ms);
        }
        if (ms < 100) {
            return String.format(Locale.ROOT, "%.1fms", ms);
        }
        return String.format(Locale.ROOT, "%.0fms", ms);
    }
}
