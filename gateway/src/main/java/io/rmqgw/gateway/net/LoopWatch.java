package io.rmqgw.gateway.net;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells whether every event loop still runs its tasks: once a second a thread of its own hands each loop a task
 * that only notes it ran; a loop that has not run the task it was handed for {@link #STALL_NANOS} is stalled (blocked in
 * a system call, an allocation, a lock), and the connections it owns are not served. The thread is a daemon; nothing
 * here runs on the loops but the note.
 */
public final class LoopWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LoopWatch.class);
    static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final long TICK_MILLIS = 1000;

    private final List<Watched> loops = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;

    /** A loop, since when the task it was handed waits (0: none waits), and its thread's name once a task ran. */
    private static final class Watched {
        final EventExecutor loop;
        final AtomicLong handedSinceNanos = new AtomicLong();
        volatile String name;

        Watched(EventExecutor loop, int index) {
            this.loop = loop;
            this.name = "#" + index;
        }

        void ran() {
            name = Thread.currentThread().getName();
            handedSinceNanos.set(0);
        }
    }

    public LoopWatch(EventLoopGroup group) {
        for (EventExecutor loop : group) {
            loops.add(new Watched(loop, loops.size()));
        }
        thread = new Thread(this::run, "rmqgw-loop-watch");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        boolean wasStalled = false;
        while (!closed) {
            for (Watched w : loops) {
                if (w.handedSinceNanos.get() == 0) {
                    w.handedSinceNanos.set(System.nanoTime() | 1);
                    try {
                        w.loop.execute(w::ran);
                    } catch (RejectedExecutionException shuttingDown) {
                        return;
                    }
                }
            }
            String stalled = stalledReason();
            if (stalled != null && !wasStalled) {
                log.warn("{}: its connections are not served", stalled);
            } else if (stalled == null && wasStalled) {
                log.info("every event loop runs its tasks again");
            }
            wasStalled = stalled != null;
            try {
                Thread.sleep(TICK_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Which loop has not run a task for {@link #STALL_NANOS}, or null when every loop runs. */
    public String stalledReason() {
        long now = System.nanoTime();
        for (Watched w : loops) {
            long since = w.handedSinceNanos.get();
            if (since != 0 && now - since >= STALL_NANOS) {
                return "event loop " + w.name + " has run no task for " + TimeUnit.NANOSECONDS.toMillis(now - since) + " ms";
            }
        }
        return null;
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }
}
