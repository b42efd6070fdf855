package io.rmqgw.testing;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * Polls a condition until it holds or a timeout passes: tests never sleep a fixed time. {@link #holds} is for the
 * one thing polling cannot shorten, that something does not happen: it polls through a window and fails at once.
 */
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

    /**
     * Polls {@code condition} every 50 ms for {@code window} and throws AssertionError with {@code what} as soon as
     * it is false (or throws): for "nothing happens" checks, which have to watch for a while.
     */
    public static void holds(String what, Duration window, Callable<Boolean> condition) throws Exception {
        long end = System.nanoTime() + window.toNanos();
        while (true) {
            if (!Boolean.TRUE.equals(condition.call())) {
                throw new AssertionError("no longer true: " + what);
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                return;
            }
            Thread.sleep(Math.min(50, Math.max(1, left / 1_000_000)));
        }
    }
}
