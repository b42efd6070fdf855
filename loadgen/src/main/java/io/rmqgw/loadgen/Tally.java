package io.rmqgw.loadgen;

import io.rmqgw.tools.Histogram;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * The bench's accounting: which operations count, how many succeeded and failed, their latencies.
 *
 * <p>Time runs from {@code start}: the first {@code warmup} is the warm-up, whose operations are
 * counted apart and left out of every result; then the measurement. An operation belongs to the
 * phase in which it began ({@link #begin}), whenever it completes. The measurement ends after
 * {@code duration}, or, in count mode, after {@code count} operations began in it; what began in it
 * is then waited for, and the measured time runs from the end of the warm-up to the last measured
 * completion. Throughput is measured successes over that time.
 *
 * <p>Thread-safe: every recording thread gets its own {@link Histogram} (kept in a list and merged by
 * {@link #summary}, which callers invoke after the recording threads are done).
 */
public final class Tally {

    /** Where an operation falls. */
    public enum Phase {
        WARMUP, MEASURE, DONE
    }

    private final long measureStart;
    private final long measureEnd;
    private final long count;

    private final AtomicLong tickets = new AtomicLong();
    private final LongAdder okWarmup = new LongAdder();
    private final LongAdder errWarmup = new LongAdder();
    private final LongAdder ok = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder okAll = new LongAdder();
    private final LongAdder errAll = new LongAdder();
    private final LongAccumulator lastMeasuredEnd = new LongAccumulator(Math::max, Long.MIN_VALUE);
    private final Map<String, LongAdder> errorsByReason = new ConcurrentHashMap<>();
    private final List<Histogram> histograms = new ArrayList<>();
    private final ThreadLocal<Histogram> local = ThreadLocal.withInitial(this::newHistogram);

    /**
     * @param startNanos  {@link System#nanoTime()} at the start
     * @param warmupNanos length of the warm-up (0: none)
     * @param durationNanos length of the measurement; {@code Long.MAX_VALUE}: until stopped (count mode, or
     *                    a consumer that stops when everything arrived)
     * @param count       count mode: this many operations make the measurement; 0 for duration mode
     */
    public Tally(long startNanos, long warmupNanos, long durationNanos, long count) {
        if (warmupNanos < 0 || durationNanos <= 0 || count < 0) {
            throw new IllegalArgumentException("warmup " + warmupNanos + ", duration " + durationNanos + ", count " + count);
        }
        this.measureStart = startNanos + warmupNanos;
        this.measureEnd = durationNanos == Long.MAX_VALUE || Long.MAX_VALUE - measureStart < durationNanos
            ? Long.MAX_VALUE : measureStart + durationNanos;
        this.count = count;
    }

    /** The phase an operation beginning at {@code now} belongs to; in count mode this takes one of the tickets. */
    public Phase begin(long now) {
        if (now - measureStart < 0) {
            return Phase.WARMUP;
        }
        if (measureEnd != Long.MAX_VALUE && now - measureEnd >= 0) {
            return Phase.DONE;
        }
        if (count > 0) {
            return tickets.getAndIncrement() < count ? Phase.MEASURE : Phase.DONE;
        }
        return Phase.MEASURE;
    }

    /** The phase at {@code now} without taking a ticket: WARMUP, MEASURE, or DONE once the duration is over. */
    public Phase phaseAt(long now) {
        if (now - measureStart < 0) {
            return Phase.WARMUP;
        }
        if (measureEnd != Long.MAX_VALUE && now - measureEnd >= 0) {
            return Phase.DONE;
        }
        if (count > 0 && tickets.get() >= count) {
            return Phase.DONE;
        }
        return Phase.MEASURE;
    }

    /** A success of an operation of {@code phase} that completed at {@code endNanos} after {@code latencyMicros}. */
    public void success(Phase phase, long endNanos, long latencyMicros) {
        okAll.increment();
        switch (phase) {
            case WARMUP -> okWarmup.increment();
            case MEASURE -> {
                ok.increment();
                local.get().record(latencyMicros);
                lastMeasuredEnd.accumulate(endNanos);
            }
            default -> {
            }
        }
    }

    /** A failure of an operation of {@code phase} that ended at {@code endNanos}; {@code reason} names its kind. */
    public void failure(Phase phase, long endNanos, String reason) {
        errAll.increment();
        switch (phase) {
            case WARMUP -> errWarmup.increment();
            case MEASURE -> {
                errors.increment();
                errorsByReason.computeIfAbsent(reason == null ? "unknown" : reason, r -> new LongAdder()).increment();
                lastMeasuredEnd.accumulate(endNanos);
            }
            default -> {
            }
        }
    }

    /** Successes so far, all phases (for progress lines). */
    public long okSoFar() {
        return okAll.sum();
    }

    /** Failures so far, all phases (for progress lines). */
    public long errorsSoFar() {
        return errAll.sum();
    }

    /** Measured operations (successes and failures) so far. */
    public long measuredSoFar() {
        return ok.sum() + errors.sum();
    }

    public long measureStartNanos() {
        return measureStart;
    }

    /** The end of the measurement by duration, {@code Long.MAX_VALUE} when it ends otherwise. */
    public long measureEndNanos() {
        return measureEnd;
    }

    /** The results so far; call once the recording threads are done for exact figures. */
    public Summary summary() {
        return summary(Long.MIN_VALUE);
    }

    /**
     * The results, the measured time running at least to {@code endNanos}: a run that ended because its
     * duration passed (or because it gave up waiting) counts the whole time, including a stall at its end in
     * which nothing completed, not just up to the last completion.
     */
    public Summary summary(long endNanos) {
        Histogram merged = new Histogram();
        synchronized (histograms) {
            for (Histogram h : histograms) {
                merged.add(h);
            }
        }
        long last = Math.max(lastMeasuredEnd.get(), endNanos);
        long measuredNanos = last == Long.MIN_VALUE ? 0 : Math.max(0, last - measureStart);
        Map<String, Long> reasons = new LinkedHashMap<>();
        errorsByReason.entrySet().stream()
            .sorted(Comparator.comparing((Map.Entry<String, LongAdder> e) -> -e.getValue().sum())
                .thenComparing(Map.Entry::getKey))
            .forEach(e -> reasons.put(e.getKey(), e.getValue().sum()));
        return new Summary(okWarmup.sum(), errWarmup.sum(), ok.sum(), errors.sum(), measuredNanos, reasons, merged);
    }

    private Histogram newHistogram() {
        Histogram h = new Histogram();
        synchronized (histograms) {
            histograms.add(h);
        }
        return h;
    }

    /**
     * What a run measured.
     *
     * @param okWarmup       successes in the warm-up (not in any figure below)
     * @param errorsWarmup   failures in the warm-up
     * @param ok             measured successes
     * @param errors         measured failures
     * @param measuredNanos  from the end of the warm-up to the last measured completion
     * @param errorsByReason measured failures by kind, most frequent first
     * @param latencyMicros  latencies of the measured successes, in microseconds
     */
    public record Summary(long okWarmup, long errorsWarmup, long ok, long errors, long measuredNanos,
                          Map<String, Long> errorsByReason, Histogram latencyMicros) {

        /** Measured successes per second (0 when nothing was measured). */
        public double tps() {
            return measuredNanos <= 0 ? 0 : ok * 1e9 / measuredNanos;
        }

        public double measuredSeconds() {
            return measuredNanos / 1e9;
        }
    }
}
