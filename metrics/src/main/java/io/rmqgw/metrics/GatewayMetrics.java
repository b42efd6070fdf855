package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The gateway's meters, created once and looked up without allocation on hot paths. Tags are
 * bounded sets (reasons, roles, broker addresses known from routes), never per client or topic.
 */
public final class GatewayMetrics {

    /** Why the gateway closed a connection or answered a request itself. */
    public enum UpstreamFailure { CONNECT_FAILED, CONNECTION_LOST, TIMEOUT }

    private final MeterRegistry registry;
    private final Map<String, Counter> decodeErrors = new ConcurrentHashMap<>();
    private final Map<String, Counter> closedConnections = new ConcurrentHashMap<>();
    private final Map<UpstreamFailure, Counter> upstreamFailures = new EnumMap<>(UpstreamFailure.class);
    private final Counter routeCacheHits;
    private final Counter routesRewritten;

    public GatewayMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (UpstreamFailure failure : UpstreamFailure.values()) {
            upstreamFailures.put(failure, Counter.builder("rmqgw.upstream.failures")
                .description("Requests the gateway answered itself because an upstream failed")
                .tag("reason", failure.name().toLowerCase())
                .register(registry));
        }
        routeCacheHits = Counter.builder("rmqgw.route.cache.served")
            .description("Route requests answered from the cache while no name server answered")
            .register(registry);
        routesRewritten = Counter.builder("rmqgw.route.rewritten")
            .description("Route and cluster answers rewritten to point at the gateway")
            .register(registry);
    }

    public static GatewayMetrics inMemory() {
        return new GatewayMetrics(new SimpleMeterRegistry());
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** A frame that could not be decoded; {@code reason} is one of a small fixed set. */
    public void decodeError(String reason) {
        decodeErrors.computeIfAbsent(reason, r -> Counter.builder("rmqgw.decode.errors")
            .description("Connections closed because a frame could not be decoded")
            .tag("reason", r)
            .register(registry)).increment();
    }

    public double decodeErrors(String reason) {
        Counter c = decodeErrors.get(reason);
        return c == null ? 0 : c.count();
    }

    /** A connection the gateway closed on its own initiative. */
    public void connectionClosed(String role, String reason) {
        closedConnections.computeIfAbsent(role + '\u0000' + reason, k -> Counter.builder("rmqgw.connections.closed")
            .description("Connections closed by the gateway, by listener role and reason")
            .tag("role", role)
            .tag("reason", reason)
            .register(registry)).increment();
    }

    public void upstreamFailure(UpstreamFailure failure) {
        upstreamFailures.get(failure).increment();
    }

    public double upstreamFailures(UpstreamFailure failure) {
        return upstreamFailures.get(failure).count();
    }

    public void routeServedFromCache() {
        routeCacheHits.increment();
    }

    public void routeRewritten() {
        routesRewritten.increment();
    }
}
