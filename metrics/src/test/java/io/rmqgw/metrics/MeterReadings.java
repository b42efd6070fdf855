package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import java.util.Locale;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * What tests read back from a {@link GatewayMetrics}: the current value of one series, found in its registry by
 * meter name and tags, the names and tags the export shows (a series never created reads 0, a health gauge never
 * set -1). Production code reads no meter: it only counts.
 *
 * <p>In the metrics module's test jar ({@code rmqgw-metrics}, type {@code test-jar}), not in {@code test-support}:
 * the metrics module's own tests depend on {@code test-support}, so {@code test-support} cannot depend on the
 * metrics module. In package {@code io.rmqgw.metrics} for the {@code code} and {@code result} labels' names.
 *
 * <p>{@code MeterReadings.of(gateway.metrics()).rateLimitedSends("client")}
 */
public final class MeterReadings {

    private final MeterRegistry registry;

    private MeterReadings(MeterRegistry registry) {
        this.registry = registry;
    }

    public static MeterReadings of(GatewayMetrics metrics) {
        return new MeterReadings(metrics.registry());
    }

    public static MeterReadings of(MeterRegistry registry) {
        return new MeterReadings(registry);
    }

    // ---------------------------------------------------------------- connections and frames

    public double decodeErrors(MalformedReason reason) {
        return decodeErrors(reason.label());
    }

    public double decodeErrors(String reason) {
        return count("rmqgw.decode.errors", "reason", reason);
    }

    /** Connections of {@code role} closed for {@code reason} so far. */
    public double connectionsClosed(String role, CloseReason reason) {
        return count("rmqgw.connections.closed", "role", role, "reason", reason.label());
    }

    /** Bytes held in incomplete client frames now (the gauge's value). */
    public long incompleteFrameBytes() {
        Gauge g = registry.find("rmqgw.incomplete.frame").gauge();
        return g == null ? 0 : (long) g.value();
    }

    public double framesStreamed() {
        return count("rmqgw.frames.streamed");
    }

    // ---------------------------------------------------------------- requests

    /** Requests with this request code answered with this response code so far. */
    public double requests(int requestCode, int responseCode) {
        return count("rmqgw.requests", "code", GatewayMetrics.requestCodeLabel(requestCode),
            "result", CodeNames.RESPONSES.name(CodeNames.RESPONSES.index(responseCode)));
    }

    public double oneways(int requestCode) {
        return count("rmqgw.oneway.requests", "code", GatewayMetrics.requestCodeLabel(requestCode));
    }

    public double litePullsTranslated() {
        return count("rmqgw.requests.translated");
    }

    /** Counted requests for {@code topic} ({@link GatewayMetrics#OTHER_TOPIC} for the overflow); 0 when disabled. */
    public double topicRequests(String topic, int requestCode) {
        return count("rmqgw.topic.requests", "topic", topic, "code", GatewayMetrics.requestCodeLabel(requestCode));
    }

    // ---------------------------------------------------------------- headers and names

    public double headerConversions(SerializeType from, SerializeType to) {
        return count("rmqgw.header.conversions", "from", from.name().toLowerCase(Locale.ROOT),
            "to", to.name().toLowerCase(Locale.ROOT));
    }

    public double namesRejected(NameCheck check) {
        return namesRejected(check.label());
    }

    public double namesRejected(String reason) {
        return count("rmqgw.names.rejected", "reason", reason);
    }

    // ---------------------------------------------------------------- reloads, discovery, TLS

    public double configReloads(String result) {
        return count("rmqgw.config.reloads", "result", result);
    }

    public double namesrvDiscoveries(String result) {
        return count("rmqgw.namesrv.discovery", "result", result);
    }

    public double tlsReloads(String result) {
        return count("rmqgw.tls.reloads", "result", result);
    }

    // ---------------------------------------------------------------- fan-out

    public double fanoutRequests(String result) {
        return count("rmqgw.fanout.requests", "result", result);
    }

    public double fanoutPartialFailures() {
        return count("rmqgw.fanout.partial.failures");
    }

    public double fanoutRetries() {
        return count("rmqgw.fanout.part.retries");
    }

    /** Requests recorded in the parts histogram. */
    public long fanoutPartsCount() {
        return summaryCount("rmqgw.fanout.request");
    }

    /** The parts of the requests recorded in the parts histogram, in total. */
    public double fanoutPartsTotal() {
        return summaryTotal("rmqgw.fanout.request");
    }

    // ---------------------------------------------------------------- coalescing

    public double coalesceSendsCount(String result) {
        return count("rmqgw.coalesce.sends", "result", result);
    }

    public double coalescePassedThroughCount(String reason) {
        return count("rmqgw.coalesce.passed.through", "reason", reason);
    }

    public double coalesceBatchesCount(String result) {
        return count("rmqgw.coalesce.batches", "result", result);
    }

    /** Batches recorded in the batch-size histogram. */
    public long coalesceBatchCount() {
        return summaryCount("rmqgw.coalesce.batch");
    }

    /** The messages of the batches recorded in the batch-size histogram, in total. */
    public double coalesceBatchMessagesTotal() {
        return summaryTotal("rmqgw.coalesce.batch");
    }

    // ---------------------------------------------------------------- rate limits and the admin policy

    public double rateLimitedSends(String limit) {
        return count("rmqgw.rate.limited", "limit", limit);
    }

    public double adminRequestsRefused(String kind) {
        return count("rmqgw.admin.requests.refused", "kind", kind);
    }

    // ---------------------------------------------------------------- upstreams

    public double upstreamFailures(UpstreamFailure failure) {
        return count("rmqgw.upstream.failures", "reason", failure.name().toLowerCase(Locale.ROOT));
    }

    /** 1 or 0 as last reported, or -1 if the name server was never reported (or was removed). */
    public int namesrvHealth(String address) {
        return health("rmqgw.namesrv.up", address);
    }

    /** 1 or 0 as last reported, or -1 if the broker was never reported. */
    public int brokerHealth(String address) {
        return health("rmqgw.broker.up", address);
    }

    /** Sends to logical topics the gateway stored elsewhere than chosen, over every cluster and reason. */
    public double logicalSendsRedirected() {
        return registry.find("rmqgw.logical.sends.redirected").counters().stream().mapToDouble(Counter::count).sum();
    }

    /** As {@link #logicalSendsRedirected()}, for one reason (down, degraded, retried). */
    public double logicalSendsRedirected(String reason) {
        return registry.find("rmqgw.logical.sends.redirected").tag("reason", reason).counters().stream()
            .mapToDouble(Counter::count).sum();
    }

    /** Times {@code cluster} went down. */
    public double clusterFailovers(String cluster) {
        return count("rmqgw.cluster.failovers", "cluster", cluster);
    }

    /** Times {@code cluster} came back up after being down. */
    public double clusterFailbacks(String cluster) {
        return count("rmqgw.cluster.failbacks", "cluster", cluster);
    }

    // ---------------------------------------------------------------- lookups

    /** The count of the counter {@code name} with these tag keys and values; 0 when there is none. */
    private double count(String name, String... tags) {
        Counter c = find(name, tags).counter();
        return c == null ? 0 : c.count();
    }

    /** The values recorded in the distribution summary {@code name}; 0 when there is none. */
    private long summaryCount(String name) {
        DistributionSummary s = registry.find(name).summary();
        return s == null ? 0 : s.count();
    }

    /** The sum of the values recorded in the distribution summary {@code name}; 0 when there is none. */
    private double summaryTotal(String name) {
        DistributionSummary s = registry.find(name).summary();
        return s == null ? 0 : s.totalAmount();
    }

    private int health(String name, String address) {
        Gauge g = find(name, "address", address).gauge();
        return g == null ? -1 : (int) g.value();
    }

    private Search find(String name, String... tags) {
        return registry.find(name).tags(tags);
    }
}
