package io.rmqgw.gateway.config;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Server-side coalescing of small sends ({@code coalescing:}): single sends to the listed topics from any
 * client connections, for the same broker and queue, go to the broker together as one SEND_BATCH_MESSAGE
 * while {@code maxInFlight} requests for that queue are already in flight (or during {@code maxDelay} after a
 * send to an idle but busy queue). Every key applies at once on a reload.
 *
 * @param topics      the topics whose single sends may be coalesced (none: coalescing is off)
 * @param maxMessages messages in one coalesced batch at most
 * @param maxBytes    batch body bytes at most (each message as a batch entry: 22 bytes + body + properties);
 *                    a message larger than this alone is never coalesced
 * @param maxDelay    how long a send to an idle queue waits for others to go with it, when the queue's previous
 *                    batch held more than one send (so never at low load); 0: it goes at once, and batches form
 *                    only while requests for the queue are in flight
 * @param maxInFlight batches of one queue at the broker at once, written in order on the one pooled connection
 *                    to its broker; 1: the next batch waits for the answer to the previous
 */
public record CoalescingConfig(List<String> topics, Integer maxMessages, Integer maxBytes, Duration maxDelay,
                               Integer maxInFlight) {

    public static final int DEFAULT_MAX_MESSAGES = 64;
    public static final int MAX_MAX_MESSAGES = 1024;
    public static final int DEFAULT_MAX_BYTES = 256 * 1024;
    public static final int MIN_MAX_BYTES = 1024;
    /** RocketMQ brokers refuse batch bodies over their maxMessageSize, 4 MiB by default. */
    public static final int MAX_MAX_BYTES = 4 * 1024 * 1024;
    public static final Duration DEFAULT_MAX_DELAY = Duration.ofMillis(1);
    public static final Duration MAX_MAX_DELAY = Duration.ofSeconds(1);
    /**
     * One: the next batch of a queue forms while the previous one is at the broker, and is written once that one
     * is answered, so every producer's order holds whatever the broker (see the README, "Order"); two made
     * smaller batches and less throughput (docs/BENCHMARKS.md, coalescing run G).
     */
    public static final int DEFAULT_MAX_IN_FLIGHT = 1;
    public static final int MAX_MAX_IN_FLIGHT = 64;

    public static final CoalescingConfig NONE = new CoalescingConfig(null, null, null, null, null);

    public CoalescingConfig {
        Set<String> names = new LinkedHashSet<>();
        List<String> given = topics == null ? List.of() : topics;
        for (int i = 0; i < given.size(); i++) {
            String path = "coalescing.topics[" + i + "]";
            String topic = given.get(i) == null ? "" : given.get(i).trim();
            NameCheck check = NameValidator.DEFAULT.checkSendTopic(topic);
            if (!check.isValid()) {
                throw new ConfigException(path, NameValidator.DEFAULT.topicRemark(check, topic));
            }
            if (topic.startsWith(NameValidator.RETRY_PREFIX) || topic.startsWith(NameValidator.DLQ_PREFIX)) {
                throw new ConfigException(path, "brokers refuse batches to retry and dead-letter topics, was '"
                    + topic + "'");
            }
            if (!names.add(topic)) {
                throw new ConfigException(path, "topic " + topic + " is listed twice");
            }
        }
        topics = List.copyOf(new ArrayList<>(names));
        maxMessages = Objects.requireNonNullElse(maxMessages, DEFAULT_MAX_MESSAGES);
        if (maxMessages < 1 || maxMessages > MAX_MAX_MESSAGES) {
            throw new ConfigException("coalescing.max-messages", "must be between 1 and " + MAX_MAX_MESSAGES
                + ", was " + maxMessages);
        }
        maxBytes = Objects.requireNonNullElse(maxBytes, DEFAULT_MAX_BYTES);
        if (maxBytes < MIN_MAX_BYTES || maxBytes > MAX_MAX_BYTES) {
            throw new ConfigException("coalescing.max-bytes", "must be between " + MIN_MAX_BYTES + " and "
                + MAX_MAX_BYTES + " bytes (brokers' default maxMessageSize), was " + maxBytes);
        }
        maxDelay = Objects.requireNonNullElse(maxDelay, DEFAULT_MAX_DELAY);
        if (maxDelay.isNegative() || maxDelay.compareTo(MAX_MAX_DELAY) > 0) {
            throw new ConfigException("coalescing.max-delay", "must be between 0s and 1s, was "
                + ConfigLoader.formatDuration(maxDelay));
        }
        maxInFlight = Objects.requireNonNullElse(maxInFlight, DEFAULT_MAX_IN_FLIGHT);
        if (maxInFlight < 1 || maxInFlight > MAX_MAX_IN_FLIGHT) {
            throw new ConfigException("coalescing.max-in-flight", "must be between 1 and " + MAX_MAX_IN_FLIGHT
                + ", was " + maxInFlight);
        }
    }

    /** Whether any topic is listed. */
    public boolean enabled() {
        return !topics.isEmpty();
    }

    /** These settings for {@code topics}, the limits unchanged. */
    public static CoalescingConfig of(String... topics) {
        return new CoalescingConfig(List.of(topics), null, null, null, null);
    }
}
