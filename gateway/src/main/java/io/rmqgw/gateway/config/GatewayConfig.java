package io.rmqgw.gateway.config;

import java.time.Duration;
import java.util.Objects;

/**
 * The whole gateway configuration, bound from YAML ({@link ConfigLoader}). Every record validates
 * itself in its constructor and fills its defaults, so a config object that exists is usable.
 *
 * @param listen         where the name-server role listens (clients' {@code namesrvAddr})
 * @param advertiseHost  the host written into rewritten routes and message ids
 * @param brokerPorts    ports for the per-broker listeners
 * @param upstream       name servers and timeouts toward the cluster
 * @param routes         route cache
 * @param maxFrameLength largest accepted frame, in bytes
 * @param drainTimeout   how long a stop lets in-flight requests finish
 * @param embedded       an in-process name server and broker behind the gateway
 */
public record GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                            RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                            EmbeddedConfig embedded) {

    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

    public GatewayConfig {
        listen = Objects.requireNonNullElse(listen, new HostPort("127.0.0.1", 9876));
        advertiseHost = advertiseHost == null || advertiseHost.isBlank() ? listen.host() : advertiseHost;
        if ("0.0.0.0".equals(advertiseHost) || "::".equals(advertiseHost)) {
            throw new ConfigException("advertise-host", "must be an address clients can reach, not the wildcard "
                + advertiseHost + "; set it when listening on all interfaces");
        }
        brokerPorts = Objects.requireNonNullElse(brokerPorts, new PortRange(20900, 20999));
        upstream = Objects.requireNonNullElse(upstream, new UpstreamConfig(null, null, null, null));
        routes = Objects.requireNonNullElse(routes, new RouteCacheConfig(null));
        maxFrameLength = Objects.requireNonNullElse(maxFrameLength, DEFAULT_MAX_FRAME_LENGTH);
        if (maxFrameLength < 1024 || maxFrameLength > 1 << 30) {
            throw new ConfigException("max-frame-length", "must be between 1024 and 1073741824 bytes, was " + maxFrameLength);
        }
        drainTimeout = Objects.requireNonNullElse(drainTimeout, Duration.ofSeconds(10));
        if (drainTimeout.isNegative()) {
            throw new ConfigException("drain-timeout", "must not be negative");
        }
        embedded = Objects.requireNonNullElse(embedded, EmbeddedConfig.DISABLED);
        if (!embedded.enabled() && upstream.namesrv().isEmpty()) {
            throw new ConfigException("upstream.namesrv", "at least one name server is required unless embedded.enabled is true");
        }
        if (brokerPorts.contains(listen.port())) {
            throw new ConfigException("broker-ports", "range " + brokerPorts + " contains the listen port " + listen.port());
        }
    }

    /** A copy with the name servers replaced (the embedded cluster supplies its own). */
    public GatewayConfig withNamesrv(java.util.List<HostPort> namesrv) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts,
            new UpstreamConfig(namesrv, upstream.connectTimeout(), upstream.requestTimeout(), upstream.longPollTimeout()),
            routes, maxFrameLength, drainTimeout, embedded);
    }
}
