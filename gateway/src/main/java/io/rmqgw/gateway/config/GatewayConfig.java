package io.rmqgw.gateway.config;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The whole gateway configuration, bound from YAML ({@link ConfigLoader}). Every record validates
 * itself in its constructor and fills its defaults, so a config object that exists is usable.
 * A {@link ConfigException} names the refused key by its YAML path.
 *
 * @param listen         where the name-server role listens (clients' {@code namesrvAddr})
 * @param advertiseHost  the host written into rewritten routes and message ids
 * @param brokerPorts    ports for the per-broker listeners
 * @param upstream       name servers and timeouts toward the cluster
 * @param routes         route cache
 * @param maxFrameLength largest accepted frame, in bytes
 * @param drainTimeout   how long a stop lets in-flight requests finish
 * @param embedded       an in-process name server and broker behind the gateway
 * @param admin          the admin HTTP port (metrics, health); on by default when read from YAML
 * @param downstream     what the gateway sends to clients
 * @param names          topic and group name checks at the edge
 * @param logging        log levels by logger (applied by the process that owns the logging backend)
 * @param fanout         multi-topic fan-out (off by default)
 * @param virtualQueues  consumer groups opted into virtual queues, one entry per group and topic
 * @param tls            TLS on the client-facing listeners (off by default)
 * @param rateLimits     request rate limits per topic and per client id (none by default)
 * @param coalescing     server-side coalescing of small sends into batches (no topic by default)
 * @param adminRequests  which admin request codes are relayed (destructive ones refused by default)
 * @param clusters       further upstream clusters by name, which logical topics span besides {@code default}
 * @param logicalTopics  topics that live on several clusters (none by default: every topic is {@code default}'s)
 */
public record GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                            RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                            EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream,
                            NamesConfig names, LoggingConfig logging, FanoutConfig fanout,
                            List<VirtualQueueConfig> virtualQueues, TlsConfig tls, RateLimitConfig rateLimits,
                            CoalescingConfig coalescing, AdminRequestsConfig adminRequests,
                            java.util.Map<String, ClusterConfig> clusters, List<LogicalTopicConfig> logicalTopics) {

    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;
    public static final HostPort DEFAULT_LISTEN = new HostPort("127.0.0.1", 9876);
    public static final PortRange DEFAULT_BROKER_PORTS = new PortRange(20900, 20999);
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(10);

    public GatewayConfig {
        listen = Objects.requireNonNullElse(listen, DEFAULT_LISTEN);
        advertiseHost = advertiseHost == null || advertiseHost.isBlank() ? listen.host() : advertiseHost.trim();
        if ("0.0.0.0".equals(advertiseHost) || "::".equals(advertiseHost) || "[::]".equals(advertiseHost)) {
            throw new ConfigException("advertise-host", "must be an address clients can reach, not the wildcard "
                + advertiseHost + "; set it when listening on all interfaces");
        }
        if (advertiseHost.chars().anyMatch(Character::isWhitespace)) {
            throw new ConfigException("advertise-host", "must be a host name or address, was '" + advertiseHost + "'");
        }
        if (advertiseHost.indexOf(':') >= 0 && advertiseHost.indexOf(':') == advertiseHost.lastIndexOf(':')) {
            throw new ConfigException("advertise-host", "must be a host without a port (the gateway advertises its"
                + " own ports), was '" + advertiseHost + "'");
        }
        brokerPorts = Objects.requireNonNullElse(brokerPorts, DEFAULT_BROKER_PORTS);
        upstream = Objects.requireNonNullElse(upstream, new UpstreamConfig(null, null, null, null));
        routes = Objects.requireNonNullElse(routes, new RouteCacheConfig(null));
        maxFrameLength = Objects.requireNonNullElse(maxFrameLength, DEFAULT_MAX_FRAME_LENGTH);
        if (maxFrameLength < 1024 || maxFrameLength > 1 << 30) {
            throw new ConfigException("max-frame-length", "must be between 1024 and 1073741824 bytes, was " + maxFrameLength);
        }
        drainTimeout = Objects.requireNonNullElse(drainTimeout, DEFAULT_DRAIN_TIMEOUT);
        if (drainTimeout.isNegative()) {
            throw new ConfigException("drain-timeout", "must not be negative");
        }
        embedded = Objects.requireNonNullElse(embedded, EmbeddedConfig.DISABLED);
        if (!embedded.enabled() && upstream.namesrv().isEmpty() && upstream.namesrvAddressUrl() == null) {
            throw new ConfigException("upstream.namesrv", "at least one name server is required unless embedded.enabled"
                + " is true or upstream.namesrv-address-url is set");
        }
        if (embedded.enabled() && upstream.namesrvAddressUrl() != null) {
            throw new ConfigException("upstream.namesrv-address-url", "cannot be used with embedded.enabled: true (the"
                + " embedded name server is the upstream); set embedded.enabled: false");
        }
        if (brokerPorts.contains(listen.port())) {
            throw new ConfigException("broker-ports", "range " + brokerPorts + " contains the listen port " + listen.port());
        }
        if (embedded.enabled()) {
            checkEmbeddedPorts(listen, brokerPorts, embedded);
        }
        admin = Objects.requireNonNullElse(admin, AdminConfig.DEFAULT);
        downstream = Objects.requireNonNullElse(downstream, DownstreamConfig.DEFAULT);
        names = Objects.requireNonNullElse(names, NamesConfig.DEFAULT);
        logging = Objects.requireNonNullElse(logging, LoggingConfig.DEFAULT);
        fanout = Objects.requireNonNullElse(fanout, FanoutConfig.DEFAULT);
        if (admin.enabled()) {
            checkAdminPort(listen, brokerPorts, embedded, admin);
        }
        virtualQueues = virtualQueues == null ? List.of() : virtualQueues;
        checkVirtualQueues(virtualQueues);
        virtualQueues = List.copyOf(virtualQueues);
        tls = Objects.requireNonNullElse(tls, TlsConfig.DISABLED);
        rateLimits = Objects.requireNonNullElse(rateLimits, RateLimitConfig.NONE);
        coalescing = Objects.requireNonNullElse(coalescing, CoalescingConfig.NONE);
        adminRequests = Objects.requireNonNullElse(adminRequests, AdminRequestsConfig.DEFAULT);
        clusters = clusters == null ? java.util.Map.of() : java.util.Collections.unmodifiableMap(
            new java.util.LinkedHashMap<>(clusters));
        logicalTopics = logicalTopics == null ? List.of() : List.copyOf(logicalTopics);
        checkLogicalTopics(clusters, logicalTopics);
    }

    /** Without further clusters and logical topics. */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream, NamesConfig names,
                         LoggingConfig logging, FanoutConfig fanout, List<VirtualQueueConfig> virtualQueues,
                         TlsConfig tls, RateLimitConfig rateLimits, CoalescingConfig coalescing,
                         AdminRequestsConfig adminRequests) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            downstream, names, logging, fanout, virtualQueues, tls, rateLimits, coalescing, adminRequests, null, null);
    }

    private static void checkLogicalTopics(java.util.Map<String, ClusterConfig> clusters,
                                           List<LogicalTopicConfig> logicalTopics) {
        clusters.forEach((name, cluster) -> {
            String path = "clusters." + name;
            if (name == null || name.isBlank() || !name.equals(name.trim())) {
                throw new ConfigException("clusters", "a cluster name must be a word, was '" + name + "'");
            }
            if (LogicalTopicConfig.DEFAULT_CLUSTER.equals(name)) {
                throw new ConfigException(path, "default is the cluster of upstream.namesrv; name this one otherwise");
            }
            if (cluster == null) {
                throw new ConfigException(path, "must be a mapping with namesrv");
            }
            cluster.check(path);
        });
        java.util.Map<String, Integer> seen = new java.util.HashMap<>();
        for (int i = 0; i < logicalTopics.size(); i++) {
            LogicalTopicConfig entry = logicalTopics.get(i);
            String path = "logical-topics[" + i + "]";
            if (entry == null) {
                throw new ConfigException(path, "must be a mapping with topic and clusters");
            }
            Integer earlier = seen.putIfAbsent(entry.topic(), i);
            if (earlier != null) {
                throw new ConfigException(path + ".topic", entry.topic() + " is already listed at logical-topics["
                    + earlier + "]");
            }
            for (String cluster : entry.clusters()) {
                if (!LogicalTopicConfig.DEFAULT_CLUSTER.equals(cluster) && !clusters.containsKey(cluster)) {
                    throw new ConfigException(path + ".clusters", "cluster " + cluster + " is neither default nor"
                        + " named under clusters: " + clusters.keySet());
                }
            }
        }
    }

    /** With the default admin-request policy. */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream, NamesConfig names,
                         LoggingConfig logging, FanoutConfig fanout, List<VirtualQueueConfig> virtualQueues,
                         TlsConfig tls, RateLimitConfig rateLimits, CoalescingConfig coalescing) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            downstream, names, logging, fanout, virtualQueues, tls, rateLimits, coalescing, null);
    }

    /** Without coalescing. */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream, NamesConfig names,
                         LoggingConfig logging, FanoutConfig fanout, List<VirtualQueueConfig> virtualQueues,
                         TlsConfig tls, RateLimitConfig rateLimits) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            downstream, names, logging, fanout, virtualQueues, tls, rateLimits, null);
    }

    /** Without TLS and rate limits. */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream, NamesConfig names,
                         LoggingConfig logging, FanoutConfig fanout, List<VirtualQueueConfig> virtualQueues) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            downstream, names, logging, fanout, virtualQueues, null, null);
    }

    /** Without virtual queues. */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream, NamesConfig names,
                         LoggingConfig logging, FanoutConfig fanout) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            downstream, names, logging, fanout, null);
    }

    /** Without fan-out and virtual queues. */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream, NamesConfig names,
                         LoggingConfig logging) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            downstream, names, logging, null, null);
    }

    /** Without {@code logging.levels}: the logging backend's own configuration applies. */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin, DownstreamConfig downstream, NamesConfig names) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            downstream, names, null, null);
    }

    /**
     * A configuration without the admin port, for code that builds one by hand (tests start many
     * gateways side by side; a fixed admin port would collide). YAML-read configurations get
     * {@link AdminConfig#DEFAULT} instead.
     */
    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded, AdminConfig admin) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded, admin,
            null, null);
    }

    public GatewayConfig(HostPort listen, String advertiseHost, PortRange brokerPorts, UpstreamConfig upstream,
                         RouteCacheConfig routes, Integer maxFrameLength, Duration drainTimeout,
                         EmbeddedConfig embedded) {
        this(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout, embedded,
            AdminConfig.DISABLED);
    }

    private static void checkVirtualQueues(List<VirtualQueueConfig> virtualQueues) {
        for (int i = 0; i < virtualQueues.size(); i++) {
            VirtualQueueConfig entry = virtualQueues.get(i);
            if (entry == null) {
                throw new ConfigException("virtual-queues[" + i + "]", "must be a mapping with group and topic");
            }
            for (int j = 0; j < i; j++) {
                VirtualQueueConfig earlier = virtualQueues.get(j);
                if (earlier.group().equals(entry.group()) && earlier.topic().equals(entry.topic())) {
                    throw new ConfigException("virtual-queues[" + i + "]", "group " + entry.group() + " on topic "
                        + entry.topic() + " is already listed at virtual-queues[" + j + "]");
                }
            }
        }
    }

    private static void checkAdminPort(HostPort listen, PortRange brokerPorts, EmbeddedConfig embedded, AdminConfig admin) {
        int port = admin.listen().port();
        if (port == listen.port()) {
            throw new ConfigException("admin.listen", "port " + port + " is the listen port; the admin port needs its own");
        }
        if (brokerPorts.contains(port)) {
            throw new ConfigException("admin.listen", "port " + port + " is inside broker-ports " + brokerPorts);
        }
        if (embedded.enabled() && (port == embedded.namesrvPort() || embedded.brokerPortsUsed().contains(port))) {
            throw new ConfigException("admin.listen", "port " + port + " is used by the embedded name server ("
                + embedded.namesrvPort() + ") or broker " + embedded.brokerPortsUsed());
        }
    }

    private static void checkEmbeddedPorts(HostPort listen, PortRange brokerPorts, EmbeddedConfig embedded) {
        int namesrvPort = embedded.namesrvPort();
        if (namesrvPort == listen.port()) {
            throw new ConfigException("embedded.namesrv-port", "is the listen port " + namesrvPort
                + "; the embedded name server needs a port of its own");
        }
        if (brokerPorts.contains(namesrvPort)) {
            throw new ConfigException("embedded.namesrv-port", namesrvPort + " is inside broker-ports " + brokerPorts);
        }
        for (int port : embedded.brokerPortsUsed()) {
            if (port == listen.port()) {
                throw new ConfigException("embedded.broker-port", "the embedded broker's ports "
                    + embedded.brokerPortsUsed() + " (VIP, main) include the listen port " + port);
            }
            if (brokerPorts.contains(port)) {
                throw new ConfigException("embedded.broker-port", "the embedded broker's ports "
                    + embedded.brokerPortsUsed() + " (VIP, main) overlap broker-ports " + brokerPorts);
            }
        }
    }

    /** A copy with the name servers replaced (the embedded cluster supplies its own). */
    public GatewayConfig withNamesrv(List<HostPort> namesrv) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream.withNamesrv(namesrv),
            routes, maxFrameLength, drainTimeout, embedded, admin, downstream, names, logging, fanout, virtualQueues, tls,
            rateLimits, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with other log levels. */
    public GatewayConfig withLogging(LoggingConfig levels) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, levels, fanout, virtualQueues, tls, rateLimits, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with other upstream settings. */
    public GatewayConfig withUpstream(UpstreamConfig replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, replacement, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, virtualQueues, tls, rateLimits, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with these route-cache settings. */
    public GatewayConfig withRoutes(RouteCacheConfig replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, replacement, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, virtualQueues, tls, rateLimits, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with other fan-out settings. */
    public GatewayConfig withFanout(FanoutConfig replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, replacement, virtualQueues, tls, rateLimits, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with other virtual-queue entries. */
    public GatewayConfig withVirtualQueues(List<VirtualQueueConfig> replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, replacement, tls, rateLimits, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with other TLS settings. */
    public GatewayConfig withTls(TlsConfig replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, virtualQueues, replacement, rateLimits, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with other rate limits. */
    public GatewayConfig withRateLimits(RateLimitConfig replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, virtualQueues, tls, replacement, coalescing, adminRequests, clusters, logicalTopics);
    }

    /** A copy with other coalescing settings. */
    public GatewayConfig withCoalescing(CoalescingConfig replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, virtualQueues, tls, rateLimits, replacement, adminRequests, clusters, logicalTopics);
    }

    /** A copy with another admin-request policy. */
    public GatewayConfig withAdminRequests(AdminRequestsConfig replacement) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, virtualQueues, tls, rateLimits, coalescing, replacement, clusters, logicalTopics);
    }

    /** A copy with other clusters and logical topics. */
    public GatewayConfig withLogicalTopics(java.util.Map<String, ClusterConfig> nextClusters,
                                           List<LogicalTopicConfig> nextTopics) {
        return new GatewayConfig(listen, advertiseHost, brokerPorts, upstream, routes, maxFrameLength, drainTimeout,
            embedded, admin, downstream, names, logging, fanout, virtualQueues, tls, rateLimits, coalescing, adminRequests,
            nextClusters, nextTopics);
    }

    /** {@code advertise-host:port} of the listen port: what clients put in {@code namesrvAddr}. */
    public String advertisedAddress() {
        return advertiseHost + ":" + listen.port();
    }
}
