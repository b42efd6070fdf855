package io.rmqgw.gateway.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class StopDeadlineTest {

    @Test
    void aStopThatDoesNotFinishWithinItsBoundEndsTheProcess() throws Exception {
        AtomicInteger exitCode = new AtomicInteger(-1);
        CountDownLatch halted = new CountDownLatch(1);
        long t0 = System.nanoTime();
        StopDeadline.arm(Duration.ofMillis(200), new CountDownLatch(1), code -> {
            exitCode.set(code);
            halted.countDown();
        });
        assertTrue(halted.await(10, TimeUnit.SECONDS), "halted");
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(200), "not before the bound");
        assertEquals(StopDeadline.STOP_OVERRAN, exitCode.get());
    }

    @Test
    void aStopThatFinishesInTimeLeavesTheProcessAlone() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread deadline = StopDeadline.arm(Duration.ofSeconds(30), stopped, code -> calls.incrementAndGet());
        stopped.countDown();
        deadline.join(10_000);
        assertFalse(deadline.isAlive());
        assertEquals(0, calls.get());
    }
}
