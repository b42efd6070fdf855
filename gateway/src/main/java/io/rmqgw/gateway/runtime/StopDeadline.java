package io.rmqgw.gateway.runtime;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * The bound on a stop: a daemon thread that waits for the stop to finish and, if it has not within the bound,
 * ends the process with {@link #STOP_OVERRAN}. A stop can hang on what it waits for (an event loop stuck in a system
 * call or an allocation, a broker that does not let go); a service manager's SIGTERM must still end the process.
 */
final class StopDeadline {

    /** The exit code of a process whose stop did not finish within its bound. */
    static final int STOP_OVERRAN = 3;

    private StopDeadline() {
    }

    /** Starts the wait: {@code halt} gets {@link #STOP_OVERRAN} unless {@code stopped} is counted down within {@code bound}. */
    static Thread arm(Duration bound, CountDownLatch stopped, IntConsumer halt) {
        Thread deadline = new Thread(() -> {
            try {
                if (stopped.await(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
            halt.accept(STOP_OVERRAN);
        }, "rmqgw-stop-deadline");
        deadline.setDaemon(true);
        deadline.start();
        return deadline;
    }
}
