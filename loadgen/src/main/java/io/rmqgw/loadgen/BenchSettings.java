package io.rmqgw.loadgen;

import java.nio.file.Path;
import java.time.Duration;

/**
 * One bench run, validated by {@link BenchCommand}.
 *
 * @param mode           produce, consume or latency
 * @param namesrv        where the clients connect (a gateway, a proxy or name servers), RocketMQ style
 * @param adminNamesrv   where the topic is created when {@code queues > 0} (Apache's proxy refuses admin codes)
 * @param topic          the topic
 * @param group          consumer group (consume, latency); null: a new one per run
 * @param threads        sending threads (produce, latency; consume: the backlog producer's)
 * @param size           body size in bytes
 * @param warmup         excluded from every figure
 * @param duration       the measurement; null in count mode
 * @param count          count mode: operations measured (produce), messages expected (consume); 0 otherwise
 * @param async          asynchronous sends with at most {@code window} in flight
 * @param window         in-flight bound of asynchronous sends (all threads together)
 * @param queues         create or update the topic with this many read and write queues first; 0: do not
 * @param rate           target sends per second, all threads together; 0: as fast as possible
 * @param clients        client instances (connections) the threads are spread over
 * @param sendTimeout    client send timeout
 * @param retries        client retries of failed sends (counted as one send)
 * @param consumeThreads push consumer threads
 * @param pullBatch      push consumer pull batch size
 * @param backlog        consume: first produce this many messages (asynchronously, not measured; through
 *                       {@code adminNamesrv} when given)
 * @param idleTimeout    consume: stop when nothing arrived for this long after the first message
 * @param work           consume: time the listener spends on each message (a sleep), after its receipt; zero: none
 * @param settleFirst    consume: start the consumers before the backlog, wait until their rebalance has settled,
 *                       pause them while the backlog is produced, and measure from their resumption (steady state)
 * @param endToEnd       latency: also measure end to end with a push consumer
 * @param fanout         produce: every operation a batch of messages spread over several topics; null: single sends
 * @param timeout        hard limit of the whole run; the process exits when it passes
 * @param label          free text copied into the summary (the comparison runner names its target)
 * @param jsonFile       the JSON Lines file the summary is appended to; null: none
 * @param logDir         the RocketMQ client's log directory; null: a temporary one
 */
public record BenchSettings(Mode mode, String namesrv, String adminNamesrv, String topic, String group, int threads,
                            int size, Duration warmup, Duration duration, long count, boolean async, int window,
                            int queues, double rate, int clients, Duration sendTimeout, int retries,
                            int consumeThreads, int pullBatch, long backlog, Duration idleTimeout, Duration work,
                            boolean settleFirst, boolean endToEnd, FanoutSends fanout,
                            Duration timeout, String label, Path jsonFile, Path logDir) {

    /** The three kinds of run. */
    public enum Mode {
        PRODUCE, CONSUME, LATENCY;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * Produce operations that each write {@code batch} messages spread round robin over {@code destinations}:
     * as one batch to the gateway's fan-out topic {@code viaTopic} (each message naming its destination in
     * {@code destinationProperty}), or, when {@code viaTopic} is null, as one batch send per destination, one
     * after the other (what a producer does without the gateway). An operation succeeds when every send did.
     */
    public record FanoutSends(java.util.List<String> destinations, int batch, String viaTopic,
                              String destinationProperty) {

        public FanoutSends {
            destinations = java.util.List.copyOf(destinations);
            if (destinations.isEmpty() || batch < destinations.size()) {
                throw new IllegalArgumentException("a fan-out operation needs a destination and at least one message"
                    + " per destination (" + batch + " messages for " + destinations.size() + " destinations)");
            }
        }
    }

    /** Nanoseconds of the measurement, {@code Long.MAX_VALUE} in count mode. */
    public long durationNanos() {
        return duration == null ? Long.MAX_VALUE : duration.toNanos();
    }

    /**
     * A copy producing {@code n} messages of this run's size on its topic as fast as the window allows (a backlog),
     * through {@code adminNamesrv} when given (so that a gateway under test does not also relay the backlog).
     */
    BenchSettings backlogProducer(long n) {
        return new BenchSettings(Mode.PRODUCE, adminNamesrv != null ? adminNamesrv : namesrv, adminNamesrv, topic, null, threads, size, Duration.ZERO, null, n,
            true, Math.max(window, 256), queues, 0, 1, sendTimeout, 2, consumeThreads, pullBatch, 0, idleTimeout,
            Duration.ZERO, false, false, null, timeout, label, null, logDir);
    }
}
