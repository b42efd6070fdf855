package io.rmqgw.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RouteCacheTest {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final RouteCache cache = new RouteCache(Duration.ofSeconds(30), 1000, nanos::get);

    private static byte[] body(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    @Test
    void servesBodyUntilTtlPasses() {
        cache.put("TopicA", RouteDialect.STANDARD, body("{\"a\":1}"));

        advance(Duration.ofSeconds(29));
        assertArrayEquals(body("{\"a\":1}"), cache.getFresh("TopicA", RouteDialect.STANDARD).orElseThrow());

        advance(Duration.ofSeconds(1));
        assertEquals(Optional.empty(), cache.getFresh("TopicA", RouteDialect.STANDARD));
    }

    @Test
    void putRestartsFreshness() {
        cache.put("TopicA", RouteDialect.FASTJSON, body("old"));
        advance(Duration.ofSeconds(20));
        cache.put("TopicA", RouteDialect.FASTJSON, body("new"));
        advance(Duration.ofSeconds(20));
        assertArrayEquals(body("new"), cache.getFresh("TopicA", RouteDialect.FASTJSON).orElseThrow());
    }

    @Test
    void keepsDialectsApart() {
        cache.put("TopicA", RouteDialect.STANDARD, body("{\"brokerAddrs\":{\"0\":\"gw:1\"}}"));
        assertEquals(Optional.empty(), cache.getFresh("TopicA", RouteDialect.FASTJSON));
        cache.put("TopicA", RouteDialect.FASTJSON, body("{\"brokerAddrs\":{0:\"gw:1\"}}"));
        assertArrayEquals(body("{\"brokerAddrs\":{\"0\":\"gw:1\"}}"),
            cache.getFresh("TopicA", RouteDialect.STANDARD).orElseThrow());
        assertArrayEquals(body("{\"brokerAddrs\":{0:\"gw:1\"}}"),
            cache.getFresh("TopicA", RouteDialect.FASTJSON).orElseThrow());
    }

    @Test
    void storedBodiesCannotBeChangedThroughArrays() {
        byte[] stored = body("abc");
        cache.put("TopicA", RouteDialect.STANDARD, stored);
        stored[0] = 'X';
        cache.getFresh("TopicA", RouteDialect.STANDARD).orElseThrow()[1] = 'Y';
        assertArrayEquals(body("abc"), cache.getFresh("TopicA", RouteDialect.STANDARD).orElseThrow());
    }

    @Test
    void invalidatesOneTopicInEveryDialectOrEverything() {
        cache.put("TopicA", RouteDialect.STANDARD, body("a"));
        cache.put("TopicA", RouteDialect.FASTJSON, body("a"));
        cache.put("TopicB", RouteDialect.STANDARD, body("b"));

        cache.invalidate("TopicA");
        assertEquals(Optional.empty(), cache.getFresh("TopicA", RouteDialect.STANDARD));
        assertEquals(Optional.empty(), cache.getFresh("TopicA", RouteDialect.FASTJSON));
        assertTrue(cache.getFresh("TopicB", RouteDialect.STANDARD).isPresent());

        cache.invalidateAll();
        assertEquals(Optional.empty(), cache.getFresh("TopicB", RouteDialect.STANDARD));
    }

    @Test
    void staysWithinMaximumSize() {
        RouteCache small = new RouteCache(Duration.ofMinutes(1), 10, nanos::get);
        for (int i = 0; i < 500; i++) {
            small.put("Topic" + i, RouteDialect.STANDARD, body("x"));
        }
        assertTrue(small.estimatedSize() <= 10, "size " + small.estimatedSize());
        assertEquals(RouteCache.DEFAULT_MAXIMUM_SIZE, 100_000);
    }

    @Test
    void rejectsBadSettings() {
        assertThrows(IllegalArgumentException.class, () -> new RouteCache(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> new RouteCache(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> new RouteCache(Duration.ofSeconds(1), 0, nanos::get));
        assertThrows(NullPointerException.class, () -> cache.put(null, RouteDialect.STANDARD, body("x")));
        assertThrows(NullPointerException.class, () -> cache.getFresh("TopicA", null));
        assertEquals(Duration.ofSeconds(30), cache.ttl());
    }
}
