package io.rmqgw.gateway.config;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.util.List;
import java.util.Objects;

/**
 * Send rate limits (SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE, one request each), per topic and per
 * client id, as token buckets: {@code sends-per-second} tokens a second, at most {@code burst} saved up. A send
 * beyond a limit is answered SYSTEM_BUSY (2) by the gateway and never reaches the broker, so clients back off
 * and retry as they do for a busy broker. A reload replaces every limit at once (buckets start full again).
 *
 * @param perTopic  limits by topic; {@code topic: "*"} gives every topic not listed its own bucket of that size
 * @param perClient limits by client id (the {@code clientID} of the client's heartbeats); {@code client-id: "*"}
 *                  gives every client not listed its own bucket. A connection that has not sent a heartbeat yet
 *                  counts as a client of its own.
 */
public record RateLimitConfig(List<TopicLimit> perTopic, List<ClientLimit> perClient) {

    /** Matches every topic, or every client, not listed by name. */
    public static final String ANY = "*";
    public static final int MAX_RATE = 10_000_000;

    /** No limits. */
    public static final RateLimitConfig NONE = new RateLimitConfig(null, null);

    public RateLimitConfig {
        perTopic = List.copyOf(perTopic == null ? List.of() : perTopic);
        perClient = List.copyOf(perClient == null ? List.of() : perClient);
        unique("rate-limits.per-topic", perTopic.stream().map(TopicLimit::topic).toList(), "topic");
        unique("rate-limits.per-client", perClient.stream().map(ClientLimit::clientId).toList(), "client-id");
    }

    public boolean isEmpty() {
        return perTopic.isEmpty() && perClient.isEmpty();
    }

    /**
     * One topic's limit.
     *
     * @param topic          the topic, or {@code "*"} for each topic not listed
     * @param sendsPerSecond send requests a second
     * @param burst          sends allowed at once after a quiet spell; default: {@code sendsPerSecond}
     */
    public record TopicLimit(String topic, Integer sendsPerSecond, Integer burst) {
        public TopicLimit {
            if (topic == null || topic.isBlank()) {
                throw ConfigException.inEntry("topic", "is required (a topic name, or \"*\" for every other topic)");
            }
            topic = topic.trim();
            if (!ANY.equals(topic)) {
                NameCheck check = NameValidator.DEFAULT.checkTopic(topic);
                if (!check.isValid()) {
                    throw ConfigException.inEntry("topic", NameValidator.DEFAULT.topicRemark(check, topic));
                }
            }
            sendsPerSecond = checkRate(sendsPerSecond);
            burst = checkBurst(burst, sendsPerSecond);
        }
    }

    /**
     * One client's limit.
     *
     * @param clientId       the client id as its heartbeats name it ({@code ip@instance...}), or {@code "*"} for
     *                       each client not listed
     * @param sendsPerSecond send requests a second
     * @param burst          sends allowed at once after a quiet spell; default: {@code sendsPerSecond}
     */
    public record ClientLimit(String clientId, Integer sendsPerSecond, Integer burst) {
        public ClientLimit {
            if (clientId == null || clientId.isBlank()) {
                throw ConfigException.inEntry("client-id", "is required (a client id, or \"*\" for every other client)");
            }
            clientId = clientId.trim();
            sendsPerSecond = checkRate(sendsPerSecond);
            burst = checkBurst(burst, sendsPerSecond);
        }
    }

    private static int checkRate(Integer value) {
        if (value == null) {
            throw ConfigException.inEntry("sends-per-second", "is required");
        }
        if (value < 1 || value > MAX_RATE) {
            throw ConfigException.inEntry("sends-per-second", "must be between 1 and " + MAX_RATE + ", was " + value);
        }
        return value;
    }

    private static int checkBurst(Integer value, int rate) {
        int b = Objects.requireNonNullElse(value, rate);
        if (b < 1 || b > MAX_RATE) {
            throw ConfigException.inEntry("burst", "must be between 1 and " + MAX_RATE + ", was " + b);
        }
        return b;
    }

    private static void unique(String path, List<String> names, String key) {
        for (int i = 0; i < names.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (names.get(i).equals(names.get(j))) {
                    throw new ConfigException(path + "[" + i + "]." + key, "'" + names.get(i)
                        + "' is already listed at " + path + "[" + j + "]");
                }
            }
        }
    }
}
