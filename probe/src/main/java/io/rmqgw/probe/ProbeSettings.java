package io.rmqgw.probe;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * What one probe run does (validated by {@code rmqgw probe}'s option parsing).
 *
 * @param namesrv      name-server address(es) the clients use, RocketMQ style ({@code a:9876;b:9876})
 * @param topic        the probe topic
 * @param group        the producer and consumer group; {@code null} for a new one per run,
 *                     {@code rmqgw_probe_RUNID}
 * @param rate         messages per second
 * @param size         body size in bytes
 * @param count        messages to send
 * @param sendTimeout  per-send timeout (the client's own retries included)
 * @param drainTimeout how long to wait, after the last send, for every sent message to arrive
 * @param readyTimeout how long to wait for the topic route and for the consumer to own the topic's queues
 * @param budget       latency bounds; {@link LatencyBudget#NONE} for none
 * @param cleanup      delete the run's own consumer group (and its retry topic) afterwards; a group given
 *                     in {@link #group} is never deleted
 * @param logDir       where the RocketMQ client logs; {@code null}: a temporary directory, removed after a
 *                     successful run and kept (and named) after a failed one
 */
public record ProbeSettings(String namesrv, String topic, String group, double rate, int size, int count,
                            Duration sendTimeout, Duration drainTimeout, Duration readyTimeout, LatencyBudget budget,
                            boolean cleanup, Path logDir) {

    public static final String DEFAULT_NAMESRV = "127.0.0.1:9876";
    public static final String DEFAULT_TOPIC = "rmqgw_probe";
    public static final String DEFAULT_GROUP_PREFIX = "rmqgw_probe";

    public ProbeSettings {
        Objects.requireNonNull(namesrv, "namesrv");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(sendTimeout, "sendTimeout");
        Objects.requireNonNull(drainTimeout, "drainTimeout");
        Objects.requireNonNull(readyTimeout, "readyTimeout");
        budget = Objects.requireNonNullElse(budget, LatencyBudget.NONE);
        if (!(rate > 0)) {
            throw new IllegalArgumentException("rate must be positive, was " + rate);
        }
        if (size < 1) {
            throw new IllegalArgumentException("size must be positive, was " + size);
        }
        if (count < 1) {
            throw new IllegalArgumentException("count must be positive, was " + count);
        }
    }

    /** How long sending {@link #count} messages at {@link #rate} takes (the first goes out at once). */
    public Duration sendingTime() {
        return Duration.ofNanos((long) ((count - 1) * 1e9 / rate));
    }
}
