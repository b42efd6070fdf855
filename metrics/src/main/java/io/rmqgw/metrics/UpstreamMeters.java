package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The upstreams: requests the gateway answered itself because an upstream failed, whether each name server and
 * broker was reachable at the last attempt ({@code rmqgw.namesrv.up}, {@code rmqgw.broker.up} by address), and
 * route answers served from the cache or rewritten to point at the gateway.
 */
public final class UpstreamMeters {

    private final MeterRegistry registry;
    private final Map<UpstreamFailure, Counter> failures = new EnumMap<>(UpstreamFailure.class);
    private final Counter routeCacheHits;
    private final Counter routesRewritten;
    private final Map<String, Health> namesrvHealth = new ConcurrentHashMap<>();
    private final Map<String, Health> brokerHealth = new ConcurrentHashMap<>();

    UpstreamMeters(MeterRegistry registry) {
        this.registry = registry;
        for (UpstreamFailure failure : UpstreamFailure.values()) {
            failures.put(failure, Counter.builder("rmqgw.upstream.failures")
                .description("Requests the gateway answered itself because an upstream failed")
                .tag("reason", failure.name().toLowerCase(Locale.ROOT))
                .register(registry));
        }
        routeCacheHits = Counter.builder("rmqgw.route.cache.served")
            .description("Route requests answered from the cache while no name server answered")
            .register(registry);
        routesRewritten = Counter.builder("rmqgw.route.rewritten")
            .description("Route and cluster answers rewritten to point at the gateway")
            .register(registry);
    }

    public void upstreamFailure(UpstreamFailure failure) {
        failures.get(failure).increment();
    }

    public void routeServedFromCache() {
        routeCacheHits.increment();
    }

    public void routeRewritten() {
        routesRewritten.increment();
    }

    /** Whether the last attempt to reach the name server at {@code address} succeeded ({@code rmqgw.namesrv.up}). */
    public void namesrvUp(String address, boolean up) {
        health(namesrvHealth, "rmqgw.namesrv.up", "Upstream name server reachable (1) or not (0) at the last attempt",
            address).set(up);
    }

    /** Whether the last attempt to reach the broker at {@code address} succeeded ({@code rmqgw.broker.up}). */
    public void brokerUp(String address, boolean up) {
        health(brokerHealth, "rmqgw.broker.up", "Upstream broker reachable (1) or not (0) at the last attempt",
            address).set(up);
    }

    /** Drops the health gauge of a name server no longer configured. */
    public void namesrvRemoved(String address) {
        Health h = namesrvHealth.remove(address);
        if (h != null) {
            registry.remove(h.gauge);
        }
    }

    private Health health(Map<String, Health> map, String name, String description, String address) {
        Health h = map.get(address);
        if (h == null) {
            h = map.computeIfAbsent(address, a -> new Health(registry, name, description, a));
        }
        return h;
    }

    private static final class Health extends AtomicInteger {
        final Gauge gauge;

        Health(MeterRegistry registry, String name, String description, String address) {
            gauge = Gauge.builder(name, this, AtomicInteger::get)
                .description(description)
                .tag("address", address)
                .strongReference(true)
                .register(registry);
        }

        void set(boolean up) {
            set(up ? 1 : 0);
        }
    }
}
