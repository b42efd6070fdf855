package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Requests by topic ({@code rmqgw.topic.requests{topic,code}}): off unless {@code admin.topic-labels} turns them
 * on, and then capped at {@code admin.topic-label-limit} distinct topics, later ones counting as
 * {@link GatewayMetrics#OTHER_TOPIC}.
 */
public final class TopicLabelMeters {

    private static final CodeNames REQUEST_CODES = CodeNames.REQUESTS;

    private final MeterRegistry registry;
    private volatile TopicMeters topics;

    TopicLabelMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Turns per-topic labels on ({@code limit} distinct topics at most; further topics count as
     * {@link GatewayMetrics#OTHER_TOPIC}) or off (every per-topic meter is removed). Callable at any time.
     */
    public synchronized void topicLabels(boolean enabled, int limit) {
        if (enabled && limit < 1) {
            throw new IllegalArgumentException("topic label limit must be positive, was " + limit);
        }
        TopicMeters old = topics;
        if (old != null && enabled && old.limit == limit) {
            return;
        }
        topics = enabled ? new TopicMeters(limit) : null;
        if (old != null) {
            old.removeFrom(registry);
        }
    }

    public boolean topicLabelsEnabled() {
        return topics != null;
    }

    /**
     * A request naming {@code topic} ({@code rmqgw.topic.requests{topic,code}}); does nothing unless
     * {@link #topicLabels} enabled them, or when {@code topic} is null. Meant for the send and pull handlers:
     * the first {@code admin.topic-label-limit} distinct topics get their own label, later ones count as
     * {@link GatewayMetrics#OTHER_TOPIC}. Allocates only the first time a topic (or a topic and code) is seen; a
     * topic beyond the limit allocates nothing, however many distinct ones arrive.
     */
    public void topicRequest(String topic, int requestCode) {
        TopicMeters t = topics;
        if (t == null || topic == null) {
            return;
        }
        AtomicReferenceArray<Counter> row = t.byTopic.get(topic);
        if (row == null) {
            row = t.admit(topic);
        }
        int req = REQUEST_CODES.index(requestCode);
        Counter c = row.get(req);
        if (c == null) {
            c = Counter.builder("rmqgw.topic.requests")
                .description("Requests naming a topic, by topic and request code (only when per-topic labels are on)")
                .tag("topic", row == t.other ? GatewayMetrics.OTHER_TOPIC : topic)
                .tag("code", REQUEST_CODES.name(req))
                .register(registry);
            row.set(req, c);
        }
        c.increment();
    }

    private static final class TopicMeters {
        final int limit;
        final Map<String, AtomicReferenceArray<Counter>> byTopic = new ConcurrentHashMap<>();
        final AtomicInteger admitted = new AtomicInteger();
        final AtomicReferenceArray<Counter> other = new AtomicReferenceArray<>(REQUEST_CODES.size());

        TopicMeters(int limit) {
            this.limit = limit;
        }

        AtomicReferenceArray<Counter> admit(String topic) {
            if (admitted.get() >= limit) {
                return other; // full: no map lookup that would allocate for topics never admitted
            }
            AtomicReferenceArray<Counter> row = byTopic.computeIfAbsent(topic, k -> {
                if (admitted.getAndIncrement() < limit) {
                    return new AtomicReferenceArray<>(REQUEST_CODES.size());
                }
                admitted.decrementAndGet();
                return null;
            });
            return row == null ? other : row;
        }

        void removeFrom(MeterRegistry registry) {
            for (AtomicReferenceArray<Counter> row : byTopic.values()) {
                removeRow(registry, row);
            }
            removeRow(registry, other);
        }

        private static void removeRow(MeterRegistry registry, AtomicReferenceArray<Counter> row) {
            for (int i = 0; i < row.length(); i++) {
                Counter c = row.get(i);
                if (c != null) {
                    registry.remove(c);
                }
            }
        }
    }
}
