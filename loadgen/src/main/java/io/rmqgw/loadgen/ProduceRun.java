package io.rmqgw.loadgen;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

/**
 * Sends as fast as the threads (or the asynchronous window) allow, or at {@code --rate}: N threads
 * over {@code --clients} producer instances, every send a fresh {@link Message} with the same random body.
 */
final class ProduceRun {

    /** The user property that tags the messages of one run (latency runs filter on it). */
    static final String RUN_PROPERTY = "RMQGW_BENCH_RUN";

    private final BenchSettings s;
    private final PrintWriter out;
    private final String runId;
    private final String progressWhat;

    ProduceRun(BenchSettings settings, PrintWriter out, String runId) {
        this(settings, out, runId, "sent");
    }

    ProduceRun(BenchSettings settings, PrintWriter out, String runId, String progressWhat) {
        this.s = settings;
        this.out = out;
        this.runId = runId;
        this.progressWhat = progressWhat;
    }

    /** Topic creation (when asked) and the route check, before any client of the run starts. */
    static void prepareTopic(BenchSettings s, String runId, PrintWriter out) throws Exception {
        if (s.queues() > 0) {
            String admin = s.adminNamesrv() != null ? s.adminNamesrv() : s.namesrv();
            for (String topic : topics(s)) {
                Clients.createTopic(admin, topic, s.queues(), runId, s);
                out.printf("topic %s created or updated with %d queues through %s%n", topic, s.queues(), admin);
            }
            out.flush();
        }
    }

    /** The topics a run writes: its --fanout destinations, else its topic. */
    private static List<String> topics(BenchSettings s) {
        return s.fanout() != null ? s.fanout().destinations() : List.of(s.topic());
    }

    BenchResult run() throws Exception {
        Instant startedAt = Instant.now();
        List<DefaultMQProducer> producers = new ArrayList<>();
        try {
            for (int i = 0; i < s.clients(); i++) {
                DefaultMQProducer p = Clients.producer(s.namesrv(), "bench_producer_" + runId,
                    "bench-" + runId + "-" + i, s);
                p.start();
                producers.add(p);
            }
            if (s.queues() > 0) {
                for (String topic : topics(s)) {
                    Clients.awaitRoute(producers.get(0), topic, s.queues(), Duration.ofSeconds(30));
                }
            }
            return load(producers, startedAt, null);
        } finally {
            for (DefaultMQProducer p : producers) {
                p.shutdown();
            }
        }
    }

    /**
     * The load loop on started producers.
     *
     * @param tag a run id put into every message's {@link #RUN_PROPERTY}, or null
     */
    BenchResult load(List<DefaultMQProducer> producers, Instant startedAt, String tag) throws InterruptedException {
        byte[] body = new byte[s.size()];
        new SplittableRandom(42).nextBytes(body);
        long start = System.nanoTime();
        Tally tally = new Tally(start, s.warmup().toNanos(), s.durationNanos(), s.count());
        Semaphore window = s.async() ? new Semaphore(s.window()) : null;
        LongAdder late = new LongAdder();
        long hardStop = start + s.timeout().toNanos();
        Thread[] threads = new Thread[s.threads()];
        try (Progress progress = new Progress(out, progressWhat, tally, start,
            window == null ? null : () -> s.window() - window.availablePermits())) {
            for (int i = 0; i < threads.length; i++) {
                DefaultMQProducer producer = producers.get(i % producers.size());
                int index = i;
                threads[i] = new Thread(() -> sendLoop(producer, index, body, tag, start, hardStop, tally, window, late),
                    "bench-sender-" + i);
                threads[i].setDaemon(true);
                threads[i].start();
            }
            for (Thread t : threads) {
                t.join(Math.max(1, (hardStop - System.nanoTime()) / 1_000_000));
            }
            long unfinished = 0;
            if (window != null) {
                long waitMs = s.sendTimeout().toMillis() * (s.retries() + 1) + 5_000;
                if (!window.tryAcquire(s.window(), waitMs, TimeUnit.MILLISECONDS)) {
                    unfinished = s.window() - window.availablePermits();
                }
            }
            // duration mode: the measurement spans the whole duration even if nothing completed at its end
            long end = s.count() > 0 ? Long.MIN_VALUE : tally.measureEndNanos();
            return new BenchResult(s, Clients.version(), startedAt, tally.summary(end), null, late.sum(), unfinished,
                s.count());
        }
    }

    private void sendLoop(DefaultMQProducer producer, int index, byte[] body, String tag, long start, long hardStop,
                          Tally tally, Semaphore window, LongAdder late) {
        Pacing pacing = s.rate() > 0
            ? new Pacing(start, Math.max(1, (long) (1e9 * s.threads() / s.rate())), index, s.threads()) : null;
        try {
            while (true) {
                if (pacing != null) {
                    long now = System.nanoTime();
                    long slot = now + pacing.delay(now);
                    for (long w = slot - now; w > 0; w = slot - System.nanoTime()) {
                        LockSupport.parkNanos(w);
                    }
                    long missed = pacing.takeMissed();
                    if (missed > 0 && tally.phaseAt(System.nanoTime()) == Tally.Phase.MEASURE) {
                        late.add(missed);
                    }
                }
                if (window != null) {
                    while (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        if (System.nanoTime() - hardStop >= 0 || tally.phaseAt(System.nanoTime()) == Tally.Phase.DONE) {
                            return;
                        }
                    }
                }
                long t0 = System.nanoTime();
                Tally.Phase phase = t0 - hardStop >= 0 ? Tally.Phase.DONE : tally.begin(t0);
                if (phase == Tally.Phase.DONE) {
                    if (window != null) {
                        window.release();
                    }
                    return;
                }
                if (s.fanout() != null) {
                    sendFanout(producer, s.fanout(), body, phase, t0, tally);
                    continue;
                }
                Message m = new Message(s.topic(), body);
                if (tag != null) {
                    m.putUserProperty(RUN_PROPERTY, tag);
                }
                if (window == null) {
                    sendSync(producer, m, phase, t0, tally);
                } else {
                    sendAsync(producer, m, phase, t0, tally, window);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sendSync(DefaultMQProducer producer, Message m, Tally.Phase phase, long t0, Tally tally)
        throws InterruptedException {
        try {
            SendResult r = producer.send(m);
            long end = System.nanoTime();
            if (r.getSendStatus() == SendStatus.SEND_OK) {
                tally.success(phase, end, (end - t0) / 1000);
            } else {
                tally.failure(phase, end, "status:" + r.getSendStatus());
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            tally.failure(phase, System.nanoTime(), Clients.reason(e));
        }
    }

    /**
     * One fan-out operation, synchronous: {@code f.batch()} messages over the destinations, as one batch to the
     * fan-out topic or one batch per destination; it counts as one success when every send stored its messages.
     */
    private static void sendFanout(DefaultMQProducer producer, BenchSettings.FanoutSends f, byte[] body,
                                   Tally.Phase phase, long t0, Tally tally) throws InterruptedException {
        try {
            List<List<Message>> sends = new ArrayList<>();
            if (f.viaTopic() != null) {
                List<Message> batch = new ArrayList<>(f.batch());
                for (int i = 0; i < f.batch(); i++) {
                    Message m = new Message(f.viaTopic(), body);
                    m.putUserProperty(f.destinationProperty(), f.destinations().get(i % f.destinations().size()));
                    batch.add(m);
                }
                sends.add(batch);
            } else {
                for (int d = 0; d < f.destinations().size(); d++) {
                    List<Message> batch = new ArrayList<>();
                    for (int i = d; i < f.batch(); i += f.destinations().size()) {
                        batch.add(new Message(f.destinations().get(d), body));
                    }
                    sends.add(batch);
                }
            }
            for (List<Message> batch : sends) {
                SendResult r = producer.send(batch);
                if (r.getSendStatus() != SendStatus.SEND_OK) {
                    tally.failure(phase, System.nanoTime(), "status:" + r.getSendStatus());
                    return;
                }
            }
            long end = System.nanoTime();
            tally.success(phase, end, (end - t0) / 1000);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            tally.failure(phase, System.nanoTime(), Clients.reason(e));
        }
    }

    private static void sendAsync(DefaultMQProducer producer, Message m, Tally.Phase phase, long t0, Tally tally,
                                  Semaphore window) {
        try {
            producer.send(m, new SendCallback() {
                @Override
                public void onSuccess(SendResult r) {
                    long end = System.nanoTime();
                    if (r.getSendStatus() == SendStatus.SEND_OK) {
                        tally.success(phase, end, (end - t0) / 1000);
                    } else {
                        tally.failure(phase, end, "status:" + r.getSendStatus());
                    }
                    window.release();
                }

                @Override
                public void onException(Throwable e) {
                    tally.failure(phase, System.nanoTime(), Clients.reason(e));
                    window.release();
                }
            });
        } catch (Exception e) {
            tally.failure(phase, System.nanoTime(), Clients.reason(e));
            window.release();
        }
    }
}
