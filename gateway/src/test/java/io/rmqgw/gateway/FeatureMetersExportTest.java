package io.rmqgw.gateway;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.coalesce.CoalescingMeters;
import io.rmqgw.gateway.fanout.FanoutMeters;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.PrometheusConventions;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The features' own meters (in their packages since they left the metrics module) as Prometheus sees them: the
 * names, labels and buckets dashboards and alerts are written against, each series at 0 from the start.
 */
class FeatureMetersExportTest {

    private final GatewayMetrics metrics = GatewayMetrics.prometheus();
    private final FanoutMeters fanout = new FanoutMeters(metrics.registry());
    private final CoalescingMeters coalescing = new CoalescingMeters(metrics.registry());

    @AfterEach
    void close() {
        metrics.close();
    }

    @Test
    void fanoutMetersStartAtZeroThenCount() {
        String before = metrics.scrape();
        for (String result : FanoutMeters.RESULTS) {
            assertTrue(before.contains("rmqgw_fanout_requests_total{result=\"" + result + "\"} 0.0"), before);
        }
        assertTrue(before.contains("rmqgw_fanout_partial_failures_total 0.0"), before);
        assertTrue(before.contains("rmqgw_fanout_part_retries_total 0.0"), before);
        assertTrue(before.contains("rmqgw_fanout_request_parts_bucket{le=\"4.0\"} 0"), before);
        fanout.request("success", 3);
        fanout.request("refused", 0);
        fanout.partialFailure();
        String after = metrics.scrape();
        assertTrue(after.contains("rmqgw_fanout_requests_total{result=\"success\"} 1.0"), after);
        assertTrue(after.contains("rmqgw_fanout_requests_total{result=\"refused\"} 1.0"), after);
        assertTrue(after.contains("rmqgw_fanout_request_parts_bucket{le=\"2.0\"} 0"), after);
        assertTrue(after.contains("rmqgw_fanout_request_parts_bucket{le=\"4.0\"} 1"), after);
        assertTrue(after.contains("rmqgw_fanout_request_parts_count 1"), after);
        assertTrue(after.contains("rmqgw_fanout_partial_failures_total 1.0"), after);
    }

    @Test
    void coalescingMetersStartAtZeroThenCount() {
        String before = metrics.scrape();
        for (String result : CoalescingMeters.RESULTS) {
            assertTrue(before.contains("rmqgw_coalesce_sends_total{result=\"" + result + "\"} 0.0"), before);
        }
        for (String reason : CoalescingMeters.PASS_REASONS) {
            assertTrue(before.contains("rmqgw_coalesce_passed_through_total{reason=\"" + reason + "\"} 0.0"), before);
        }
        for (String result : CoalescingMeters.BATCH_RESULTS) {
            assertTrue(before.contains("rmqgw_coalesce_batches_total{result=\"" + result + "\"} 0.0"), before);
        }
        assertTrue(before.contains("rmqgw_coalesce_batch_messages_bucket{le=\"64.0\"} 0"), before);
        assertTrue(before.contains("rmqgw_coalesce_delay_seconds_count 0"), before);
        coalescing.send("coalesced");
        coalescing.passedThrough("delayed");
        coalescing.batch("stored", 40);
        coalescing.delay(300_000);
        String after = metrics.scrape();
        assertTrue(after.contains("rmqgw_coalesce_sends_total{result=\"coalesced\"} 1.0"), after);
        assertTrue(after.contains("rmqgw_coalesce_passed_through_total{reason=\"delayed\"} 1.0"), after);
        assertTrue(after.contains("rmqgw_coalesce_batches_total{result=\"stored\"} 1.0"), after);
        assertTrue(after.contains("rmqgw_coalesce_batch_messages_bucket{le=\"32.0\"} 0"), after);
        assertTrue(after.contains("rmqgw_coalesce_batch_messages_bucket{le=\"64.0\"} 1"), after);
        assertTrue(after.contains("rmqgw_coalesce_delay_seconds_bucket{le=\"2.5E-4\"} 0"), after);
        assertTrue(after.contains("rmqgw_coalesce_delay_seconds_bucket{le=\"5.0E-4\"} 1"), after);
    }

    /** With the gateway's own meters, as GatewayMetricsExportTest checks those alone. */
    @Test
    void theFeaturesSeriesFollowPrometheusConventions() {
        fanout.request("success", 2);
        fanout.retry();
        coalescing.batch("refused", 3);
        coalescing.delay(1_000);
        PrometheusConventions.assertFollowed(metrics.scrape(),
            Set.of("rmqgw_fanout_request_parts", "rmqgw_coalesce_batch_messages"));
    }
}
