package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.metrics.GatewayMetrics;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class AllocationFailuresTest {

    @Test
    void recentFailuresSayTheGatewayCannotServeForTenSecondsAfterTheLast() {
        long[] now = {TimeUnit.SECONDS.toNanos(100) + 1}; // odd: a recorded time is never 0
        GatewayMetrics metrics = GatewayMetrics.prometheus();
        AllocationFailures failures = new AllocationFailures(metrics, () -> now[0]);
        assertNull(failures.recentReason(), "none yet");
        failures.record();
        failures.record();
        String why = failures.recentReason();
        assertNotNull(why);
        assertTrue(why.contains("2 failures since start"), why);
        now[0] += TimeUnit.SECONDS.toNanos(9);
        assertNotNull(failures.recentReason());
        now[0] += TimeUnit.SECONDS.toNanos(1);
        assertNull(failures.recentReason(), "back 10 s after the last");
        assertEquals(2, failures.count());
        assertTrue(metrics.scrape().contains("rmqgw_allocation_failures_total 2.0"), "counted");
    }

    @Test
    void outOfMemoryErrorsAreAllocationFailures() {
        assertTrue(AllocationFailures.isAllocationFailure(new OutOfMemoryError("Cannot reserve 4194304 bytes of direct buffer memory")));
        assertFalse(AllocationFailures.isAllocationFailure(new IllegalStateException()));
    }
}
