package io.rmqgw.gateway.limits;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.RateLimitConfig.AddressLimit;
import io.rmqgw.gateway.config.RateLimitConfig.ClientLimit;
import io.rmqgw.gateway.config.RateLimitConfig.TopicLimit;
import io.rmqgw.metrics.GatewayMetrics;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.rocketmq.remoting.protocol.RequestCode;

/**
 * The request rate limits in force ({@code rate-limits}): token buckets (bucket4j, lock-free) per listed topic
 * and client, and per topic or client met under a {@code "*"} entry. A topic has a send bucket and a pull bucket,
 * a client a send bucket and a request bucket, each only when that kind is limited. A send takes one token from
 * its topic's send bucket, then one from its client's; the first empty bucket refuses it with a remark saying
 * which limit and how large (a send its client's limit refuses gives its topic's token back). A pull takes one
 * from its topic's pull bucket. Every request a client sends to a broker (sends and pulls too; heartbeats,
 * unregistrations and oneways not) takes one from its client's request bucket first. The same requests and sends
 * also take a token from their source address's buckets ({@code per-address}), whatever client id the connection
 * claims and whether it named one yet: the address's request bucket before the client's, its send bucket after
 * the topic's and the client's (a bucket that refuses gives the tokens taken before it back). Thread-safe: every
 * client event loop asks at once.
 *
 * <p>A reload with other limits replaces every bucket (they start full). Buckets made for {@code "*"} entries
 * are kept up to {@link #MAX_DYNAMIC_BUCKETS} per kind; past that the kind's table is emptied and refills as
 * requests arrive, so memory stays bounded whatever names clients use.
 */
public final class RateLimits {

    /** Buckets made for {@code "*"} entries (and addresses of ranges), per kind, before the table is emptied. */
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
     * Puts {@code config} in force for every later request.
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

    /** How long a refused request's SYSTEM_BUSY answer is held before it goes out, in nanoseconds (0: at once). */
    public long refusalDelayNanos() {
        return table.refusalDelayNanos;
    }

    /** Whether any send limit is configured (none: sends are not even looked at). */
    public boolean active() {
        return table.limitsSends;
    }

    /** Whether any topic limits pulls (none: pulls are not even looked at). */
    public boolean limitsPulls() {
        return table.limitsPulls;
    }

    /** Whether any client or address limits its requests (none: requests are not counted). */
    public boolean limitsRequests() {
        return table.limitsRequests;
    }

    /**
     * Takes a token for one send from {@code source} (null: no address limit applies).
     *
     * @return null when admitted; else the remark of the SYSTEM_BUSY answer (the refusal is counted)
     */
    public String admitSend(String topic, String clientId, Source source) {
        Table t = table;
        TopicBuckets byTopic = t.topic(topic);
        Bucket topicSends = byTopic == null ? null : byTopic.sends;
        if (topicSends != null && !topicSends.tryConsume(1)) {
            metrics.rateLimits().limited("topic");
            return refusal("sends to topic " + topic, byTopic.limit.sendsPerSecond(), byTopic.limit.burst());
        }
        ClientBuckets byClient = t.client(clientId);
        if (byClient != null && byClient.sends != null && !byClient.sends.tryConsume(1)) {
            if (topicSends != null) {
                topicSends.addTokens(1); // not sent: the topic's token goes back
            }
            metrics.rateLimits().limited("client");
            return refusal("sends of client " + clientId, byClient.limit.sendsPerSecond(), byClient.limit.burst());
        }
        AddressBuckets byAddress = source == null ? null : t.address(source);
        if (byAddress != null && byAddress.sends != null && !byAddress.sends.tryConsume(1)) {
            if (topicSends != null) {
                topicSends.addTokens(1);
            }
            if (byClient != null && byClient.sends != null) {
                byClient.sends.addTokens(1);
            }
            metrics.rateLimits().limited("address");
            return refusal("sends from address " + source.ip(), byAddress.limit.sendsPerSecond(),
                byAddress.limit.burst());
        }
        return null;
    }

    /**
     * Takes a token for one pull of {@code topic}.
     *
     * @return null when admitted; else the remark of the SYSTEM_BUSY answer (the refusal is counted)
     */
    public String admitPull(String topic) {
        TopicBuckets byTopic = table.topic(topic);
        if (byTopic == null || byTopic.pulls == null || byTopic.pulls.tryConsume(1)) {
            return null;
        }
        metrics.rateLimits().limited("topic_pull");
        return refusal("pulls of topic " + topic, byTopic.limit.pullsPerSecond(), byTopic.limit.pullBurst());
    }

    /**
     * Takes a token for one request of {@code clientId} from {@code source} (null: no address limit applies):
     * the address's request bucket first, then the client's (which gives the address's token back if it refuses).
     *
     * @return null when admitted; else the remark of the SYSTEM_BUSY answer (the refusal is counted)
     */
    public String admitRequest(String clientId, Source source, int code) {
        Table t = table;
        AddressBuckets byAddress = source == null ? null : t.address(source);
        Bucket addressRequests = byAddress == null ? null : byAddress.requests;
        if (addressRequests != null && !addressRequests.tryConsume(1)) {
            metrics.rateLimits().limited("address_request");
            return refusal("requests from address " + source.ip() + " (this one code " + code + ")",
                byAddress.limit.requestsPerSecond(), byAddress.limit.requestBurst());
        }
        ClientBuckets byClient = t.client(clientId);
        if (byClient == null || byClient.requests == null || byClient.requests.tryConsume(1)) {
            return null;
        }
        if (addressRequests != null) {
            addressRequests.addTokens(1);
        }
        metrics.rateLimits().limited("client_request");
        return refusal("requests of client " + clientId + " (this one code " + code + ")",
            byClient.limit.requestsPerSecond(), byClient.limit.requestBurst());
    }

    /**
     * Whether a request with {@code code} counts toward a client's {@code requests-per-second}: not heartbeats and
     * unregistrations, which keep the client known to its brokers (refusing them would make brokers forget
     * consumers and rebalance every group member) and cost a broker little.
     */
    public static boolean countsAsRequest(int code) {
        return code != RequestCode.HEART_BEAT && code != RequestCode.UNREGISTER_CLIENT;
    }

    private static String refusal(String what, int rate, int burst) {
        return "[RATE_LIMITED] " + what + " exceed the gateway's limit of " + rate + " per second (burst " + burst
            + "); retry later";
    }

    /**
     * A connection's source address as the address limits see it: {@code ip} names it (in remarks and as the key
     * of its buckets), {@code bytes} are matched against the entries' ranges (null: only {@code "*"} matches).
     */
    public record Source(String ip, byte[] bytes) {

        /** The source of a connection from {@code remote}. */
        public static Source of(SocketAddress remote) {
            if (remote instanceof InetSocketAddress inet && inet.getAddress() != null) {
                return new Source(inet.getAddress().getHostAddress(), inet.getAddress().getAddress());
            }
            return new Source(String.valueOf(remote), null);
        }
    }

    /** An address's buckets; null where that kind is not limited. */
    private record AddressBuckets(AddressLimit limit, Bucket sends, Bucket requests) {
    }

    /** A topic's buckets; null where that kind is not limited. */
    private record TopicBuckets(TopicLimit limit, Bucket sends, Bucket pulls) {
    }

    /** A client's buckets; null where that kind is not limited. */
    private record ClientBuckets(ClientLimit limit, Bucket sends, Bucket requests) {
    }

    /** One configuration's buckets. */
    private static final class Table {
        final RateLimitConfig config;
        final TimeMeter clock;
        final boolean limitsSends;
        final boolean limitsPulls;
        final boolean limitsRequests;
        final Map<String, TopicBuckets> topics = new HashMap<>();
        final Map<String, ClientBuckets> clients = new HashMap<>();
        final TopicLimit anyTopic;
        final ClientLimit anyClient;
        /** The address entries, most specific first ({@code "*"} last). */
        final List<AddressLimit> addressLimits;
        final long refusalDelayNanos;
        final ConcurrentHashMap<String, TopicBuckets> dynamicTopics = new ConcurrentHashMap<>();
        final ConcurrentHashMap<String, ClientBuckets> dynamicClients = new ConcurrentHashMap<>();
        final ConcurrentHashMap<String, AddressBuckets> addresses = new ConcurrentHashMap<>();

        Table(RateLimitConfig config, TimeMeter clock) {
            this.config = config;
            this.clock = clock;
            TopicLimit anyT = null;
            for (TopicLimit l : config.perTopic()) {
                if (RateLimitConfig.ANY.equals(l.topic())) {
                    anyT = l;
                } else {
                    topics.put(l.topic(), buckets(l));
                }
            }
            ClientLimit anyC = null;
            for (ClientLimit l : config.perClient()) {
                if (RateLimitConfig.ANY.equals(l.clientId())) {
                    anyC = l;
                } else {
                    clients.put(l.clientId(), buckets(l));
                }
            }
            anyTopic = anyT;
            anyClient = anyC;
            List<AddressLimit> byAddress = new ArrayList<>(config.perAddress());
            byAddress.sort(Comparator.comparingInt(AddressLimit::prefixLength).reversed());
            addressLimits = List.copyOf(byAddress);
            refusalDelayNanos = config.refusalDelay().toNanos();
            limitsSends = config.perTopic().stream().anyMatch(l -> l.sendsPerSecond() != null)
                || config.perClient().stream().anyMatch(l -> l.sendsPerSecond() != null)
                || config.perAddress().stream().anyMatch(l -> l.sendsPerSecond() != null);
            limitsPulls = config.perTopic().stream().anyMatch(l -> l.pullsPerSecond() != null);
            // an address's send limit counts its sends as requests, so requests are looked at too
            limitsRequests = config.perClient().stream().anyMatch(l -> l.requestsPerSecond() != null)
                || !config.perAddress().isEmpty();
        }

        /** The buckets of {@code source}'s address: its own, of the most specific entry matching it; null if none. */
        AddressBuckets address(Source source) {
            if (addressLimits.isEmpty()) {
                return null;
            }
            AddressBuckets existing = addresses.get(source.ip());
            if (existing != null) {
                return existing;
            }
            AddressLimit match = null;
            for (AddressLimit l : addressLimits) {
                if (l.matches(source.bytes())) {
                    match = l;
                    break;
                }
            }
            if (match == null) {
                return null;
            }
            AddressLimit limit = match;
            return dynamic(addresses, source.ip(), () -> new AddressBuckets(limit,
                bucket(limit.sendsPerSecond(), limit.burst()), bucket(limit.requestsPerSecond(), limit.requestBurst())));
        }

        TopicBuckets topic(String topic) {
            TopicBuckets named = topics.get(topic);
            if (named != null || anyTopic == null) {
                return named;
            }
            return dynamic(dynamicTopics, topic, () -> buckets(anyTopic));
        }

        ClientBuckets client(String clientId) {
            ClientBuckets named = clients.get(clientId);
            if (named != null || anyClient == null) {
                return named;
            }
            return dynamic(dynamicClients, clientId, () -> buckets(anyClient));
        }

        private static <B> B dynamic(ConcurrentHashMap<String, B> map, String key, Supplier<B> make) {
            B existing = map.get(key);
            if (existing != null) {
                return existing;
            }
            if (map.size() >= MAX_DYNAMIC_BUCKETS) {
                map.clear();
            }
            return map.computeIfAbsent(key, k -> make.get());
        }

        private TopicBuckets buckets(TopicLimit l) {
            return new TopicBuckets(l, bucket(l.sendsPerSecond(), l.burst()), bucket(l.pullsPerSecond(), l.pullBurst()));
        }

        private ClientBuckets buckets(ClientLimit l) {
            return new ClientBuckets(l, bucket(l.sendsPerSecond(), l.burst()),
                bucket(l.requestsPerSecond(), l.requestBurst()));
        }

        /** Null when {@code rate} is null (that kind not limited). */
        private Bucket bucket(Integer rate, Integer burst) {
            if (rate == null) {
                return null;
            }
            return Bucket.builder()
                .addLimit(Bandwidth.builder().capacity(burst).refillGreedy(rate, Duration.ofSeconds(1)).build())
                .withCustomTimePrecision(clock)
                .build();
        }
    }
}
