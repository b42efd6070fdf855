package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocatorMetric;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.name.NameCheck;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The gateway's meters, created once and looked up without allocation on hot paths. Tags are
 * bounded sets (reasons, roles, request and response codes by their RocketMQ names, broker
 * addresses known from routes), never per client; per topic only when enabled, and then capped.
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

    /** The {@code result} values of {@code rmqgw.config.reloads}. */
    public static final List<String> RELOAD_RESULTS = List.of("applied", "refused", "unchanged");
    /**
     * The {@code result} values of {@code rmqgw.namesrv.discovery}: the two successes, then why a poll of the
     * address URL failed. Registered at 0 from the start; a value outside this list still counts.
     */
    public static final List<String> NAMESRV_DISCOVERY_RESULTS =
        List.of("changed", "unchanged", "http_error", "timeout", "empty", "malformed", "unreachable");

    /** The {@code limit} values of {@code rmqgw.rate.limited}: which limit refused a send. */
    public static final List<String> RATE_LIMITS = List.of("topic", "client", "topic_pull", "client_request");
    /** The {@code kind} values of {@code rmqgw.admin.requests.refused}: what a refused request code does. */
    public static final List<String> ADMIN_REFUSED_KINDS = List.of("destructive", "config_read", "cluster_internal",
        "unknown");
    /** The {@code result} values of {@code rmqgw.tls.reloads}. */
    public static final List<String> TLS_RELOAD_RESULTS = List.of("applied", "failed");

    /** The {@code upstream} tag of the name-server listener's {@link ListenerMeters}, and a listener role. */
    /** How a fan-out request ended: every part stored; refused before anything was sent; a part failed for good. */
    public static final List<String> FANOUT_RESULTS = List.of("success", "refused", "failed");
    /** Buckets of the parts (destination queues) one fan-out request is split into. */
    static final double[] FANOUT_PARTS_BUCKETS = {1, 2, 4, 8, 16, 32, 64};

    /** How a send to a coalescing topic was taken: coalesced, or refused because its queue's wait was full. */
    public static final List<String> COALESCE_RESULTS = List.of("coalesced", "busy");
    /** Why a single send to a coalescing topic went to its broker on its own (as without coalescing). */
    public static final List<String> COALESCE_PASS_REASONS = List.of("oneway", "batch", "delayed", "transactional",
        "retry_topic", "reconsume", "sys_flag", "no_wait_store", "no_unique_key", "no_queue", "too_large", "signed");
    /** How a coalesced batch ended: stored, refused by the broker (an error answer), failed (no answer). */
    public static final List<String> COALESCE_BATCH_RESULTS = List.of("stored", "refused", "failed");
    /** Buckets of the messages in one coalesced batch. */
    static final double[] COALESCE_BATCH_BUCKETS = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

    public static final String NAMESRV = "namesrv";
    /** The role of the broker listeners. */
    public static final String BROKER = "broker";
    /** The listener roles ({@code role} tag); {@code rmqgw.connections.closed} exists at 0 for each. */
    public static final List<String> ROLES = List.of(NAMESRV, BROKER);
    /** The {@code topic} tag of requests for topics beyond the per-topic label limit (not a valid topic name). */
    public static final String OTHER_TOPIC = "(other)";
    /** The content type of {@link #scrape()}: Prometheus text format 0.0.4. */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /*
     * Histogram buckets: these service-level objectives only (Micrometer's percentile-histogram buckets are
     * off), the same for every request code, listed in the README. Each code exports len + 1 (+Inf) buckets.
     * The alert thresholds (50 ms inside the gateway, 1 s upstream) are bucket bounds, so p99 against them
     * is exact rather than interpolated.
     */

    /** Buckets of the time a request spends inside the gateway (both directions together). */
    static final Duration[] GATEWAY_BUCKETS = {
        micros(5), micros(10), micros(25), micros(50), micros(100), micros(250), micros(500),
        millis(1), micros(2500), millis(5), millis(10), millis(25), millis(50), millis(100), millis(250), millis(1000)};
    /** Buckets of the time between a request written upstream and its answer read (long polls last up to 30 s). */
    static final Duration[] UPSTREAM_BUCKETS = {
        micros(250), micros(500), millis(1), micros(2500), millis(5), millis(10), millis(25), millis(50),
        millis(100), millis(250), millis(500), millis(1000), millis(2500), millis(5000), millis(10_000),
        millis(30_000), millis(60_000)};

    /** Micrometer's ProcessorMetrics meters that duplicate process_cpu_seconds_total under other names. */
    private static final List<String> MICROMETER_PROCESS_CPU = List.of("process.cpu.time", "process.cpu.usage");

    private static final CodeNames REQUEST_CODES = CodeNames.REQUESTS;
    private static final CodeNames RESPONSE_CODES = CodeNames.RESPONSES;
    private static final int ENCODINGS = SerializeType.values().length;

    private final MeterRegistry registry;
    private final LabelledCounters decodeErrors;
    /** By role; each holds every {@link CloseReason} from the start. */
    private final Map<String, LabelledCounters> closedConnections = new ConcurrentHashMap<>();
    private final Map<UpstreamFailure, Counter> upstreamFailures = new EnumMap<>(UpstreamFailure.class);
    private final Counter routeCacheHits;
    private final Counter routesRewritten;
    private final Counter framesStreamed;
    private final Counter allocationFailures;
    private final Counter litePullsTranslated;
    private final LabelledCounters adminRefused;

    /** [requestIndex * RESPONSE_CODES.size() + responseIndex], created on first use. */
    private final AtomicReferenceArray<Counter> requests =
        new AtomicReferenceArray<>(REQUEST_CODES.size() * RESPONSE_CODES.size());
    private final AtomicReferenceArray<Counter> oneways = new AtomicReferenceArray<>(REQUEST_CODES.size());
    private final AtomicReferenceArray<Timer> gatewayTime = new AtomicReferenceArray<>(REQUEST_CODES.size());
    private final AtomicReferenceArray<Timer> upstreamTime = new AtomicReferenceArray<>(REQUEST_CODES.size());
    /** [from.ordinal() * n + to.ordinal()] */
    private final Counter[] headerConversions;
    private final LabelledCounters namesRejected;
    private final Map<String, ListenerMeters> listeners = new ConcurrentHashMap<>();
    private final Map<String, Health> namesrvHealth = new ConcurrentHashMap<>();
    private final Map<String, Health> brokerHealth = new ConcurrentHashMap<>();
    private volatile TopicMeters topics;
    private JvmGcMetrics gcMetrics;
    /** The Prometheus registry's clock (stopped by {@link #close()}); null for other registries. */
    private CoarseWallClock clock;
    private final LabelledCounters configReloads;
    private final LabelledCounters namesrvDiscovery;
    private final LabelledCounters fanoutRequests;
    private final DistributionSummary fanoutParts;
    private final Counter fanoutPartialFailures;
    private final Counter fanoutRetries;
    private final LabelledCounters coalesceSends;
    private final LabelledCounters coalescePassedThrough;
    private final LabelledCounters coalesceBatches;
    private final DistributionSummary coalesceBatchMessages;
    private final Timer coalesceDelay;
    private volatile LongSupplier incompleteFrameBytes = () -> 0;
    private volatile LongSupplier incompleteFrameBudget = () -> 0;
    private final LabelledCounters rateLimited;
    private final LabelledCounters tlsReloads;

    public GatewayMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (UpstreamFailure failure : UpstreamFailure.values()) {
            upstreamFailures.put(failure, Counter.builder("rmqgw.upstream.failures")
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
        framesStreamed = Counter.builder("rmqgw.frames.streamed")
            .description("Large client requests streamed through to their upstream (cut-through), not stored whole")
            .register(registry);
        allocationFailures = Counter.builder("rmqgw.allocation.failures")
            .description("Buffers the gateway could not allocate (direct memory exhausted); each closed the connection"
                + " it was for, and /health/ready answers 503 for 10 s after the last")
            .register(registry);
        // the one translation the gateway makes; from and to name request codes, as rmqgw_requests_total's code does
        litePullsTranslated = Counter.builder("rmqgw.requests.translated")
            .description("Requests sent upstream under another request code: LITE_PULL_MESSAGE (361) as PULL_MESSAGE"
                + " (11) to brokers older than 5.0, which do not know 361")
            .tag("from", "361")
            .tag("to", "11")
            .register(registry);
        // Every bounded label value is present from the start at 0, so increase() and the alerts see the
        // first event after a start (a series that appears at 1 has no increase).
        configReloads = new LabelledCounters(registry, "rmqgw.config.reloads",
            "Configuration reloads, by result: applied, refused (invalid; the old one stays), unchanged",
            Tags.empty(), "result", RELOAD_RESULTS);
        namesrvDiscovery = new LabelledCounters(registry, "rmqgw.namesrv.discovery",
            "Polls of the name-server address URL, by result (errors keep the last good list)",
            Tags.empty(), "result", NAMESRV_DISCOVERY_RESULTS);
        decodeErrors = new LabelledCounters(registry, "rmqgw.decode.errors",
            "Connections closed because a frame could not be decoded",
            Tags.empty(), "reason", Arrays.stream(MalformedReason.values()).map(MalformedReason::label).toList());
        namesRejected = new LabelledCounters(registry, "rmqgw.names.rejected",
            "Topic and group names refused by the gateway, by reason",
            Tags.empty(), "reason", Arrays.stream(NameCheck.values()).filter(c -> !c.isValid()).map(NameCheck::label).toList());
        for (String role : ROLES) {
            closedConnections(role);
        }
        Gauge.builder("rmqgw.incomplete.frame", this, m -> m.incompleteFrameBytes.getAsLong())
            .description("Bytes client connections hold in frames not yet whole, all connections together")
            .baseUnit("bytes")
            .register(registry);
        Gauge.builder("rmqgw.incomplete.frame.budget", this, m -> m.incompleteFrameBudget.getAsLong())
            .description("Bytes client connections may hold in frames not yet whole (downstream.incomplete-frame-budget)")
            .baseUnit("bytes")
            .register(registry);
        fanoutRequests = new LabelledCounters(registry, "rmqgw.fanout.requests",
            "Sends to the fan-out topic, by result: success, refused (nothing sent), failed (a part failed for good)",
            Tags.empty(), "result", FANOUT_RESULTS);
        fanoutParts = DistributionSummary.builder("rmqgw.fanout.request")
            .description("Parts (one batch per destination queue) a fan-out request was split into")
            .baseUnit("parts")
            .serviceLevelObjectives(FANOUT_PARTS_BUCKETS)
            .publishPercentileHistogram(false)
            .register(registry);
        fanoutPartialFailures = Counter.builder("rmqgw.fanout.partial.failures")
            .description("Fan-out requests answered with an error after some destinations had stored their messages")
            .register(registry);
        fanoutRetries = Counter.builder("rmqgw.fanout.part.retries")
            .description("Fan-out parts sent again to another queue of their topic after a failure")
            .register(registry);
        coalesceSends = new LabelledCounters(registry, "rmqgw.coalesce.sends",
            "Single sends to coalescing topics taken into batches (coalesced), or answered SYSTEM_BUSY because their"
                + " queue already had the most sends waiting (busy)", Tags.empty(), "result", COALESCE_RESULTS);
        coalescePassedThrough = new LabelledCounters(registry, "rmqgw.coalesce.passed.through",
            "Sends to coalescing topics that went to their broker on their own, by the reason they could not be"
                + " coalesced", Tags.empty(), "reason", COALESCE_PASS_REASONS);
        coalesceBatches = new LabelledCounters(registry, "rmqgw.coalesce.batches",
            "Coalesced batches sent, by result: stored, refused by the broker, failed (connection lost, timeout)",
            Tags.empty(), "result", COALESCE_BATCH_RESULTS);
        coalesceBatchMessages = DistributionSummary.builder("rmqgw.coalesce.batch")
            .description("Messages in one coalesced batch sent to a broker")
            .baseUnit("messages")
            .serviceLevelObjectives(COALESCE_BATCH_BUCKETS)
            .publishPercentileHistogram(false)
            .register(registry);
        coalesceDelay = Timer.builder("rmqgw.coalesce.delay")
            .description("Time a coalesced send waited in the gateway, from read to its batch written upstream")
            .serviceLevelObjectives(GATEWAY_BUCKETS)
            .publishPercentileHistogram(false)
            .register(registry);
        rateLimited = new LabelledCounters(registry, "rmqgw.rate.limited",
            "Requests answered SYSTEM_BUSY by the gateway's rate limits, by the limit that refused them: sends by"
                + " topic or client, pulls by topic (topic_pull), any request by client (client_request)",
            Tags.empty(), "limit", RATE_LIMITS);
        adminRefused = new LabelledCounters(registry, "rmqgw.admin.requests.refused",
            "Requests refused by the admin-request policy (admin-requests), by what the code does: destructive,"
                + " config_read, cluster_internal, unknown (oneways dropped included)", Tags.empty(), "kind",
            ADMIN_REFUSED_KINDS);
        tlsReloads = new LabelledCounters(registry, "rmqgw.tls.reloads",
            "TLS certificate and key files read again after a change: applied, or failed (the previous ones stay)",
            Tags.empty(), "result", TLS_RELOAD_RESULTS);
        SerializeType[] encodings = SerializeType.values();
        headerConversions = new Counter[encodings.length * encodings.length];
        for (SerializeType from : encodings) {
            for (SerializeType to : encodings) {
                if (from != to) {
                    headerConversions[from.ordinal() * encodings.length + to.ordinal()] =
                        Counter.builder("rmqgw.header.conversions")
                            .description("Headers re-encoded by the gateway, by encoding read and encoding written")
                            .tag("from", from.name().toLowerCase(Locale.ROOT))
                            .tag("to", to.name().toLowerCase(Locale.ROOT))
                            .register(registry);
                }
            }
        }
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

    // ---------------------------------------------------------------- connections and frames

    /** A frame that could not be decoded ({@code rmqgw.decode.errors{reason}}). */
    public void decodeError(MalformedReason reason) {
        decodeErrors.counter(reason.label()).increment();
    }

    /**
     * A frame that could not be decoded; {@code reason} is a {@link MalformedReason#label()} (those exist at 0
     * from the start; another value gets its own series on first use).
     */
    public void decodeError(String reason) {
        decodeErrors.counter(reason).increment();
    }

    private volatile java.util.function.Supplier<Number> queuedTotal;
    private volatile java.util.function.Supplier<Number> queuedLargest;

    /**
     * Bytes queued to client connections and not yet taken by their sockets: {@code rmqgw.downstream.queued.bytes}
     * summed over every connection, and {@code rmqgw.downstream.queued.max.bytes} of the connection holding most.
     * Each supplier is read at scrape time; a later call replaces both (a gateway started again on these metrics).
     */
    public synchronized void downstreamQueued(java.util.function.Supplier<Number> total,
                                              java.util.function.Supplier<Number> largest) {
        boolean first = queuedTotal == null;
        queuedTotal = total;
        queuedLargest = largest;
        if (!first) {
            return;
        }
        Gauge.builder("rmqgw.downstream.queued.bytes", this, m -> m.queuedTotal.get().doubleValue())
            .description("Bytes queued to client connections and not yet taken by their sockets")
            .baseUnit("bytes")
            .strongReference(true)
            .register(registry);
        Gauge.builder("rmqgw.downstream.queued.max.bytes", this, m -> m.queuedLargest.get().doubleValue())
            .description("Bytes queued to the one client connection that holds most")
            .baseUnit("bytes")
            .strongReference(true)
            .register(registry);
    }

    /** A connection of a listener with {@code role} (one of {@link #ROLES}) the gateway closed on its own initiative. */
    public void connectionClosed(String role, CloseReason reason) {
        closedConnections(role).counter(reason.label()).increment();
    }

    /**
     * A connection the gateway closed on its own initiative; prefer {@link #connectionClosed(String, CloseReason)}.
     * A {@code reason} that is not a {@link CloseReason#label()} gets its own series on first use.
     */
    public void connectionClosed(String role, String reason) {
        closedConnections(role).counter(reason).increment();
    }

    /** What the incomplete-frame gauges read: bytes held now, and the budget ({@code Long.MAX_VALUE}: none). */
    public void incompleteFrames(LongSupplier heldBytes, LongSupplier budgetBytes) {
        this.incompleteFrameBytes = heldBytes;
        this.incompleteFrameBudget = budgetBytes;
    }

    private LabelledCounters closedConnections(String role) {
        LabelledCounters byReason = closedConnections.get(role);
        if (byReason == null) {
            byReason = closedConnections.computeIfAbsent(role, r -> new LabelledCounters(registry,
                "rmqgw.connections.closed", "Connections closed by the gateway, by listener role and reason",
                Tags.of("role", r), "reason", Arrays.stream(CloseReason.values()).map(CloseReason::label).toList()));
        }
        return byReason;
    }

    public void upstreamFailure(UpstreamFailure failure) {
        upstreamFailures.get(failure).increment();
    }

    public void routeServedFromCache() {
        routeCacheHits.increment();
    }

    public void routeRewritten() {
        routesRewritten.increment();
    }

    /** A buffer could not be allocated (the connection it was for is closed). */
    public void allocationFailed() {
        allocationFailures.increment();
    }

    /** A large client request's head went upstream; its body follows as it arrives. */
    public void frameStreamed() {
        framesStreamed.increment();
    }

    /** A LITE_PULL_MESSAGE went to a broker older than 5.0 as PULL_MESSAGE. */
    public void litePullTranslated() {
        litePullsTranslated.increment();
    }

    /** The meters of the name-server listener (role {@code namesrv}, upstream {@code namesrv}). */
    public ListenerMeters namesrvListener() {
        return listener(NAMESRV, NAMESRV);
    }

    /** The meters of the listener for the broker at {@code brokerAddress} (its real address, as routes name it). */
    public ListenerMeters brokerListener(String brokerAddress) {
        return listener("broker", brokerAddress);
    }

    private ListenerMeters listener(String role, String upstream) {
        ListenerMeters m = listeners.get(upstream);
        if (m == null) {
            m = listeners.computeIfAbsent(upstream, u -> new ListenerMeters(registry, role, u));
        }
        return m;
    }

    // ---------------------------------------------------------------- requests

    /**
     * A request answered: counts {@code rmqgw.requests{code,result}} and records the time spent inside the
     * gateway (reading, rewriting and writing both the request and its answer) and the time upstream
     * (request written to answer read).
     *
     * @param requestCode   the request's code
     * @param responseCode  the answer's code (the result)
     * @param gatewayNanos  time inside the gateway; negative when not measured
     * @param upstreamNanos time upstream; negative when no upstream was involved (answered from cache)
     */
    public void requestCompleted(int requestCode, int responseCode, long gatewayNanos, long upstreamNanos) {
        int req = REQUEST_CODES.index(requestCode);
        requestCounter(req, RESPONSE_CODES.index(responseCode)).increment();
        if (gatewayNanos >= 0) {
            timer(gatewayTime, req, true).record(gatewayNanos, TimeUnit.NANOSECONDS);
        }
        if (upstreamNanos >= 0) {
            timer(upstreamTime, req, false).record(upstreamNanos, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * A request the gateway answered itself without timing it (SYSTEM_BUSY after a timeout, SYSTEM_ERROR
     * with no upstream): counts {@code rmqgw.requests{code,result}} only.
     */
    public void requestAnswered(int requestCode, int responseCode) {
        requestCounter(REQUEST_CODES.index(requestCode), RESPONSE_CODES.index(responseCode)).increment();
    }

    /** The {@code code} label of {@code requestCode}, as every per-code meter writes it (e.g. {@code PULL_MESSAGE}). */
    public static String requestCodeLabel(int requestCode) {
        return REQUEST_CODES.name(REQUEST_CODES.index(requestCode));
    }

    /** A oneway request relayed (it has no answer, so no result and no latency). */
    public void oneway(int requestCode) {
        int req = REQUEST_CODES.index(requestCode);
        Counter c = oneways.get(req);
        if (c == null) {
            c = Counter.builder("rmqgw.oneway.requests")
                .description("Oneway requests relayed, by request code")
                .tag("code", REQUEST_CODES.name(req))
                .register(registry);
            oneways.set(req, c);
        }
        c.increment();
    }

    private Counter requestCounter(int req, int res) {
        int slot = req * RESPONSE_CODES.size() + res;
        Counter c = requests.get(slot);
        if (c == null) {
            // two threads may both build it: the registry hands both the same counter
            c = Counter.builder("rmqgw.requests")
                .description("Requests answered, by request code and result (response code), RocketMQ names or 'other'")
                .tag("code", REQUEST_CODES.name(req))
                .tag("result", RESPONSE_CODES.name(res))
                .register(registry);
            requests.set(slot, c);
        }
        return c;
    }

    private Timer timer(AtomicReferenceArray<Timer> timers, int req, boolean gateway) {
        Timer t = timers.get(req);
        if (t == null) {
            t = Timer.builder(gateway ? "rmqgw.request.gateway.duration" : "rmqgw.request.upstream.duration")
                .description(gateway
                    ? "Time a request and its answer spent inside the gateway, by request code"
                    : "Time from a request written upstream to its answer read, by request code")
                .tag("code", REQUEST_CODES.name(req))
                .serviceLevelObjectives(gateway ? GATEWAY_BUCKETS : UPSTREAM_BUCKETS)
                .publishPercentileHistogram(false) // the SLO buckets only, not Micrometer's ~70 defaults
                .register(registry);
            timers.set(req, t);
        }
        return t;
    }

    // ---------------------------------------------------------------- per-topic (opt-in, capped)

    /**
     * Turns per-topic labels on ({@code limit} distinct topics at most; further topics count as
     * {@link #OTHER_TOPIC}) or off (every per-topic meter is removed). Callable at any time.
     */
    public synchronized void topicLabels(boolean enabled, int limit) {
        if (enabled && limit < 1) {
            throw new IllegalArgumentException("topic label limit must be positive, was " + limit);
        }
        TopicMeters old = topics;
        if (old != null && enabled && old.limit == limit) {
            return;
        }
        topics = enabled ? new TopicMeters(limit) : null;
        if (old != null) {
            old.removeFrom(registry);
        }
    }

    public boolean topicLabelsEnabled() {
        return topics != null;
    }

    /**
     * A request naming {@code topic} ({@code rmqgw.topic.requests{topic,code}}); does nothing unless
     * {@link #topicLabels} enabled them, or when {@code topic} is null. Meant for the send and pull handlers:
     * the first {@code admin.topic-label-limit} distinct topics get their own label, later ones count as
     * {@link #OTHER_TOPIC}. Allocates only the first time a topic (or a topic and code) is seen; a topic
     * beyond the limit allocates nothing, however many distinct ones arrive.
     */
    public void topicRequest(String topic, int requestCode) {
        TopicMeters t = topics;
        if (t == null || topic == null) {
            return;
        }
        AtomicReferenceArray<Counter> row = t.byTopic.get(topic);
        if (row == null) {
            row = t.admit(topic);
        }
        int req = REQUEST_CODES.index(requestCode);
        Counter c = row.get(req);
        if (c == null) {
            c = Counter.builder("rmqgw.topic.requests")
                .description("Requests naming a topic, by topic and request code (only when per-topic labels are on)")
                .tag("topic", row == t.other ? OTHER_TOPIC : topic)
                .tag("code", REQUEST_CODES.name(req))
                .register(registry);
            row.set(req, c);
        }
        c.increment();
    }

    private static final class TopicMeters {
        final int limit;
        final Map<String, AtomicReferenceArray<Counter>> byTopic = new ConcurrentHashMap<>();
        final AtomicInteger admitted = new AtomicInteger();
        final AtomicReferenceArray<Counter> other = new AtomicReferenceArray<>(REQUEST_CODES.size());

        TopicMeters(int limit) {
            this.limit = limit;
        }

        AtomicReferenceArray<Counter> admit(String topic) {
            if (admitted.get() >= limit) {
                return other; // full: no map lookup that would allocate for topics never admitted
            }
            AtomicReferenceArray<Counter> row = byTopic.computeIfAbsent(topic, k -> {
                if (admitted.getAndIncrement() < limit) {
                    return new AtomicReferenceArray<>(REQUEST_CODES.size());
                }
                admitted.decrementAndGet();
                return null;
            });
            return row == null ? other : row;
        }

        void removeFrom(MeterRegistry registry) {
            for (AtomicReferenceArray<Counter> row : byTopic.values()) {
                removeRow(registry, row);
            }
            removeRow(registry, other);
        }

        private static void removeRow(MeterRegistry registry, AtomicReferenceArray<Counter> row) {
            for (int i = 0; i < row.length(); i++) {
                Counter c = row.get(i);
                if (c != null) {
                    registry.remove(c);
                }
            }
        }
    }

    // ---------------------------------------------------------------- headers and names

    /** A header re-encoded from one encoding to the other (JSON to ROCKETMQ binary, or back). */
    public void headerConverted(SerializeType from, SerializeType to) {
        Counter c = headerConversions[from.ordinal() * ENCODINGS + to.ordinal()];
        if (c != null) {
            c.increment();
        }
    }

    /**
     * A topic or group name refused at the edge ({@code rmqgw.names.rejected{reason}}).
     *
     * @throws IllegalArgumentException for {@link NameCheck#VALID}, which is no refusal
     */
    public void nameRejected(NameCheck check) {
        if (check.isValid()) {
            throw new IllegalArgumentException("a valid name is not rejected");
        }
        namesRejected.counter(check.label()).increment();
    }

    /**
     * A topic or group name refused at the edge; {@code reason} is a {@link NameCheck#label()} (those exist at 0
     * from the start; another value gets its own series on first use).
     */
    public void nameRejected(String reason) {
        namesRejected.counter(reason).increment();
    }

    // ---------------------------------------------------------------- reloads and name-server discovery

    /** A configuration reload ended with {@code result}: one of {@link #RELOAD_RESULTS}. */
    public void configReload(String result) {
        Counter c = configReloads.existing(result);
        if (c == null) {
            throw new IllegalArgumentException("reload result must be one of " + RELOAD_RESULTS + ", was " + result);
        }
        c.increment();
    }

    /**
     * One poll of the name-server address URL ({@code rmqgw.namesrv.discovery{result}}); {@code result} is one
     * of {@link #NAMESRV_DISCOVERY_RESULTS}.
     */
    public void namesrvDiscovery(String result) {
        namesrvDiscovery.counter(result).increment();
    }

    // ---------------------------------------------------------------- fan-out

    /** A fan-out request ended with {@code result} (one of {@link #FANOUT_RESULTS}) after {@code parts} parts (0 when refused). */
    public void fanoutRequest(String result, int parts) {
        fanoutRequests.counter(result).increment();
        if (parts > 0) {
            fanoutParts.record(parts);
        }
    }

    /** A fan-out request failed after some of its destinations stored their messages. */
    public void fanoutPartialFailure() {
        fanoutPartialFailures.increment();
    }

    /** A fan-out part is sent again. */
    public void fanoutRetry() {
        fanoutRetries.increment();
    }

    /** A send to a coalescing topic taken by the coalescer: {@code coalesced} or {@code busy}. */
    public void coalesceSend(String result) {
        coalesceSends.counter(result).increment();
    }

    /** A send to a coalescing topic that went on its own, with the reason (one of {@link #COALESCE_PASS_REASONS}). */
    public void coalescePassedThrough(String reason) {
        coalescePassedThrough.counter(reason).increment();
    }

    /** A coalesced batch answered ({@code result} one of {@link #COALESCE_BATCH_RESULTS}) with its message count. */
    public void coalesceBatch(String result, int messages) {
        coalesceBatches.counter(result).increment();
        coalesceBatchMessages.record(messages);
    }

    /** How long one coalesced send waited between being read and its batch written upstream. */
    public void coalesceDelay(long nanos) {
        coalesceDelay.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    // ---------------------------------------------------------------- rate limits and TLS

    /** A request refused by a rate limit ({@code rmqgw.rate.limited{limit}}); {@code limit} is one of {@link #RATE_LIMITS}. */
    public void rateLimited(String limit) {
        rateLimited.counter(limit).increment();
    }

    /** A request refused by the admin-request policy ({@code rmqgw.admin.requests.refused{kind}}). */
    public void adminRequestRefused(String kind) {
        adminRefused.counter(kind).increment();
    }

    /** TLS files read again after a change ({@code rmqgw.tls.reloads{result}}): one of {@link #TLS_RELOAD_RESULTS}. */
    public void tlsReload(String result) {
        tlsReloads.counter(result).increment();
    }

    // ---------------------------------------------------------------- upstream health

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

    private static Duration micros(long n) {
        return Duration.ofNanos(n * 1_000);
    }

    private static Duration millis(long n) {
        return Duration.ofMillis(n);
    }
}
