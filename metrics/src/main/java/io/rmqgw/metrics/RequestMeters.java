package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Requests relayed, by request code: {@code rmqgw.requests{code,result}} with the time spent inside the gateway
 * and upstream, oneways, and requests sent upstream under another code. Meters sit in arrays indexed by the
 * codes' small ints, created on first use: counting allocates nothing once each combination has been seen.
 */
public final class RequestMeters {

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

    /** A copy of the buckets of the time inside the gateway, for the features' timers of it (coalescing's delay). */
    public static Duration[] gatewayBuckets() {
        return GATEWAY_BUCKETS.clone();
    }

    private static final CodeNames REQUEST_CODES = CodeNames.REQUESTS;
    private static final CodeNames RESPONSE_CODES = CodeNames.RESPONSES;

    private final MeterRegistry registry;
    /** [requestIndex * RESPONSE_CODES.size() + responseIndex], created on first use. */
    private final AtomicReferenceArray<Counter> requests =
        new AtomicReferenceArray<>(REQUEST_CODES.size() * RESPONSE_CODES.size());
    private final AtomicReferenceArray<Counter> oneways = new AtomicReferenceArray<>(REQUEST_CODES.size());
    private final AtomicReferenceArray<Timer> gatewayTime = new AtomicReferenceArray<>(REQUEST_CODES.size());
    private final AtomicReferenceArray<Timer> upstreamTime = new AtomicReferenceArray<>(REQUEST_CODES.size());
    private final Counter litePullsTranslated;

    RequestMeters(MeterRegistry registry) {
        this.registry = registry;
        // the one translation the gateway makes; from and to name request codes, as rmqgw_requests_total's code does
        litePullsTranslated = Counter.builder("rmqgw.requests.translated")
            .description("Requests sent upstream under another request code: LITE_PULL_MESSAGE (361) as PULL_MESSAGE"
                + " (11) to brokers older than 5.0, which do not know 361")
            .tag("from", "361")
            .tag("to", "11")
            .register(registry);
    }

    /** The {@code code} label of {@code requestCode}, as every per-code meter writes it (e.g. {@code PULL_MESSAGE}). */
    static String codeLabel(int requestCode) {
        return REQUEST_CODES.name(REQUEST_CODES.index(requestCode));
    }

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

    /** A LITE_PULL_MESSAGE went to a broker older than 5.0 as PULL_MESSAGE. */
    public void litePullTranslated() {
        litePullsTranslated.increment();
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

    private static Duration micros(long n) {
        return Duration.ofNanos(n * 1_000);
    }

    private static Duration millis(long n) {
        return Duration.ofMillis(n);
    }
}
