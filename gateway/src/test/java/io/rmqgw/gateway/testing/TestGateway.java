package io.rmqgw.gateway.testing;

import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.config.AdminConfig;
import io.rmqgw.gateway.config.AdminRequestsConfig;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.NamesConfig;
import io.rmqgw.gateway.config.PortRange;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.ResponseEncoding;
import io.rmqgw.gateway.config.RouteCacheConfig;
import io.rmqgw.gateway.config.TlsConfig;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.FreePorts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/** A real {@link Gateway} on free 127.0.0.1 ports, with its in-memory metrics. */
public final class TestGateway implements AutoCloseable {

    private final Gateway gateway;
    private final GatewayMetrics metrics;
    private final PortRange brokerPorts;

    private TestGateway(Gateway gateway, GatewayMetrics metrics, PortRange brokerPorts) {
        this.gateway = gateway;
        this.metrics = metrics;
        this.brokerPorts = brokerPorts;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Gateway gateway() {
        return gateway;
    }

    public GatewayMetrics metrics() {
        return metrics;
    }

    /** The name-server role's port (clients' namesrvAddr). */
    public int port() {
        return gateway.listenAddress().getPort();
    }

    public PortRange brokerPorts() {
        return brokerPorts;
    }

    /** The advertised gateway port for a real broker address, or fails when it has no listener. */
    public int brokerPort(String realBrokerAddress) {
        String advertised = gateway.brokerListeners().get(realBrokerAddress);
        if (advertised == null) {
            throw new AssertionError("no gateway listener for broker " + realBrokerAddress + ": " + gateway.brokerListeners());
        }
        return Integer.parseInt(advertised.substring(advertised.lastIndexOf(':') + 1));
    }

    @Override
    public void close() {
        gateway.close(Duration.ZERO);
    }

    /** A port on 127.0.0.1 with nothing listening (and never handed out again by {@link FreePorts}). */
    public static int deadPort() {
        return FreePorts.port();
    }

    /** Polls {@code condition} every 10 ms until it holds or {@code timeout} passes. */
    public static void await(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }

    public static final class Builder {
        private final List<String> namesrv = new ArrayList<>();
        private Duration connectTimeout = Duration.ofSeconds(1);
        private Duration requestTimeout = Duration.ofMillis(300);
        private Duration longPollTimeout = Duration.ofSeconds(2);
        private Duration routeTtl = Duration.ofSeconds(60);
        private int maxFrameLength = 64 * 1024;
        private Duration drainTimeout = Duration.ofSeconds(5);
        private int brokerPortCount = 9;
        // relay tests assert frames pass byte for byte; codec-upgrade tests ask for conversion
        private HeaderEncoding headerEncoding = HeaderEncoding.PRESERVE;
        private ResponseEncoding responseEncoding = ResponseEncoding.MIRROR;
        private Duration idleTimeout;
        private Duration frameTimeout;
        private Integer maxConnections;
        private Integer maxConnectionsPerAddress;
        private Integer maxIncompleteFrameBytes;
        private Long incompleteFrameBudget;
        private Integer maxPendingWriteBytes;
        private Integer maxPendingWrites;
        private Duration unwritableTimeout;
        private NamesConfig names = new NamesConfig(false, null, null, null);
        private AdminConfig admin = AdminConfig.DISABLED;
        private FanoutConfig fanout;
        private List<VirtualQueueConfig> virtualQueues = List.of();
        private CoalescingConfig coalescing;

        /** Sends coalesced (default: none). */
        public Builder coalescing(CoalescingConfig coalescing) {
            this.coalescing = coalescing;
            return this;
        }

        /** Groups opted into virtual queues (default: none). */
        public Builder virtualQueues(VirtualQueueConfig... entries) {
            this.virtualQueues = List.of(entries);
            return this;
        }

        private TlsConfig tls;
        private RateLimitConfig rateLimits;
        /**
         * Relay-mechanics tests script made-up codes (4242, 60001) that the default policy refuses as unknown: they
         * pass here unless a test sets its own policy.
         */
        private AdminRequestsConfig adminRequests = new AdminRequestsConfig(null, null, true);

        /** The admin-request policy (default here: unknown codes allowed, the rest as in production). */
        public Builder adminRequests(AdminRequestsConfig adminRequests) {
            this.adminRequests = adminRequests;
            return this;
        }

        /** TLS on the client listeners (default: off). */
        public Builder tls(TlsConfig tls) {
            this.tls = tls;
            return this;
        }

        /** Send rate limits (default: none). */
        public Builder rateLimits(RateLimitConfig rateLimits) {
            this.rateLimits = rateLimits;
            return this;
        }

        /** Multi-topic fan-out settings (default: off). */
        public Builder fanout(FanoutConfig fanout) {
            this.fanout = fanout;
            return this;
        }

        public Builder namesrv(String... addresses) {
            namesrv.addAll(List.of(addresses));
            return this;
        }

        /** {@code upstream.connect-timeout} (default 1 s). */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        public Builder longPollTimeout(Duration timeout) {
            this.longPollTimeout = timeout;
            return this;
        }

        public Builder routeTtl(Duration ttl) {
            this.routeTtl = ttl;
            return this;
        }

        public Builder maxFrameLength(int bytes) {
            this.maxFrameLength = bytes;
            return this;
        }

        /** How many consecutive ports the broker-ports range has (3 per broker). */
        public Builder brokerPortCount(int count) {
            this.brokerPortCount = count;
            return this;
        }

        public Builder headerEncoding(HeaderEncoding encoding) {
            this.headerEncoding = encoding;
            return this;
        }

        /** {@code downstream.idle-timeout} and {@code downstream.frame-timeout}. */
        public Builder clientTimeouts(Duration idle, Duration frame) {
            this.idleTimeout = idle;
            this.frameTimeout = frame;
            return this;
        }

        /** {@code downstream.max-connections} and {@code max-connections-per-address}. */
        public Builder connectionLimits(int total, int perAddress) {
            this.maxConnections = total;
            this.maxConnectionsPerAddress = perAddress;
            return this;
        }

        /** {@code downstream.max-incomplete-frame-bytes} and {@code downstream.incomplete-frame-budget}. */
        public Builder incompleteFrames(int maxBytes, long budget) {
            this.maxIncompleteFrameBytes = maxBytes;
            this.incompleteFrameBudget = budget;
            return this;
        }

        /** Bounds on what the gateway queues to a client that reads nothing (null: the default). */
        public Builder writeBounds(Integer pendingBytes, Integer pendingWrites, Duration unwritable) {
            this.maxPendingWriteBytes = pendingBytes;
            this.maxPendingWrites = pendingWrites;
            this.unwritableTimeout = unwritable;
            return this;
        }

        public Builder responseEncoding(ResponseEncoding encoding) {
            this.responseEncoding = encoding;
            return this;
        }

        public Builder names(NamesConfig names) {
            this.names = names;
            return this;
        }

        /** Per-topic request metrics for at most {@code limit} topics (the admin port stays closed). */
        public Builder topicLabels(int limit) {
            this.admin = new AdminConfig(false, null, true, limit);
            return this;
        }

        public Builder drainTimeout(Duration drain) {
            this.drainTimeout = drain;
            return this;
        }

        public TestGateway start() throws InterruptedException {
            List<HostPort> upstreams = namesrv.stream().map(a -> HostPort.parse("upstream.namesrv", a)).toList();
            Exception last = null;
            for (int attempt = 0; attempt < 5; attempt++) {
                int brokerBase = FreePorts.range(brokerPortCount);
                int listen = FreePorts.port();
                PortRange brokerPorts = new PortRange(brokerBase, brokerBase + brokerPortCount - 1);
                GatewayConfig config = new GatewayConfig(new HostPort("127.0.0.1", listen), "127.0.0.1", brokerPorts,
                    new UpstreamConfig(upstreams, connectTimeout, requestTimeout, longPollTimeout, headerEncoding),
                    new RouteCacheConfig(routeTtl), maxFrameLength, drainTimeout, null, admin,
                    new DownstreamConfig(responseEncoding, idleTimeout, frameTimeout, maxConnections, maxConnectionsPerAddress,
                        maxIncompleteFrameBytes, incompleteFrameBudget, maxPendingWriteBytes, maxPendingWrites,
                        unwritableTimeout), names,
                    null, fanout, virtualQueues).withTls(tls).withRateLimits(rateLimits)
                    .withCoalescing(coalescing).withAdminRequests(adminRequests);
                GatewayMetrics metrics = GatewayMetrics.inMemory();
                try {
                    return new TestGateway(Gateway.start(config, metrics), metrics, brokerPorts);
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    // (sneaky BindException) the listen port was taken between the probe and the bind: pick others
                    last = e;
                }
            }
            throw new IllegalStateException("cannot start a gateway", last);
        }
    }
}
