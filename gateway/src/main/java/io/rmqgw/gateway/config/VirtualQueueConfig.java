package io.rmqgw.gateway.config;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.time.Duration;
import java.util.Objects;

/**
 * One consumer group opted into virtual queues for one topic ({@code virtual-queues:} entries), served by
 * {@code io.rmqgw.gateway.vq}.
 *
 * <p>The gateway consumes the real queues it owns itself and offers {@code perRealQueue} virtual
 * queues per owned real queue, so up to that many times more consumers get work.
 *
 * @param group             the consumer group, as its clients name it
 * @param topic             the topic the group consumes
 * @param perRealQueue      virtual queues per owned real queue
 * @param windowSize        messages held per real queue between its real commit and what was fetched,
 *                          acknowledged or not: also the most a gateway crash can redeliver per real queue
 * @param windowBytes       record bytes held per real queue (acknowledged messages hold none); one record
 *                          larger than this is still taken when the window holds nothing else
 * @param maxLeasesPerQueue messages leased at once on one virtual queue (a client prefetches up to 1000 per queue)
 * @param leaseTimeout      a holder that neither pulls nor commits on a virtual queue for this long loses its
 *                          leases there (they are delivered again)
 * @param leaseDeadline     a lease not acknowledged this long after its delivery ends anyway
 * @param maxDeliveries     deliveries of a message without an acknowledgement before it goes to the group's DLQ
 */
public record VirtualQueueConfig(String group, String topic, Integer perRealQueue, Integer windowSize,
                                 Integer windowBytes, Integer maxLeasesPerQueue, Duration leaseTimeout,
                                 Duration leaseDeadline, Integer maxDeliveries) {

    public static final int DEFAULT_PER_REAL_QUEUE = 8;
    public static final int MAX_PER_REAL_QUEUE = 256;
    public static final int DEFAULT_WINDOW_SIZE = 1024;
    public static final int MAX_WINDOW_SIZE = 1 << 20;
    public static final int DEFAULT_WINDOW_BYTES = 16 * 1024 * 1024;
    public static final int MIN_WINDOW_BYTES = 64 * 1024;
    public static final int DEFAULT_MAX_LEASES_PER_QUEUE = 1000;
    public static final int MAX_MAX_LEASES_PER_QUEUE = 100_000;
    /**
     * Three times a push consumer's offset persist interval (5 s): a live consumer, however slow, commits every
     * queue it owns that often, so it keeps its leases; leases a rebalance left behind end this soon.
     */
    public static final Duration DEFAULT_LEASE_TIMEOUT = Duration.ofSeconds(15);
    public static final Duration MIN_LEASE_TIMEOUT = Duration.ofSeconds(1);
    /** Above a push consumer's own consume timeout (15 min), after which it gives a message back itself. */
    public static final Duration DEFAULT_LEASE_DEADLINE = Duration.ofMinutes(30);
    public static final int DEFAULT_MAX_DELIVERIES = 16;
    public static final int MAX_MAX_DELIVERIES = 1000;

    public VirtualQueueConfig {
        group = name("group", group, NameValidator.DEFAULT.checkGroup(group == null ? "" : group.trim()));
        topic = name("topic", topic, NameValidator.DEFAULT.checkTopic(topic == null ? "" : topic.trim()));
        perRealQueue = between("per-real-queue", perRealQueue, DEFAULT_PER_REAL_QUEUE, 1, MAX_PER_REAL_QUEUE);
        windowSize = between("window-size", windowSize, DEFAULT_WINDOW_SIZE, 1, MAX_WINDOW_SIZE);
        windowBytes = between("window-bytes", windowBytes, DEFAULT_WINDOW_BYTES, MIN_WINDOW_BYTES, Integer.MAX_VALUE);
        maxLeasesPerQueue = between("max-leases-per-queue", maxLeasesPerQueue, DEFAULT_MAX_LEASES_PER_QUEUE, 1,
            MAX_MAX_LEASES_PER_QUEUE);
        leaseTimeout = Objects.requireNonNullElse(leaseTimeout, DEFAULT_LEASE_TIMEOUT);
        if (leaseTimeout.compareTo(MIN_LEASE_TIMEOUT) < 0) {
            throw ConfigException.inEntry("lease-timeout", "must be at least 1s, was "
                + ConfigLoader.formatDuration(leaseTimeout));
        }
        leaseDeadline = Objects.requireNonNullElse(leaseDeadline, DEFAULT_LEASE_DEADLINE);
        if (leaseDeadline.compareTo(leaseTimeout) < 0) {
            throw ConfigException.inEntry("lease-deadline", "must be at least lease-timeout ("
                + ConfigLoader.formatDuration(leaseTimeout) + "), was " + ConfigLoader.formatDuration(leaseDeadline));
        }
        maxDeliveries = between("max-deliveries", maxDeliveries, DEFAULT_MAX_DELIVERIES, 1, MAX_MAX_DELIVERIES);
    }

    /** Every setting at its default. */
    public static VirtualQueueConfig of(String group, String topic) {
        return new VirtualQueueConfig(group, topic, null, null, null, null, null, null, null);
    }

    private static String name(String key, String value, NameCheck check) {
        if (value == null || value.isBlank()) {
            throw ConfigException.inEntry(key, "is required");
        }
        if (!check.isValid()) {
            throw ConfigException.inEntry(key, "'" + value + "' is not a valid " + key + " name (" + check.label().replace('_', ' ')
                + "; allowed: " + NameValidator.LEGAL_CHARACTERS + ")");
        }
        return value.trim();
    }

    private static int between(String key, Integer value, int fallback, int min, int max) {
        int v = Objects.requireNonNullElse(value, fallback);
        if (v < min || v > max) {
            throw ConfigException.inEntry(key, "must be between " + min + " and " + max + ", was " + v);
        }
        return v;
    }
}
