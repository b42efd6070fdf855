package io.rmqgw.gateway.config;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Request rate limits as token buckets: N tokens a second, at most a burst saved up. Per topic: sends
 * (SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE, one request each; {@code sends-per-second}, {@code burst})
 * and pulls (PULL_MESSAGE, LITE_PULL_MESSAGE; {@code pulls-per-second}, {@code pull-burst}). Per client id:
 * sends, and every request the client sends to brokers through the gateway ({@code requests-per-second},
 * {@code request-burst}; heartbeats, unregistrations and oneway requests are not counted). A request beyond a
 * limit is answered SYSTEM_BUSY (2) by the gateway and never reaches the broker, so clients back off and retry
 * as they do for a busy broker. A reload replaces every limit at once (buckets start full again).
 *
 * @param perTopic  limits by topic; {@code topic: "*"} gives every topic not listed its own bucket of that size
 * @param perClient limits by client id (the {@code clientID} of the client's heartbeats); {@code client-id: "*"}
 *                  gives every client not listed its own bucket. The connections of one source address that
 *                  have not sent a heartbeat yet share one client, {@code unidentified@<ip>}.
 * @param perAddress   limits by source address, whatever client id its connections claim: each address gets its
 *                     own buckets of the most specific entry that matches it (an IP, a CIDR range, or
 *                     {@code "*"}), shared by every connection from it, identified or not
 * @param refusalDelay how long a request refused by a rate limit waits before its SYSTEM_BUSY answer goes out
 *                     (clients retry at once; {@code 0s}: at once); default {@link #DEFAULT_REFUSAL_DELAY}
 */
public record RateLimitConfig(List<TopicLimit> perTopic, List<ClientLimit> perClient, List<AddressLimit> perAddress,
                              Duration refusalDelay) {

    /** Matches every topic, or every client, not listed by name. */
    public static final String ANY = "*";
    public static final int MAX_RATE = 10_000_000;

    public static final Duration DEFAULT_REFUSAL_DELAY = Duration.ofMillis(100);
    public static final Duration MAX_REFUSAL_DELAY = Duration.ofSeconds(1);

    /** No limits. */
    public static final RateLimitConfig NONE = new RateLimitConfig(null, null);

    public RateLimitConfig {
        perTopic = List.copyOf(perTopic == null ? List.of() : perTopic);
        perClient = List.copyOf(perClient == null ? List.of() : perClient);
        perAddress = List.copyOf(perAddress == null ? List.of() : perAddress);
        unique("rate-limits.per-topic", perTopic.stream().map(TopicLimit::topic).toList(), "topic");
        unique("rate-limits.per-client", perClient.stream().map(ClientLimit::clientId).toList(), "client-id");
        unique("rate-limits.per-address", perAddress.stream().map(AddressLimit::address).toList(), "address");
        refusalDelay = refusalDelay == null ? DEFAULT_REFUSAL_DELAY : refusalDelay;
        if (refusalDelay.isNegative() || refusalDelay.compareTo(MAX_REFUSAL_DELAY) > 0) {
            throw new ConfigException("rate-limits.refusal-delay", "must be between 0s and 1s, was " + refusalDelay);
        }
    }

    /** Topic and client limits alone (no address limits, the default refusal delay). */
    public RateLimitConfig(List<TopicLimit> perTopic, List<ClientLimit> perClient) {
        this(perTopic, perClient, null, null);
    }

    public boolean isEmpty() {
        return perTopic.isEmpty() && perClient.isEmpty() && perAddress.isEmpty();
    }

    /** These limits with {@code delay} as the refusal delay. */
    public RateLimitConfig withRefusalDelay(Duration delay) {
        return new RateLimitConfig(perTopic, perClient, perAddress, delay);
    }

    /**
     * One topic's limits (at least one of sends and pulls).
     *
     * @param topic          the topic, or {@code "*"} for each topic not listed
     * @param sendsPerSecond send requests a second; null: sends not limited
     * @param burst          sends allowed at once after a quiet spell; default: {@code sendsPerSecond}
     * @param pullsPerSecond pull requests a second; null: pulls not limited
     * @param pullBurst      pulls allowed at once after a quiet spell; default: {@code pullsPerSecond}
     */
    public record TopicLimit(String topic, Integer sendsPerSecond, Integer burst, Integer pullsPerSecond,
                             Integer pullBurst) {
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
            requireOne("sends-per-second", sendsPerSecond, "pulls-per-second", pullsPerSecond);
            burst = checkedBurst("sends-per-second", sendsPerSecond, "burst", burst);
            pullBurst = checkedBurst("pulls-per-second", pullsPerSecond, "pull-burst", pullBurst);
        }

        /** A send limit alone. */
        public TopicLimit(String topic, Integer sendsPerSecond, Integer burst) {
            this(topic, sendsPerSecond, burst, null, null);
        }
    }

    /**
     * One client's limits (at least one of sends and requests).
     *
     * @param clientId          the client id as its heartbeats name it ({@code ip@instance...}), or {@code "*"} for
     *                          each client not listed
     * @param sendsPerSecond    send requests a second; null: sends not limited (but counted as requests)
     * @param burst             sends allowed at once after a quiet spell; default: {@code sendsPerSecond}
     * @param requestsPerSecond requests of any kind to brokers a second (sends and pulls included); null: none
     * @param requestBurst      requests allowed at once after a quiet spell; default: {@code requestsPerSecond}
     */
    public record ClientLimit(String clientId, Integer sendsPerSecond, Integer burst, Integer requestsPerSecond,
                              Integer requestBurst) {
        public ClientLimit {
            if (clientId == null || clientId.isBlank()) {
                throw ConfigException.inEntry("client-id", "is required (a client id, or \"*\" for every other client)");
            }
            clientId = clientId.trim();
            requireOne("sends-per-second", sendsPerSecond, "requests-per-second", requestsPerSecond);
            burst = checkedBurst("sends-per-second", sendsPerSecond, "burst", burst);
            requestBurst = checkedBurst("requests-per-second", requestsPerSecond, "request-burst", requestBurst);
        }

        /** A send limit alone. */
        public ClientLimit(String clientId, Integer sendsPerSecond, Integer burst) {
            this(clientId, sendsPerSecond, burst, null, null);
        }
    }

    /**
     * One source address's limits (at least one of sends and requests), each address it matches getting buckets of
     * its own.
     *
     * @param address           an IP address ({@code 10.0.0.5}, {@code ::1}), a CIDR range ({@code 10.0.0.0/8}), or
     *                          {@code "*"} for every address no other entry matches; the most specific entry wins
     * @param sendsPerSecond    send requests a second from that address; null: sends not limited (but counted as
     *                          requests)
     * @param burst             sends allowed at once after a quiet spell; default: {@code sendsPerSecond}
     * @param requestsPerSecond requests of any kind to brokers a second from that address; null: none
     * @param requestBurst      requests allowed at once after a quiet spell; default: {@code requestsPerSecond}
     */
    public record AddressLimit(String address, Integer sendsPerSecond, Integer burst, Integer requestsPerSecond,
                               Integer requestBurst) {
        public AddressLimit {
            if (address == null || address.isBlank()) {
                throw ConfigException.inEntry("address", "is required (an IP address, a CIDR range such as 10.0.0.0/8,"
                    + " or \"*\" for every other address)");
            }
            address = address.trim();
            if (!ANY.equals(address)) {
                range(address); // checks it
            }
            requireOne("sends-per-second", sendsPerSecond, "requests-per-second", requestsPerSecond);
            burst = checkedBurst("sends-per-second", sendsPerSecond, "burst", burst);
            requestBurst = checkedBurst("requests-per-second", requestsPerSecond, "request-burst", requestBurst);
        }

        /** This entry's range (null for {@code "*"}). */
        public AddressRange range() {
            return ANY.equals(address) ? null : range(address);
        }

        /** The prefix length of this entry's range: all its bits for one address, -1 for {@code "*"}. */
        public int prefixLength() {
            return ANY.equals(address) ? -1 : range(address).prefixLength();
        }

        /** Whether {@code ip} (4 or 16 bytes) lies in this entry's range. */
        public boolean matches(byte[] ip) {
            return ANY.equals(address) || range(address).contains(ip);
        }

        private static AddressRange range(String address) {
            try {
                return AddressRange.parse(address);
            } catch (IllegalArgumentException e) {
                throw ConfigException.inEntry("address", e.getMessage() + " (or \"*\" for every other address)");
            }
        }
    }

    private static void requireOne(String key, Integer value, String otherKey, Integer other) {
        if (value == null && other == null) {
            throw ConfigException.inEntry(key, "or " + otherKey + " is required");
        }
    }

    /**
     * Checks a rate (null: that kind not limited; else between 1 and {@link #MAX_RATE}) and returns its burst
     * (default: the rate; null without a rate).
     */
    private static Integer checkedBurst(String rateKey, Integer rate, String burstKey, Integer burst) {
        if (rate == null) {
            if (burst != null) {
                throw ConfigException.inEntry(burstKey, "needs " + rateKey);
            }
            return null;
        }
        checkRange(rateKey, rate);
        int b = Objects.requireNonNullElse(burst, rate);
        checkRange(burstKey, b);
        return b;
    }

    private static void checkRange(String key, int value) {
        if (value < 1 || value > MAX_RATE) {
            throw ConfigException.inEntry(key, "must be between 1 and " + MAX_RATE + ", was " + value);
        }
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
