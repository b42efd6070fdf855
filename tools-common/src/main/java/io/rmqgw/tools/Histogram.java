package io.rmqgw.tools;

/**
 * The latency histogram of rmqgw's tools: {@code rmqgw bench} records microseconds, {@code rmqgw probe}
 * milliseconds. A log-linear histogram of non-negative longs, the layout of HdrHistogram with three
 * significant digits: values below 2048 are counted exactly, larger ones in buckets 1/1024 of their power
 * of two wide, so a percentile is off by less than 0.1%. Values above {@link #MAX_VALUE} (about 12.7 days
 * in microseconds) count as {@code MAX_VALUE}; negative ones (a clock step between two timestamps) as 0.
 *
 * <p>Percentiles by the nearest-rank method: the p-th percentile of n values is the value at rank
 * {@code ceil(p / 100 * n)}, so p100 is the maximum and below 2048 every reported value was observed.
 *
 * <p>Not thread-safe: each recording thread owns one, and they are {@link #add merged} afterwards.
 * Self-contained (no dependency but the JDK) so that the same source builds against every client version
 * the bench runs with.
 */
public final class Histogram {

    /** Largest value kept as is: 2^40 - 1. */
    public static final long MAX_VALUE = (1L << 40) - 1;

    private static final int EXACT = 2048;
    private static final int HALF = 1024;
    private static final int SUB_BITS = 10;
    /** Index of MAX_VALUE plus one. */
    private static final int SIZE = index(MAX_VALUE) + 1;

    private final long[] counts = new long[SIZE];
    private long count;
    private long min = Long.MAX_VALUE;
    private long max;
    private double sum;

    /** A histogram holding {@code values}. */
    public static Histogram of(long... values) {
        Histogram h = new Histogram();
        for (long v : values) {
            h.record(v);
        }
        return h;
    }

    /** Counts {@code value}; negative values count as 0. */
    public void record(long value) {
        long v = value < 0 ? 0 : Math.min(value, MAX_VALUE);
        counts[index(v)]++;
        count++;
        sum += v;
        if (v < min) {
            min = v;
        }
        if (v > max) {
            max = v;
        }
    }

    /** Adds every value {@code other} holds. */
    public void add(Histogram other) {
        if (other.count == 0) {
            return;
        }
        long[] o = other.counts;
        for (int i = 0; i < o.length; i++) {
            counts[i] += o[i];
        }
        count += other.count;
        sum += other.sum;
        min = Math.min(min, other.min);
        max = Math.max(max, other.max);
    }

    public void reset() {
        java.util.Arrays.fill(counts, 0);
        count = 0;
        min = Long.MAX_VALUE;
        max = 0;
        sum = 0;
    }

    public long count() {
        return count;
    }

    /** The largest value recorded (exact), 0 when empty. */
    public long max() {
        return max;
    }

    /** The smallest value recorded (exact), 0 when empty. */
    public long min() {
        return count == 0 ? 0 : min;
    }

    public double mean() {
        return count == 0 ? 0 : sum / count;
    }

    /**
     * The value at {@code percentile} (0-100): the smallest recorded value such that at least that
     * share of all values is at or below it, reported as the highest value of its bucket (never above
     * {@link #max()}, never below {@link #min()}); 0 when empty. {@code valueAt(100)} is the max.
     */
    public long valueAt(double percentile) {
        if (count == 0) {
            return 0;
        }
        if (!(percentile >= 0) || percentile > 100) {
            throw new IllegalArgumentException("percentile must be between 0 and 100, was " + percentile);
        }
        if (percentile == 100) {
            return max;
        }
        // rank of the value, 1-based: ceil(p/100 * count), at least 1
        long rank = Math.max(1, (long) Math.ceil(percentile / 100.0 * count - 1e-9));
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return Math.max(min, Math.min(max, highestOf(i)));
            }
        }
        return max;
    }

    /** The bucket of {@code v} (0 <= v <= MAX_VALUE). */
    static int index(long v) {
        if (v < EXACT) {
            return (int) v;
        }
        int msb = 63 - Long.numberOfLeadingZeros(v);
        int shift = msb - SUB_BITS;
        int sub = (int) (v >>> shift);
        return EXACT + (shift - 1) * HALF + (sub - HALF);
    }

    /** The smallest value that falls into bucket {@code i}. */
    static long lowestOf(int i) {
        if (i < EXACT) {
            return i;
        }
        int shift = (i - EXACT) / HALF + 1;
        long sub = (i - EXACT) % HALF + HALF;
        return sub << shift;
    }

    /** The largest value that falls into bucket {@code i}. */
    static long highestOf(int i) {
        if (i < EXACT) {
            return i;
        }
        int shift = (i - EXACT) / HALF + 1;
        long sub = (i - EXACT) % HALF + HALF;
        return ((sub + 1) << shift) - 1;
    }
}
