package io.rmqgw.cli.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class LatencyStatsTest {

    @Test
    void nearestRankPercentilesOfOneToHundred() {
        // shuffled on purpose: the stats sort a copy
        long[] samples = LongStream.rangeClosed(1, 100).map(i -> (i * 37) % 100 + 1).toArray();
        LatencyStats s = new LatencyStats(samples);
        assertEquals(100, s.count());
        assertEquals(50, s.percentile(50));
        assertEquals(90, s.percentile(90));
        assertEquals(99, s.percentile(99));
        assertEquals(100, s.max());
        assertEquals(1, s.min());
        assertEquals(1, s.percentile(0.5));
        assertEquals(100, s.percentile(99.5));
    }

    @Test
    void oneSlowMessageShowsInMaxAndInP99OnlyWhenFewSamples() {
        long[] hundred = new long[100];
        java.util.Arrays.fill(hundred, 5);
        hundred[42] = 900;
        LatencyStats s = new LatencyStats(hundred);
        assertEquals(5, s.percentile(99), "rank 99 of 100 is not the slowest");
        assertEquals(900, s.max());

        long[] ten = new long[10];
        java.util.Arrays.fill(ten, 5);
        ten[3] = 900;
        assertEquals(900, new LatencyStats(ten).percentile(99), "rank ceil(9.9) = 10 of 10");
        assertEquals(5, new LatencyStats(ten).percentile(90));
    }

    @Test
    void finePercentilesAndSingleSample() {
        LatencyStats thousand = new LatencyStats(LongStream.rangeClosed(1, 1000).toArray());
        assertEquals(999, thousand.percentile(99.9));
        assertEquals(990, thousand.percentile(99));
        LatencyStats one = new LatencyStats(new long[] {7});
        assertEquals(7, one.percentile(50));
        assertEquals(7, one.percentile(99));
        assertEquals(7, one.max());
    }

    @Test
    void negativeLatenciesFromAClockStepCountAsZero() {
        LatencyStats s = new LatencyStats(new long[] {-3, 4});
        assertEquals(0, s.min());
        assertEquals(4, s.max());
    }

    @Test
    void noSamplesAndBadPercentiles() {
        LatencyStats empty = new LatencyStats(new long[0]);
        assertEquals(0, empty.count());
        assertThrows(IllegalStateException.class, () -> empty.percentile(50));
        LatencyStats s = new LatencyStats(new long[] {1});
        assertThrows(IllegalArgumentException.class, () -> s.percentile(0));
        assertThrows(IllegalArgumentException.class, () -> s.percentile(100.1));
    }

    @Test
    void inputIsCopied() {
        long[] samples = {3, 2, 1};
        LatencyStats s = new LatencyStats(samples);
        samples[0] = 1_000;
        assertEquals(3, s.max());
    }
}
