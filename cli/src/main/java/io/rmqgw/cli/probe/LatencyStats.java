package io.rmqgw.cli.probe;

import java.util.Arrays;

/**
 * End-to-end latencies in milliseconds (born timestamp to receipt), one per message received, and
 * their percentiles by the nearest-rank method: the p-th percentile of n sorted samples is the
 * sample at rank {@code ceil(p / 100 * n)}, so every reported value was observed, p100 is the maximum
 * and a single slow message out of 100 shows in p99 only when it is the slowest one.
 */
public final class LatencyStats {

    private final long[] sorted;

    /** {@code millis} is copied; negative values (a clock step between send and receipt) count as 0. */
    public LatencyStats(long[] millis) {
        sorted = millis.clone();
        for (int i = 0; i < sorted.length; i++) {
            sorted[i] = Math.max(0, sorted[i]);
        }
        Arrays.sort(sorted);
    }

    public int count() {
        return sorted.length;
    }

    /**
     * The {@code percentile}-th percentile (0 < percentile <= 100) in milliseconds.
     *
     * @throws IllegalStateException when there are no samples
     */
    public long percentile(double percentile) {
        if (!(percentile > 0 && percentile <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], was " + percentile);
        }
        if (sorted.length == 0) {
            throw new IllegalStateException("no latency samples");
        }
        // rank = ceil(p/100 * n) in integers (p in millionths of a percent), so p99 of 100 samples is rank 99
        long scaled = Math.round(percentile * 1_000_000L) * (long) sorted.length;
        long rank = (scaled + 100_000_000L - 1) / 100_000_000L;
        int index = (int) Math.min(sorted.length - 1, Math.max(0, rank - 1));
        return sorted[index];
    }

    public long max() {
        return percentile(100);
    }

    public long min() {
        if (sorted.length == 0) {
            throw new IllegalStateException("no latency samples");
        }
        return sorted[0];
    }
}
