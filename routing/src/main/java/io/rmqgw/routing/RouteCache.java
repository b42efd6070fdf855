package io.rmqgw.routing;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * Rewritten GET_ROUTEINFO_BY_TOPIC bodies by topic and dialect, fresh for a fixed time after they
 * were stored. Bodies hold gateway ports, so drop everything ({@link #invalidateAll}) when a broker
 * is moved to other ports.
 */
public final class RouteCache {

    public static final long DEFAULT_MAXIMUM_SIZE = 100_000;

    private record Key(String topic, RouteDialect dialect) {
    }

    private final Duration ttl;
    private final Cache<Key, byte[]> cache;

    public RouteCache(Duration ttl) {
        this(ttl, DEFAULT_MAXIMUM_SIZE, Ticker.systemTicker());
    }

    /** @param ticker nanosecond time source; tests pass a fake one */
    public RouteCache(Duration ttl, long maximumSize, Ticker ticker) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("route cache ttl must be positive, was " + ttl);
        }
        if (maximumSize < 1) {
            throw new IllegalArgumentException("route cache maximum size must be positive, was " + maximumSize);
        }
        this.ttl = ttl;
        this.cache = Caffeine.newBuilder()
            .expireAfterWrite(ttl)
            .maximumSize(maximumSize)
            .ticker(Objects.requireNonNull(ticker, "ticker"))
            // Maintenance inline: cheap here, and no work escapes to the common pool.
            .executor(Runnable::run)
            .build();
    }

    public Duration ttl() {
        return ttl;
    }

    /** Stores a copy of {@code body}, replacing any earlier one and restarting its freshness. */
    public void put(String topic, RouteDialect dialect, byte[] body) {
        cache.put(key(topic, dialect), Arrays.copyOf(Objects.requireNonNull(body, "body"), body.length));
    }

    /** A copy of the body stored less than the TTL ago, or empty. */
    public Optional<byte[]> getFresh(String topic, RouteDialect dialect) {
        byte[] body = cache.getIfPresent(key(topic, dialect));
        return body == null ? Optional.empty() : Optional.of(body.clone());
    }

    /** Drops the topic in every dialect, e.g. when a name server says it no longer exists. */
    public void invalidate(String topic) {
        for (RouteDialect dialect : RouteDialect.values()) {
            cache.invalidate(key(topic, dialect));
        }
    }

    public void invalidateAll() {
        cache.invalidateAll();
    }

    public long estimatedSize() {
        return cache.estimatedSize();
    }

    private static Key key(String topic, RouteDialect dialect) {
        return new Key(Objects.requireNonNull(topic, "topic"), Objects.requireNonNull(dialect, "dialect"));
    }
}
