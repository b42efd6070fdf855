package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
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
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
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

    /** The {@code result} values of {@code rmqgw.config.reloads}. */
    public static final java.util.List<String> RELOAD_RESULTS = java.util.List.of("applied", "refused", "unchanged");

    /** The {@code upstream} tag of the name-server listener's {@link ListenerMeters}. */
    public static final String NAMESRV = "namesrv";
    /** The {@code topic} tag of requests for topics beyond the per-topic label limit (not a valid topic name). */
    public static final String OTHER_TOPIC = "(other)";
    /** The content type of {@link #scrape()}: Prometheus text format 0.0.4. */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** Buckets of the time a request spends inside the gateway (both directions together). */
    static final Duration[] GATEWAY_BUCKETS = {
        micros(5), micros(10), micros(25), micros(50), micros(100), micros(250), micros(500),
        millis(1), micros(2500), millis(5), millis(10), millis(25), millis(50), millis(100), millis(250), millis(1000)};
    /** Buckets of the time between a request written upstream and its answer read (long polls last up to 30 s). */
    static final Duration[] UPSTREAM_BUCKETS = {
        micros(250), micros(500), millis(1), micros(2500), millis(5), millis(10), millis(25), millis(50),
        millis(100), millis(250), millis(500), millis(1000), millis(2500), millis(5000), millis(10_000),
        millis(30_000), millis(60_000)};

    private static final CodeNames REQUEST_CODES = CodeNames.REQUESTS;
    private static final CodeNames RESPONSE_CODES = CodeNames.RESPONSES;
    private static final int ENCODINGS = SerializeType.values().length;

    private final MeterRegistry registry;
    private final Map<String, Counter> decodeErrors = new ConcurrentHashMap<>();
    private final Map<String, Counter> closedConnections = new ConcurrentHashMap<>();
    private final Map<UpstreamFailure, Counter> upstreamFailures = new EnumMap<>(UpstreamFailure.class);
    private final Counter routeCacheHits;
    private final Counter routesRewritten;

    /** [requestIndex * RESPONSE_CODES.size() + responseIndex], created on first use. */
    private final AtomicReferenceArray<Counter> requests =
        new AtomicReferenceArray<>(REQUEST_CODES.size() * RESPONSE_CODES.size());
    private final AtomicReferenceArray<Counter> oneways = new AtomicReferenceArray<>(REQUEST_CODES.size());
    private final AtomicReferenceArray<Timer> gatewayTime = new AtomicReferenceArray<>(REQUEST_CODES.size());
    private final AtomicReferenceArray<Timer> upstreamTime = new AtomicReferenceArray<>(REQUEST_CODES.size());
    /** [from.ordinal() * n + to.ordinal()] */
    private final Counter[] headerConversions;
    private final Map<String, Counter> namesRejected = new ConcurrentHashMap<>();
    private final Map<String, ListenerMeters> listeners = new ConcurrentHashMap<>();
    private final Map<String, Health> namesrvHealth = new ConcurrentHashMap<>();
    private final Map<String, Health> brokerHealth = new ConcurrentHashMap<>();
    private volatile TopicMeters topics;
    private JvmGcMetrics gcMetrics;
    private final Map<String, Counter> configReloads = new ConcurrentHashMap<>();
    private final Map<String, Counter> namesrvDiscovery = new ConcurrentHashMap<>();

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
        // present from the start at 0, so increase() and alerts see the first reload
        for (String result : RELOAD_RESULTS) {
            configReloads.put(result, Counter.builder("rmqgw.config.reloads")
                .description("Configuration reloads, by result: applied, refused (invalid; the old one stays), unchanged")
                .tag("result", result)
                .register(registry));
        }
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
        GatewayMetrics metrics = new GatewayMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        metrics.bindProcessMetrics();
        return metrics;
    }

    public MeterRegistry registry() {
        return registry;
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
     * Binds JVM metrics (memory, GC, threads), processor and uptime metrics, and the Netty pooled
     * allocator's used memory ({@code rmqgw.netty.pooled.memory.used{memory=direct|heap}}). Once only.
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
        new UptimeMetrics().bindTo(registry);
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

    /** Stops the GC listeners of {@link #bindProcessMetrics()} and closes the registry. */
    @Override
    public synchronized void close() {
        if (gcMetrics != null) {
            gcMetrics.close();
        }
        registry.close();
    }

    // ---------------------------------------------------------------- connections and frames

    /** A frame that could not be decoded; {@code reason} is one of a small fixed set. */
    public void decodeError(String reason) {
        Counter c = decodeErrors.get(reason);
        if (c == null) {
            c = decodeErrors.computeIfAbsent(reason, r -> Counter.builder("rmqgw.decode.errors")
                .description("Connections closed because a frame could not be decoded")
                .tag("reason", r)
                .register(registry));
        }
        c.increment();
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

    /** Requests with this request code answered with this response code so far. */
    public double requests(int requestCode, int responseCode) {
        Counter c = requests.get(REQUEST_CODES.index(requestCode) * RESPONSE_CODES.size()
            + RESPONSE_CODES.index(responseCode));
        return c == null ? 0 : c.count();
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

    public double oneways(int requestCode) {
        Counter c = oneways.get(REQUEST_CODES.index(requestCode));
        return c == null ? 0 : c.count();
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

    /** A request naming {@code topic}; does nothing unless {@link #topicLabels} enabled them. */
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

    /** Counted requests for {@code topic} ({@link #OTHER_TOPIC} for the overflow); 0 when disabled. */
    public double topicRequests(String topic, int requestCode) {
        TopicMeters t = topics;
        if (t == null) {
            return 0;
        }
        AtomicReferenceArray<Counter> row = OTHER_TOPIC.equals(topic) ? t.other : t.byTopic.get(topic);
        Counter c = row == null ? null : row.get(REQUEST_CODES.index(requestCode));
        return c == null ? 0 : c.count();
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

    public double headerConversions(SerializeType from, SerializeType to) {
        Counter c = headerConversions[from.ordinal() * ENCODINGS + to.ordinal()];
        return c == null ? 0 : c.count();
    }

    /** A topic or group name refused at the edge; {@code reason} is one of a small fixed set. */
    public void nameRejected(String reason) {
        Counter c = namesRejected.get(reason);
        if (c == null) {
            c = namesRejected.computeIfAbsent(reason, r -> Counter.builder("rmqgw.names.rejected")
                .description("Topic and group names refused by the gateway, by reason")
                .tag("reason", r)
                .register(registry));
        }
        c.increment();
    }

    public double namesRejected(String reason) {
        Counter c = namesRejected.get(reason);
        return c == null ? 0 : c.count();
    }

    // ---------------------------------------------------------------- reloads and name-server discovery

    /** A configuration reload ended with {@code result}: one of {@link #RELOAD_RESULTS}. */
    public void configReload(String result) {
        Counter c = configReloads.get(result);
        if (c == null) {
            throw new IllegalArgumentException("reload result must be one of " + RELOAD_RESULTS + ", was " + result);
        }
        c.increment();
    }

    public double configReloads(String result) {
        Counter c = configReloads.get(result);
        return c == null ? 0 : c.count();
    }

    /**
     * One poll of the name-server address URL ({@code rmqgw.namesrv.discovery{result}}); {@code result} is one
     * of a small fixed set (changed, unchanged, http_error, timeout, empty, malformed, unreachable).
     */
    public void namesrvDiscovery(String result) {
        Counter c = namesrvDiscovery.get(result);
        if (c == null) {
            c = namesrvDiscovery.computeIfAbsent(result, r -> Counter.builder("rmqgw.namesrv.discovery")
                .description("Polls of the name-server address URL, by result (errors keep the last good list)")
                .tag("result", r)
                .register(registry));
        }
        c.increment();
    }

    public double namesrvDiscoveries(String result) {
        Counter c = namesrvDiscovery.get(result);
        return c == null ? 0 : c.count();
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

    /** 1 or 0 as last reported, or -1 if the name server was never reported. */
    public int namesrvHealth(String address) {
        Health h = namesrvHealth.get(address);
        return h == null ? -1 : h.get();
    }

    /** 1 or 0 as last reported, or -1 if the broker was never reported. */
    public int brokerHealth(String address) {
        Health h = brokerHealth.get(address);
        return h == null ? -1 : h.get();
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
