package io.rmqgw.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The nearest-rank percentiles the probe reports (milliseconds, exact below 2048). */
class HistogramPercentileTest {

    @Test
    void nearestRankPercentilesOfOneToHundred() {
        // shuffled on purpose: order of recording does not matter
        Histogram s = Histogram.of(LongStream.rangeClosed(1, 100).map(i -> (i * 37) % 100 + 1).toArray());
        assertEquals(100, s.count());
        assertEquals(50, s.valueAt(50));
        assertEquals(90, s.valueAt(90));
        assertEquals(99, s.valueAt(99));
        assertEquals(100, s.max());
        assertEquals(1, s.min());
        assertEquals(1, s.valueAt(0.5));
        assertEquals(100, s.valueAt(99.5));
    }

    @Test
    void oneSlowMessageShowsInMaxAndInP99OnlyWhenFewSamples() {
        long[] hundred = new long[100];
        java.util.Arrays.fill(hundred, 5);
        hundred[42] = 900;
        Histogram s = Histogram.of(hundred);
        assertEquals(5, s.valueAt(99), "rank 99 of 100 is not the slowest");
        assertEquals(900, s.max());

        long[] ten = new long[10];
        java.util.Arrays.fill(ten, 5);
        ten[3] = 900;
        assertEquals(900, Histogram.of(ten).valueAt(99), "rank ceil(9.9) = 10 of 10");
        assertEquals(5, Histogram.of(ten).valueAt(90));
    }

    @Test
    void finePercentilesAndSingleSample() {
        Histogram thousand = Histogram.of(LongStream.rangeClosed(1, 1000).toArray());
        assertEquals(999, thousand.valueAt(99.9));
        assertEquals(990, thousand.valueAt(99));
        Histogram one = Histogram.of(7);
        assertEquals(7, one.valueAt(50));
        assertEquals(7, one.valueAt(99));
        assertEquals(7, one.max());
    }

    @Test
    void negativeLatenciesFromAClockStepCountAsZero() {
        Histogram s = Histogram.of(-3, 4);
        assertEquals(0, s.min());
        assertEquals(4, s.max());
    }

    @Test
    void noSamples() {
        Histogram empty = Histogram.of();
        assertEquals(0, empty.count());
        assertEquals(0, empty.valueAt(50));
        assertEquals(0, empty.max());
    }
}
