package io.rmqgw.testing;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/** Polls a condition until it holds or a timeout passes: tests never sleep a fixed time. */
public final class Await {

    private Await() {
    }

    /** Polls every 50 ms; throws AssertionError with {@code what} (and the last exception) on timeout. */
    public static void until(String what, Duration timeout, Callable<Boolean> condition) throws InterruptedException {
        until(() -> what, timeout, Duration.ofMillis(50), condition);
    }

    public static void until(Supplier<String> what, Duration timeout, Duration poll, Callable<Boolean> condition)
        throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (true) {
            try {
                if (Boolean.TRUE.equals(condition.call())) {
                    return;
                }
                last = null;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                AssertionError error = new AssertionError("timed out after " + timeout + " waiting for " + what.get());
                if (last != null) {
                    error.initCause(last);
                }
                throw error;
            }
            Thread.sleep(poll.toMillis());
        }
    }
}
