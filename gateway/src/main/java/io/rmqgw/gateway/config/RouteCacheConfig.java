package io.rmqgw.gateway.config;

import java.time.Duration;

/** @param ttl how long a route answered by a name server may be served while no name server answers */
public record RouteCacheConfig(Duration ttl) {

    public static final Duration DEFAULT_TTL = Duration.ofSeconds(60);

    public RouteCacheConfig {
        ttl = UpstreamConfig.positive("routes.ttl", ttl, DEFAULT_TTL);
    }
}
