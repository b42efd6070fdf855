package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogRateLimiterTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final LogRateLimiter limiter = new LogRateLimiter(3, Duration.ofSeconds(10), clock::get);

    private void advance(Duration d) {
        clock.addAndGet(d.toNanos());
    }

    @Test
    void letsTheBudgetThroughThenSuppresses() {
        assertEquals(0, limiter.tryAcquire());
        assertEquals(0, limiter.tryAcquire());
        assertEquals(0, limiter.tryAcquire());
        for (int i = 0; i < 1000; i++) {
            assertEquals(LogRateLimiter.SUPPRESS, limiter.tryAcquire());
        }
    }

    @Test
    void theFirstLineOfTheNextWindowReportsWhatWasSuppressed() {
        for (int i = 0; i < 10; i++) {
            limiter.tryAcquire();
        }
        advance(Duration.ofSeconds(9));
        assertEquals(LogRateLimiter.SUPPRESS, limiter.tryAcquire(), "the window still runs");
        advance(Duration.ofSeconds(1));
        assertEquals(8, limiter.tryAcquire(), "7 in the first 0 s and 1 at 9 s");
        assertEquals(0, limiter.tryAcquire(), "reported once");
        assertEquals(0, limiter.tryAcquire());
        assertEquals(LogRateLimiter.SUPPRESS, limiter.tryAcquire());
    }

    @Test
    void aFloodThatStopsIsReportedBySummaryOnceItsWindowEnded() {
        for (int i = 0; i < 7_586; i++) {
            limiter.tryAcquire();
        }
        assertEquals(0, limiter.takeSuppressed(), "not while the window runs: its next line may report them");
        advance(Duration.ofSeconds(10));
        assertEquals(7_583, limiter.takeSuppressed());
        assertEquals(0, limiter.takeSuppressed(), "reported once");
        assertEquals(0, limiter.tryAcquire(), "the summary opened a fresh window and took the count");
    }

    @Test
    void nothingSuppressedNothingToSummarize() {
        limiter.tryAcquire();
        advance(Duration.ofMinutes(5));
        assertEquals(0, limiter.takeSuppressed());
        assertEquals(0, limiter.tryAcquire());
    }

    @Test
    void linesAcrossThreadsStayWithinTheBudgetAndEveryEventIsCounted() throws Exception {
        LogRateLimiter shared = new LogRateLimiter(5, Duration.ofHours(1), clock::get);
        AtomicLong written = new AtomicLong();
        AtomicLong held = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch done = new CountDownLatch(4);
        for (int t = 0; t < 4; t++) {
            pool.execute(() -> {
                for (int i = 0; i < 2_500; i++) {
                    long r = shared.tryAcquire();
                    (r == LogRateLimiter.SUPPRESS ? held : written).incrementAndGet();
                }
                done.countDown();
            });
        }
        done.await(30, TimeUnit.SECONDS);
        pool.shutdown();
        assertEquals(5, written.get());
        assertEquals(9_995, held.get());
        advance(Duration.ofHours(1));
        assertEquals(9_995, shared.takeSuppressed());
    }

    @Test
    void refusesAnEmptyBudget() {
        assertThrows(IllegalArgumentException.class, () -> new LogRateLimiter(0, Duration.ofSeconds(1), clock::get));
        assertThrows(IllegalArgumentException.class, () -> new LogRateLimiter(1, Duration.ZERO, clock::get));
    }
}
