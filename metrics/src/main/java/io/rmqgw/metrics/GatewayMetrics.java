package io.rmqgw.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocatorMetric;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.name.NameCheck;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The gateway's meters on one registry, created once and looked up without allocation on hot paths. Tags are
 * bounded sets (reasons, roles, request and response codes by their RocketMQ names, broker addresses known from
 * routes), never per client; per topic only when enabled, and then capped.
 *
 * <p>The meters are grouped by concern, each group a class handed out here: {@link #connections()},
 * {@link #requests()}, {@link #topics()}, {@link #upstreams()}, {@link #headerEncoding()}, {@link #nameChecks()},
 * and one class per concern named after it ({@link #rateLimits()}, {@link #adminPolicy()}, {@link #configReloads()},
 * {@link #namesrvDiscovery()}, {@link #tls()}). A feature of the gateway module owns its meters, in its package
 * ({@code FanoutMeters}, {@code CoalescingMeters}, {@code VirtualQueueMeters}), built on {@link #registry()} when
 * the gateway builds the feature. The methods below the accessors are one-line delegations kept for their callers.
 * This class also makes the registry ({@link #inMemory()}, {@link #prometheus()}), binds the process metrics and
 * exports them ({@link #scrape()}). Tests read the meters back through {@code MeterReadings} (the test jar).
 *
 * <p>Meter names are Micrometer's dotted names; the Prometheus export turns them into
 * {@code rmqgw_..._total} for counters, {@code _seconds} for timers and {@code _bytes} for sizes.
 *
 * <p>Methods called per request ({@link #requestCompleted}, {@link #requestAnswered}, {@link #oneway},
 * {@link #topicRequest}, {@link #headerConverted}, the {@link ListenerMeters} handlers) allocate
 * nothing once each label combination has been seen: meters sit in arrays indexed by small ints.
 */
public final class GatewayMetrics implements AutoCloseable {

    /** Why the gateway closed a connection or answered a request itself. */
    public enum UpstreamFailure { CONNECT_FAILED, CONNECTION_LOST, TIMEOUT }

    /**
     * Why the gateway closed a client connection on its own initiative: the {@code reason} of
     * {@code rmqgw.connections.closed}, every one exported at 0 from the start for each of {@link #ROLES}.
     */
    public enum CloseReason {
        /** A frame from the client or the upstream could not be decoded (see {@code rmqgw.decode.errors}). */
        MALFORMED_FRAME,
        /** The upstream connection closed; the client's pending requests were answered with SYSTEM_ERROR. */
        UPSTREAM_CLOSED,
        /** A oneway request arrived while no upstream could be reached: it has no answer to carry the failure. */
        ONEWAY_WITHOUT_UPSTREAM,
        /** An unexpected exception in the gateway's handling of the connection. */
        INTERNAL_ERROR,
        /** No traffic either way for {@code downstream.idle-timeout} and nothing in flight. */
        IDLE,
        /** A frame began to arrive and did not complete within {@code downstream.frame-timeout} (slowloris). */
        FRAME_TIMEOUT,
        /** Refused at accept: {@code downstream.max-connections} or {@code max-connections-per-address} reached. */
        CONNECTION_LIMIT,
        /** A read would have passed {@code downstream.incomplete-frame-budget}, the bytes all half-arrived frames may hold. */
        INCOMPLETE_FRAME_BUDGET,
        /** A plain (not TLS) connection to a listener whose {@code tls.mode} is {@code enforcing}. */
        TLS_REQUIRED,
        /** The TLS handshake failed or did not finish in time. */
        TLS_HANDSHAKE_FAILED,
        /**
         * The gateway's own answers queued to the client and not taken by its socket passed
         * {@code downstream.max-pending-write-bytes} or {@code max-pending-writes}: the client reads nothing.
         */
        WRITE_BACKLOG,
        /** The client's write buffer stayed past its high water mark for {@code downstream.unwritable-timeout}. */
        UNWRITABLE,
        /** Memory for the connection's next read or answer could not be had (direct memory exhausted). */
        ALLOCATION_FAILED;

        private final String label = name().toLowerCase(Locale.ROOT);

        /** The metric label, {@code malformed_frame} and so on. */
        public String label() {
            return label;
        }
    }

    /** The {@code upstream} tag of the name-server listener's {@link ListenerMeters}, and a listener role. */
    public static final String NAMESRV = "namesrv";
    /** The role of the broker listeners. */
    public static final String BROKER = "broker";
    /** The listener roles ({@code role} tag); {@code rmqgw.connections.closed} exists at 0 for each. */
    public static final List<String> ROLES = List.of(NAMESRV, BROKER);
    /** The {@code topic} tag of requests for topics beyond the per-topic label limit (not a valid topic name). */
    public static final String OTHER_TOPIC = "(other)";
    /** The content type of {@link #scrape()}: Prometheus text format 0.0.4. */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** Micrometer's ProcessorMetrics meters that duplicate process_cpu_seconds_total under other names. */
    private static final List<String> MICROMETER_PROCESS_CPU = List.of("process.cpu.time", "process.cpu.usage");

    private final MeterRegistry registry;
    private final UpstreamMeters upstreams;
    private final ConnectionMeters connections;
    private final RequestMeters requests;
    private final ConfigReloadMeters configReloads;
    private final NamesrvDiscoveryMeters namesrvDiscovery;
    private final NameCheckMeters nameChecks;
    private final RateLimitMeters rateLimits;
    private final AdminPolicyMeters adminPolicy;
    private final TlsMeters tls;
    private final HeaderEncodingMeters headerEncoding;
    private final TopicLabelMeters topics;
    private JvmGcMetrics gcMetrics;
    /** The Prometheus registry's clock (stopped by {@link #close()}); null for other registries. */
    private CoarseWallClock clock;

    /**
     * Registers every meter that exists from the start. Every bounded label value is present at 0, so increase()
     * and the alerts see the first event after a start (a series that appears at 1 has no increase).
     */
    public GatewayMetrics(MeterRegistry registry) {
        this.registry = registry;
        upstreams = new UpstreamMeters(registry);
        connections = new ConnectionMeters(registry);
        requests = new RequestMeters(registry);
        configReloads = new ConfigReloadMeters(registry);
        namesrvDiscovery = new NamesrvDiscoveryMeters(registry);
        nameChecks = new NameCheckMeters(registry);
        rateLimits = new RateLimitMeters(registry);
        adminPolicy = new AdminPolicyMeters(registry);
        tls = new TlsMeters(registry);
        headerEncoding = new HeaderEncodingMeters(registry);
        topics = new TopicLabelMeters(registry);
    }

    /** Meters kept in memory only (tests, embedding): no export, no JVM metrics. */
    public static GatewayMetrics inMemory() {
        return new GatewayMetrics(new SimpleMeterRegistry());
    }

    /**
     * Meters for the admin port's {@code /metrics}: a Prometheus registry with the JVM, process and
     * Netty allocator metrics bound ({@link #bindProcessMetrics()}). {@link #close()} releases them.
     */
    public static GatewayMetrics prometheus() {
        CoarseWallClock clock = new CoarseWallClock();
        GatewayMetrics metrics = new GatewayMetrics(
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, new PrometheusRegistry(), clock));
        metrics.clock = clock;
        metrics.bindProcessMetrics();
        return metrics;
    }

    /** The registry every meter is on; the features register their own meters on it. */
    public MeterRegistry registry() {
        return registry;
    }

    /** The registry's clock when {@link #prometheus()} made it, else null. */
    CoarseWallClock clock() {
        return clock;
    }

    /** Whether {@link #scrape()} works: the registry is a Prometheus one. */
    public boolean exportsPrometheus() {
        return registry instanceof PrometheusMeterRegistry;
    }

    /**
     * Every meter in Prometheus text format 0.0.4 ({@link #PROMETHEUS_CONTENT_TYPE}).
     *
     * @throws IllegalStateException when the registry is not a Prometheus one (see {@link #exportsPrometheus()})
     */
    public String scrape() {
        if (registry instanceof PrometheusMeterRegistry prometheus) {
            return prometheus.scrape();
        }
        throw new IllegalStateException("the metrics registry is " + registry.getClass().getSimpleName()
            + ", not Prometheus");
    }

    /**
     * Binds JVM metrics (memory, GC, threads), system CPU and uptime metrics, the process metrics under
     * Prometheus's conventional names ({@link ProcessMetrics}: {@code process_cpu_seconds_total},
     * {@code process_resident_memory_bytes}, {@code process_open_fds}, {@code process_start_time_seconds}...),
     * and the Netty pooled allocator's used memory ({@code rmqgw.netty.pooled.memory.used{memory=direct|heap}}).
     * Micrometer's own process CPU meters ({@code process_cpu_time_ns_total}, {@code process_cpu_usage}) are
     * left out: {@code rate(process_cpu_seconds_total[...])} says the same under the name dashboards expect.
     * Once only.
     */
    public synchronized void bindProcessMetrics() {
        if (gcMetrics != null) {
            return;
        }
        new JvmMemoryMetrics().bindTo(registry);
        gcMetrics = new JvmGcMetrics();
        gcMetrics.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        // removed rather than denied by a MeterFilter: filters must come before the first meter, and ours exist
        for (String name : MICROMETER_PROCESS_CPU) {
            registry.find(name).meters().forEach(registry::remove);
        }
        new UptimeMetrics().bindTo(registry);
        new ProcessMetrics().bindTo(registry);
        PooledByteBufAllocatorMetric pooled = PooledByteBufAllocator.DEFAULT.metric();
        Gauge.builder("rmqgw.netty.pooled.memory.used", pooled, PooledByteBufAllocatorMetric::usedDirectMemory)
            .description("Memory used by Netty's pooled buffer allocator (the gateway's frames)")
            .baseUnit("bytes")
            .tag("memory", "direct")
            .strongReference(true)
            .register(registry);
        Gauge.builder("rmqgw.netty.pooled.memory.used", pooled, PooledByteBufAllocatorMetric::usedHeapMemory)
            .description("Memory used by Netty's pooled buffer allocator (the gateway's frames)")
            .baseUnit("bytes")
            .tag("memory", "heap")
            .strongReference(true)
            .register(registry);
    }

    /** Stops the GC listeners of {@link #bindProcessMetrics()} and the registry's clock, and closes the registry. */
    @Override
    public synchronized void close() {
        if (gcMetrics != null) {
            gcMetrics.close();
        }
        registry.close();
        if (clock != null) {
            clock.close();
        }
    }


    // ---------------------------------------------------------------- the meters, by concern

    /** Decode errors, connections closed, incomplete and queued bytes, allocation failures, the listeners. */
    public ConnectionMeters connections() {
        return connections;
    }

    /** Requests by code and result, their durations, oneways, translated requests. */
    public RequestMeters requests() {
        return requests;
    }

    /** Requests by topic, when per-topic labels are on. */
    public TopicLabelMeters topics() {
        return topics;
    }

    /** Upstream failures and health, route answers cached or rewritten. */
    public UpstreamMeters upstreams() {
        return upstreams;
    }

    public HeaderEncodingMeters headerEncoding() {
        return headerEncoding;
    }

    public NameCheckMeters nameChecks() {
        return nameChecks;
    }

    public ConfigReloadMeters configReloads() {
        return configReloads;
    }

    public NamesrvDiscoveryMeters namesrvDiscovery() {
        return namesrvDiscovery;
    }

    public TlsMeters tls() {
        return tls;
    }

    public RateLimitMeters rateLimits() {
        return rateLimits;
    }

    public AdminPolicyMeters adminPolicy() {
        return adminPolicy;
    }

    /*
     * One-line delegations to the classes above, for the call sites (the relay, the roles, the filters, the
     * features) that have not moved to those classes yet; each method's documentation is on its class.
     */

    public void decodeError(MalformedReason reason) {
        connections.decodeError(reason);
    }

    public void decodeError(String reason) {
        connections.decodeError(reason);
    }

    public void downstreamQueued(Supplier<Number> total, Supplier<Number> largest) {
        connections.downstreamQueued(total, largest);
    }

    public void connectionClosed(String role, CloseReason reason) {
        connections.connectionClosed(role, reason);
    }

    public void connectionClosed(String role, String reason) {
        connections.connectionClosed(role, reason);
    }

    public void incompleteFrames(LongSupplier heldBytes, LongSupplier budgetBytes) {
        connections.incompleteFrames(heldBytes, budgetBytes);
    }

    public void allocationFailed() {
        connections.allocationFailed();
    }

    public void frameStreamed() {
        connections.frameStreamed();
    }

    public ListenerMeters namesrvListener() {
        return connections.namesrvListener();
    }

    public ListenerMeters brokerListener(String brokerAddress) {
        return connections.brokerListener(brokerAddress);
    }

    public void requestCompleted(int requestCode, int responseCode, long gatewayNanos, long upstreamNanos) {
        requests.requestCompleted(requestCode, responseCode, gatewayNanos, upstreamNanos);
    }

    public void requestAnswered(int requestCode, int responseCode) {
        requests.requestAnswered(requestCode, responseCode);
    }

    /** The {@code code} label of {@code requestCode}, as every per-code meter writes it (e.g. {@code PULL_MESSAGE}). */
    public static String requestCodeLabel(int requestCode) {
        return RequestMeters.codeLabel(requestCode);
    }

    public void oneway(int requestCode) {
        requests.oneway(requestCode);
    }

    public void litePullTranslated() {
        requests.litePullTranslated();
    }

    public void topicLabels(boolean enabled, int limit) {
        topics.topicLabels(enabled, limit);
    }

    public boolean topicLabelsEnabled() {
        return topics.topicLabelsEnabled();
    }

    public void topicRequest(String topic, int requestCode) {
        topics.topicRequest(topic, requestCode);
    }

    public void upstreamFailure(UpstreamFailure failure) {
        upstreams.upstreamFailure(failure);
    }

    public void routeServedFromCache() {
        upstreams.routeServedFromCache();
    }

    public void routeRewritten() {
        upstreams.routeRewritten();
    }

    public void namesrvUp(String address, boolean up) {
        upstreams.namesrvUp(address, up);
    }

    public void brokerUp(String address, boolean up) {
        upstreams.brokerUp(address, up);
    }

    public void namesrvRemoved(String address) {
        upstreams.namesrvRemoved(address);
    }

    public void headerConverted(SerializeType from, SerializeType to) {
        headerEncoding.headerConverted(from, to);
    }

    public void nameRejected(NameCheck check) {
        nameChecks.nameRejected(check);
    }

    public void nameRejected(String reason) {
        nameChecks.nameRejected(reason);
    }
}
