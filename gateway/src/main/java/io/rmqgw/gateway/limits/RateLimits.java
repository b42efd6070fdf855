package io.rmqgw.gateway.limits;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.RateLimitConfig.ClientLimit;
import io.rmqgw.gateway.config.RateLimitConfig.TopicLimit;
import io.rmqgw.metrics.GatewayMetrics;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The send rate limits in force ({@code rate-limits}): one token bucket (bucket4j, lock-free) per listed
 * topic and client, and one per topic or client met under a {@code "*"} entry. A send takes one token from its
 * topic's bucket, then one from its client's; the first empty bucket refuses it with a remark saying which
 * limit and how large (a send its client's limit refuses gives its topic's token back). Thread-safe: every client event loop asks at once.
 *
 * <p>A reload with other limits replaces every bucket (they start full). Buckets made for {@code "*"} entries
 * are kept up to {@link #MAX_DYNAMIC_BUCKETS} per kind; past that the kind's table is emptied and refills as
 * sends arrive, so memory stays bounded whatever names clients use.
 */
public final class RateLimits {

    /** Buckets made for {@code "*"} entries, per kind (topics, clients), before the table is emptied. */
    static final int MAX_DYNAMIC_BUCKETS = 100_000;

    private final GatewayMetrics metrics;
    private final TimeMeter clock;
    private volatile Table table;

    public RateLimits(GatewayMetrics metrics) {
        this(metrics, TimeMeter.SYSTEM_NANOTIME);
    }

    /** With an injected clock (tests). */
    RateLimits(GatewayMetrics metrics, TimeMeter clock) {
        this.metrics = metrics;
        this.clock = clock;
        this.table = new Table(RateLimitConfig.NONE, clock);
    }

    /**
     * Puts {@code config} in force for every later send.
     *
     * @return whether it differs from the limits in force (equal limits keep their buckets)
     */
    public synchronized boolean apply(RateLimitConfig config) {
        if (table.config.equals(config)) {
            return false;
        }
        table = new Table(config, clock);
        return true;
    }

    /** Whether any limit is configured (no limit: sends are not even looked at). */
    public boolean active() {
        return !table.config.isEmpty();
    }

    /**
     * Takes a token for one send.
     *
     * @param topic    the send's topic
     * @param clientId the sending client's id, or a stand-in for a connection whose client is not known yet
     * @return null when admitted; else the remark of the SYSTEM_BUSY answer (the refusal is counted)
     */
    public String admitSend(String topic, String clientId) {
        Table t = table;
        Limited<TopicLimit> byTopic = t.topic(topic);
        if (byTopic != null && !byTopic.bucket.tryConsume(1)) {
            metrics.rateLimited("topic");
            return "[RATE_LIMITED] sends to topic " + topic + " exceed the gateway's limit of "
                + byTopic.limit.sendsPerSecond() + " per second (burst " + byTopic.limit.burst() + "); retry later";
        }
        Limited<ClientLimit> byClient = t.client(clientId);
        if (byClient != null && !byClient.bucket.tryConsume(1)) {
            if (byTopic != null) {
                byTopic.bucket.addTokens(1); // not sent: the topic's token goes back
            }
            metrics.rateLimited("client");
            return "[RATE_LIMITED] sends of client " + clientId + " exceed the gateway's limit of "
                + byClient.limit.sendsPerSecond() + " per second (burst " + byClient.limit.burst() + "); retry later";
        }
        return null;
    }

    private record Limited<L>(L limit, Bucket bucket) {
    }

    /** One configuration's buckets. */
    private static final class Table {
        final RateLimitConfig config;
        final TimeMeter clock;
        final Map<String, Limited<TopicLimit>> topics = new HashMap<>();
        final Map<String, Limited<ClientLimit>> clients = new HashMap<>();
        final TopicLimit anyTopic;
        final ClientLimit anyClient;
        final ConcurrentHashMap<String, Limited<TopicLimit>> dynamicTopics = new ConcurrentHashMap<>();
        final ConcurrentHashMap<String, Limited<ClientLimit>> dynamicClients = new ConcurrentHashMap<>();

        Table(RateLimitConfig config, TimeMeter clock) {
            this.config = config;
            this.clock = clock;
            TopicLimit anyT = null;
            for (TopicLimit l : config.perTopic()) {
                if (RateLimitConfig.ANY.equals(l.topic())) {
                    anyT = l;
                } else {
                    topics.put(l.topic(), new Limited<>(l, bucket(l.sendsPerSecond(), l.burst())));
                }
            }
            ClientLimit anyC = null;
            for (ClientLimit l : config.perClient()) {
                if (RateLimitConfig.ANY.equals(l.clientId())) {
                    anyC = l;
                } else {
                    clients.put(l.clientId(), new Limited<>(l, bucket(l.sendsPerSecond(), l.burst())));
                }
            }
            anyTopic = anyT;
            anyClient = anyC;
        }

        Limited<TopicLimit> topic(String topic) {
            Limited<TopicLimit> named = topics.get(topic);
            if (named != null || anyTopic == null) {
                return named;
            }
            return dynamic(dynamicTopics, topic, anyTopic, anyTopic.sendsPerSecond(), anyTopic.burst());
        }

        Limited<ClientLimit> client(String clientId) {
            Limited<ClientLimit> named = clients.get(clientId);
            if (named != null || anyClient == null) {
                return named;
            }
            return dynamic(dynamicClients, clientId, anyClient, anyClient.sendsPerSecond(), anyClient.burst());
        }

        private <L> Limited<L> dynamic(ConcurrentHashMap<String, Limited<L>> map, String key, L limit, int rate,
                                       int burst) {
            Limited<L> existing = map.get(key);
            if (existing != null) {
                return existing;
            }
            if (map.size() >= MAX_DYNAMIC_BUCKETS) {
                map.clear();
            }
            return map.computeIfAbsent(key, k -> new Limited<>(limit, bucket(rate, burst)));
        }

        private Bucket bucket(int rate, int burst) {
            return Bucket.builder()
                .addLimit(Bandwidth.builder().capacity(burst).refillGreedy(rate, Duration.ofSeconds(1)).build())
                .withCustomTimePrecision(clock)
                .build();
        }
    }
}
