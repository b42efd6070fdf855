package io.rmqgw.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HistogramTest {

    @Test
    void emptyHistogramReportsZeros() {
        Histogram h = new Histogram();
        assertEquals(0, h.count());
        assertEquals(0, h.valueAt(50));
        assertEquals(0, h.valueAt(100));
        assertEquals(0, h.max());
        assertEquals(0, h.min());
        assertEquals(0.0, h.mean());
    }

    @Test
    void smallValuesAreExact() {
        Histogram h = new Histogram();
        for (int v = 1; v <= 1000; v++) {
            h.record(v);
        }
        assertEquals(1000, h.count());
        assertEquals(500, h.valueAt(50));
        assertEquals(990, h.valueAt(99));
        assertEquals(999, h.valueAt(99.9));
        assertEquals(1000, h.valueAt(100));
        assertEquals(1, h.valueAt(0));
        assertEquals(500.5, h.mean(), 1e-9);
    }

    @Test
    void bucketsCoverEveryValueOnceAndInOrder() {
        long previousHigh = -1;
        for (int i = 0; i < Histogram.index(Histogram.MAX_VALUE) + 1; i++) {
            long low = Histogram.lowestOf(i);
            long high = Histogram.highestOf(i);
            assertEquals(previousHigh + 1, low, "bucket " + i);
            assertTrue(high >= low);
            assertEquals(i, Histogram.index(low));
            assertEquals(i, Histogram.index(high));
            // width at most 1/1024 of the value: three significant digits
            assertTrue(high - low <= Math.max(0, low / 1024), "bucket " + i + " " + low + ".." + high);
            previousHigh = high;
        }
        assertEquals(Histogram.MAX_VALUE, previousHigh);
    }

    @Test
    void percentilesOfLargeValuesAreWithinATenthOfAPercent() {
        SplittableRandom r = new SplittableRandom(7);
        long[] values = new long[100_000];
        Histogram h = new Histogram();
        for (int i = 0; i < values.length; i++) {
            // log-uniform from 1 us to about 10 s
            values[i] = (long) Math.exp(r.nextDouble() * Math.log(10_000_000));
            h.record(values[i]);
        }
        Arrays.sort(values);
        for (double p : new double[] {50, 90, 99, 99.9}) {
            long exact = values[(int) Math.ceil(p / 100 * values.length) - 1];
            long got = h.valueAt(p);
            assertTrue(got >= exact && got <= exact + Math.max(1, exact / 1000), "p" + p + ": " + got + " vs " + exact);
        }
        assertEquals(values[values.length - 1], h.max());
        assertEquals(values[0], h.min());
    }

    @Test
    void mergeAddsCountsAndExtremes() {
        Histogram a = new Histogram();
        Histogram b = new Histogram();
        for (int i = 0; i < 90; i++) {
            a.record(1_000);
        }
        for (int i = 0; i < 10; i++) {
            b.record(50_000);
        }
        Histogram m = new Histogram();
        m.add(a);
        m.add(b);
        m.add(new Histogram());
        assertEquals(100, m.count());
        assertEquals(1_000, m.valueAt(90));
        assertTrue(Math.abs(m.valueAt(91) - 50_000) <= 50, "p91 " + m.valueAt(91));
        assertEquals(50_000, m.max());
        assertEquals(1_000, m.min());
        assertEquals(5_900, m.mean(), 1e-9);
        m.reset();
        assertEquals(0, m.count());
        assertEquals(0, m.valueAt(99));
    }

    @Test
    void outOfRangeValuesAreClampedAndBadPercentilesRefused() {
        Histogram h = new Histogram();
        h.record(-5);
        h.record(Long.MAX_VALUE);
        assertEquals(0, h.min());
        assertEquals(Histogram.MAX_VALUE, h.max());
        assertThrows(IllegalArgumentException.class, () -> h.valueAt(101));
        assertThrows(IllegalArgumentException.class, () -> h.valueAt(-1));
        assertThrows(IllegalArgumentException.class, () -> h.valueAt(Double.NaN));
    }
}
