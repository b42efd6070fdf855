package io.rmqgw.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.probe.LatencyBudget.Breach;
import io.rmqgw.tools.Histogram;
import java.time.Duration;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class LatencyBudgetTest {

    @Test
    void parsesOneOrSeveralBounds() {
        LatencyBudget one = LatencyBudget.parse("p99<=500ms");
        assertEquals(1, one.limits().size());
        assertEquals("p99", one.limits().get(0).name());
        assertEquals(99.0, one.limits().get(0).percentile());
        assertEquals(Duration.ofMillis(500), one.limits().get(0).bound());

        LatencyBudget several = LatencyBudget.parse(" p50 <= 50ms , P99.9<=1.5s,max<=2s ");
        assertEquals(List.of("p50", "p99.9", "max"), several.limits().stream().map(LatencyBudget.Limit::name).toList());
        assertEquals(99.9, several.limits().get(1).percentile());
        assertEquals(Duration.ofMillis(1500), several.limits().get(1).bound());
        assertEquals(100.0, several.limits().get(2).percentile());
        assertEquals("p50<=50ms,p99.9<=1.5s,max<=2s", several.toString());

        assertTrue(LatencyBudget.parse(null).isEmpty());
        assertTrue(LatencyBudget.parse("  ").isEmpty());
    }

    @Test
    void refusesMalformedBounds() {
        for (String bad : List.of("p99<500ms", "p99<=", "p99<=500", "p0<=1s", "p101<=1s", "q99<=1s", "p99<=-1s",
            "p99<=1s,", "p99<=1s,p99<=2s", "99<=1s")) {
            assertThrows(IllegalArgumentException.class, () -> LatencyBudget.parse(bad), bad);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LatencyBudget.parse("p99<=500"));
        assertTrue(e.getMessage().contains("unit"), e.getMessage());
    }

    @Test
    void checkReportsEveryBoundNotMet() {
        Histogram stats = Histogram.of(LongStream.rangeClosed(1, 100).toArray());
        assertEquals(List.of(), LatencyBudget.parse("p50<=50ms,p99<=99ms,max<=100ms").check(stats));

        List<Breach> breaches = LatencyBudget.parse("p50<=49ms,p99<=1s,max<=99ms").check(stats);
        assertEquals(2, breaches.size());
        assertEquals("p50", breaches.get(0).limit().name());
        assertEquals(50L, breaches.get(0).observed());
        assertEquals("p50 50ms > budget 49ms", breaches.get(0).toString());
        assertEquals("max", breaches.get(1).limit().name());
        assertEquals(100L, breaches.get(1).observed());

        assertEquals(List.of(), LatencyBudget.NONE.check(stats));
    }

    @Test
    void nothingReceivedBreachesEveryBound() {
        List<Breach> breaches = LatencyBudget.parse("p99<=10s").check(Histogram.of());
        assertEquals(1, breaches.size());
        assertNull(breaches.get(0).observed());
        assertTrue(breaches.get(0).toString().contains("not measured"), breaches.get(0).toString());
    }
}
