package io.rmqgw.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The names and labels as Prometheus sees them: what dashboards and alerts are written against. */
class GatewayMetricsExportTest {

    private final GatewayMetrics metrics = GatewayMetrics.prometheus();

    @AfterEach
    void close() {
        metrics.close();
    }

    /** The value of the one sample line starting with {@code series} (name and labels as exported). */
    private static double sample(String scrape, String series) {
        List<String> lines = Arrays.stream(scrape.split("\n")).filter(l -> l.startsWith(series + " ")).toList();
        assertEquals(1, lines.size(), () -> "one line " + series + " expected in:\n" + scrape);
        return Double.parseDouble(lines.get(0).substring(series.length() + 1).trim());
    }

    @Test
    void existingMetersExportWithPrometheusNames() {
        metrics.decodeError("bad_length");
        metrics.decodeError("bad_length");
        metrics.connectionClosed("broker", "malformed_frame");
        metrics.upstreamFailure(UpstreamFailure.TIMEOUT);
        metrics.routeRewritten();
        metrics.routeServedFromCache();
        String s = metrics.scrape();
        assertEquals(2, sample(s, "rmqgw_decode_errors_total{reason=\"bad_length\"}"));
        assertEquals(1, sample(s, "rmqgw_connections_closed_total{reason=\"malformed_frame\",role=\"broker\"}"));
        assertEquals(1, sample(s, "rmqgw_upstream_failures_total{reason=\"timeout\"}"));
        assertEquals(0, sample(s, "rmqgw_upstream_failures_total{reason=\"connect_failed\"}"));
        assertEquals(1, sample(s, "rmqgw_route_rewritten_total"));
        assertEquals(1, sample(s, "rmqgw_route_cache_served_total"));
        assertEquals(2, MeterReadings.of(metrics).decodeErrors("bad_length"));
        assertEquals(1, MeterReadings.of(metrics).upstreamFailures(UpstreamFailure.TIMEOUT));
    }

    @Test
    void requestsByCodeNameAndResult() {
        metrics.requestCompleted(RequestCode.SEND_MESSAGE_V2, ResponseCode.SUCCESS, 20_000, 1_500_000);
        metrics.requestCompleted(RequestCode.SEND_MESSAGE_V2, ResponseCode.SUCCESS, 30_000, 4_000_000);
        metrics.requestCompleted(RequestCode.PULL_MESSAGE, ResponseCode.PULL_NOT_FOUND, 10_000, 0);
        metrics.requestAnswered(RequestCode.PULL_MESSAGE, ResponseCode.SYSTEM_BUSY);
        metrics.requestCompleted(987_654, 55_555, 1_000, -1);
        String s = metrics.scrape();
        assertEquals(2, sample(s, "rmqgw_requests_total{code=\"SEND_MESSAGE_V2\",result=\"SUCCESS\"}"));
        assertEquals(1, sample(s, "rmqgw_requests_total{code=\"PULL_MESSAGE\",result=\"PULL_NOT_FOUND\"}"));
        assertEquals(1, sample(s, "rmqgw_requests_total{code=\"PULL_MESSAGE\",result=\"SYSTEM_BUSY\"}"));
        assertEquals(1, sample(s, "rmqgw_requests_total{code=\"other\",result=\"other\"}"));
        assertEquals(2, MeterReadings.of(metrics).requests(RequestCode.SEND_MESSAGE_V2, ResponseCode.SUCCESS));

        // histograms in seconds, split into time inside the gateway and upstream
        assertEquals(2, sample(s, "rmqgw_request_gateway_duration_seconds_count{code=\"SEND_MESSAGE_V2\"}"));
        assertEquals(50e-6, sample(s, "rmqgw_request_gateway_duration_seconds_sum{code=\"SEND_MESSAGE_V2\"}"), 1e-9);
        assertEquals(1, sample(s, "rmqgw_request_gateway_duration_seconds_bucket{code=\"SEND_MESSAGE_V2\",le=\"2.5E-5\"}"));
        assertEquals(2, sample(s, "rmqgw_request_gateway_duration_seconds_bucket{code=\"SEND_MESSAGE_V2\",le=\"+Inf\"}"));
        assertEquals(2, sample(s, "rmqgw_request_upstream_duration_seconds_count{code=\"SEND_MESSAGE_V2\"}"));
        assertEquals(1, sample(s, "rmqgw_request_upstream_duration_seconds_bucket{code=\"SEND_MESSAGE_V2\",le=\"0.0025\"}"));
        assertEquals(2, sample(s, "rmqgw_request_upstream_duration_seconds_bucket{code=\"SEND_MESSAGE_V2\",le=\"0.005\"}"));
        assertEquals(1, sample(s, "rmqgw_request_upstream_duration_seconds_count{code=\"PULL_MESSAGE\"}"));
        // no upstream time: only the gateway's
        assertEquals(1, sample(s, "rmqgw_request_gateway_duration_seconds_count{code=\"other\"}"));
        assertFalse(s.contains("rmqgw_request_upstream_duration_seconds_count{code=\"other\"}"), s);
        assertTrue(s.contains("# TYPE rmqgw_request_gateway_duration_seconds histogram"), s);
    }

    @Test
    void histogramsHaveTheDocumentedBucketsPerCodeOnly() {
        int[] codes = {RequestCode.SEND_MESSAGE_V2, RequestCode.PULL_MESSAGE, RequestCode.GET_ROUTEINFO_BY_TOPIC,
            RequestCode.HEART_BEAT, RequestCode.QUERY_CONSUMER_OFFSET, 123_456};
        for (int code : codes) {
            for (long nanos = 1_000; nanos < 100_000_000_000L; nanos *= 3) { // 1 us to 100 s: every bucket touched
                metrics.requestCompleted(code, ResponseCode.SUCCESS, nanos, nanos);
            }
        }
        String s = metrics.scrape();
        // as the README lists them, in seconds
        List<String> gateway = List.of("5.0E-6", "1.0E-5", "2.5E-5", "5.0E-5", "1.0E-4", "2.5E-4", "5.0E-4", "0.001",
            "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "1.0", "+Inf");
        List<String> upstream = List.of("2.5E-4", "5.0E-4", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
            "0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "30.0", "60.0", "+Inf");
        assertEquals(RequestMeters.GATEWAY_BUCKETS.length + 1, gateway.size());
        assertEquals(RequestMeters.UPSTREAM_BUCKETS.length + 1, upstream.size());
        for (String code : List.of("SEND_MESSAGE_V2", "PULL_MESSAGE", "GET_ROUTEINFO_BY_TOPIC", "HEART_BEAT",
            "QUERY_CONSUMER_OFFSET", "other")) {
            assertEquals(gateway, bucketBounds(s, "rmqgw_request_gateway_duration_seconds_bucket", code), code);
            assertEquals(upstream, bucketBounds(s, "rmqgw_request_upstream_duration_seconds_bucket", code), code);
        }
        // six codes, each request histogram's buckets and nothing else (the fan-out parts histogram is per request)
        assertEquals(codes.length * (gateway.size() + upstream.size()),
            Arrays.stream(s.split("\n")).filter(l -> l.contains("_bucket{") && l.startsWith("rmqgw_request_")).count());
    }

    /** The le values of {@code bucket}{code=...} in exported order. */
    private static List<String> bucketBounds(String scrape, String bucket, String code) {
        Pattern le = Pattern.compile("le=\"([^\"]+)\"");
        return Arrays.stream(scrape.split("\n"))
            .filter(l -> l.startsWith(bucket + "{") && l.contains("code=\"" + code + "\""))
            .map(l -> {
                Matcher m = le.matcher(l);
                assertTrue(m.find(), l);
                return m.group(1);
            })
            .toList();
    }

    @Test
    void boundedReasonsExistAtZeroAndCountByEnum() {
        String s = metrics.scrape();
        for (MalformedReason r : MalformedReason.values()) {
            assertEquals(0, sample(s, "rmqgw_decode_errors_total{reason=\"" + r.label() + "\"}"));
        }
        for (NameCheck c : NameCheck.values()) {
            if (!c.isValid()) {
                assertEquals(0, sample(s, "rmqgw_names_rejected_total{reason=\"" + c.label() + "\"}"));
            }
        }
        assertFalse(s.contains("rmqgw_names_rejected_total{reason=\"valid\"}"), s);
        for (String role : GatewayMetrics.ROLES) {
            for (CloseReason r : CloseReason.values()) {
                assertEquals(0, sample(s, "rmqgw_connections_closed_total{reason=\"" + r.label() + "\",role=\"" + role + "\"}"));
            }
        }
        for (String result : NamesrvDiscoveryMeters.RESULTS) {
            assertEquals(0, sample(s, "rmqgw_namesrv_discovery_total{result=\"" + result + "\"}"));
        }

        metrics.decodeError(MalformedReason.INVALID_JSON);
        metrics.decodeError("invalid_json"); // the label names the same series
        metrics.nameRejected(NameCheck.TOO_LONG);
        metrics.connectionClosed(GatewayMetrics.NAMESRV, CloseReason.UPSTREAM_CLOSED);
        metrics.connectionClosed(GatewayMetrics.NAMESRV, "upstream_closed");
        metrics.namesrvDiscovery().poll("timeout");
        s = metrics.scrape();
        assertEquals(2, sample(s, "rmqgw_decode_errors_total{reason=\"invalid_json\"}"));
        assertEquals(1, sample(s, "rmqgw_names_rejected_total{reason=\"too_long\"}"));
        assertEquals(2, sample(s, "rmqgw_connections_closed_total{reason=\"upstream_closed\",role=\"namesrv\"}"));
        assertEquals(0, sample(s, "rmqgw_connections_closed_total{reason=\"upstream_closed\",role=\"broker\"}"));
        assertEquals(1, sample(s, "rmqgw_namesrv_discovery_total{result=\"timeout\"}"));
        assertEquals(2, MeterReadings.of(metrics).decodeErrors(MalformedReason.INVALID_JSON));
        assertEquals(1, MeterReadings.of(metrics).namesRejected(NameCheck.TOO_LONG));
        assertEquals(2, MeterReadings.of(metrics).connectionsClosed(GatewayMetrics.NAMESRV, CloseReason.UPSTREAM_CLOSED));
        assertThrows(IllegalArgumentException.class, () -> metrics.nameRejected(NameCheck.VALID));

        // a value outside the known sets is still counted, in a series of its own
        metrics.decodeError("something_new");
        metrics.connectionClosed("proxy", CloseReason.INTERNAL_ERROR);
        s = metrics.scrape();
        assertEquals(1, sample(s, "rmqgw_decode_errors_total{reason=\"something_new\"}"));
        assertEquals(1, sample(s, "rmqgw_connections_closed_total{reason=\"internal_error\",role=\"proxy\"}"));
        assertEquals(0, sample(s, "rmqgw_connections_closed_total{reason=\"malformed_frame\",role=\"proxy\"}"));
    }

    @Test
    void onewaysHeaderConversionsAndRejectedNames() {
        metrics.oneway(RequestCode.HEART_BEAT);
        metrics.oneway(RequestCode.SEND_MESSAGE_V2);
        metrics.oneway(RequestCode.SEND_MESSAGE_V2);
        metrics.headerConverted(SerializeType.JSON, SerializeType.ROCKETMQ);
        metrics.headerConverted(SerializeType.JSON, SerializeType.JSON); // not a conversion
        metrics.nameRejected("illegal_character");
        String s = metrics.scrape();
        assertEquals(2, sample(s, "rmqgw_oneway_requests_total{code=\"SEND_MESSAGE_V2\"}"));
        assertEquals(1, sample(s, "rmqgw_oneway_requests_total{code=\"HEART_BEAT\"}"));
        assertEquals(1, sample(s, "rmqgw_header_conversions_total{from=\"json\",to=\"rocketmq\"}"));
        assertEquals(0, sample(s, "rmqgw_header_conversions_total{from=\"rocketmq\",to=\"json\"}"));
        assertEquals(1, sample(s, "rmqgw_names_rejected_total{reason=\"illegal_character\"}"));
        assertEquals(2, MeterReadings.of(metrics).oneways(RequestCode.SEND_MESSAGE_V2));
        assertEquals(1, MeterReadings.of(metrics).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ));
        assertEquals(1, MeterReadings.of(metrics).namesRejected("illegal_character"));
    }

    @Test
    void connectionsAndBytesByListener() {
        ListenerMeters broker = metrics.brokerListener("10.0.0.5:10911");
        ListenerMeters namesrv = metrics.namesrvListener();
        EmbeddedChannel client = new EmbeddedChannel(broker.clientHandler());
        EmbeddedChannel upstream = new EmbeddedChannel(broker.upstreamHandler());
        EmbeddedChannel nsClient = new EmbeddedChannel(namesrv.clientHandler());
        client.writeInbound(Unpooled.wrappedBuffer(new byte[100]));
        client.writeOutbound(Unpooled.wrappedBuffer(new byte[40]));
        upstream.writeOutbound(Unpooled.wrappedBuffer(new byte[100]));
        upstream.writeInbound(Unpooled.wrappedBuffer(new byte[40]));
        String s = metrics.scrape();
        String b = "role=\"broker\",upstream=\"10.0.0.5:10911\"";
        assertEquals(1, sample(s, "rmqgw_client_connections{" + b + "}"));
        assertEquals(1, sample(s, "rmqgw_upstream_connections{" + b + "}"));
        assertEquals(1, sample(s, "rmqgw_client_connections{role=\"namesrv\",upstream=\"namesrv\"}"));
        assertEquals(100, sample(s, "rmqgw_received_bytes_total{peer=\"client\"," + b + "}"));
        assertEquals(40, sample(s, "rmqgw_sent_bytes_total{peer=\"client\"," + b + "}"));
        assertEquals(100, sample(s, "rmqgw_sent_bytes_total{peer=\"upstream\"," + b + "}"));
        assertEquals(40, sample(s, "rmqgw_received_bytes_total{peer=\"upstream\"," + b + "}"));
        assertEquals(100, broker.bytesFromClients());
        assertEquals(40, broker.bytesFromUpstream());
        assertTrue(metrics.brokerListener("10.0.0.5:10911") == broker, "cached per broker");

        client.finishAndReleaseAll();
        upstream.finishAndReleaseAll();
        nsClient.finishAndReleaseAll();
        s = metrics.scrape();
        assertEquals(0, sample(s, "rmqgw_client_connections{" + b + "}"));
        assertEquals(0, sample(s, "rmqgw_upstream_connections{" + b + "}"));
        assertEquals(0, broker.clientConnections());
    }

    @Test
    void upstreamHealth() {
        metrics.namesrvUp("10.0.0.1:9876", true);
        metrics.namesrvUp("10.0.0.2:9876", false);
        metrics.brokerUp("10.0.0.5:10911", true);
        String s = metrics.scrape();
        assertEquals(1, sample(s, "rmqgw_namesrv_up{address=\"10.0.0.1:9876\"}"));
        assertEquals(0, sample(s, "rmqgw_namesrv_up{address=\"10.0.0.2:9876\"}"));
        assertEquals(1, sample(s, "rmqgw_broker_up{address=\"10.0.0.5:10911\"}"));
        metrics.namesrvUp("10.0.0.2:9876", true);
        metrics.namesrvRemoved("10.0.0.1:9876");
        s = metrics.scrape();
        assertEquals(1, sample(s, "rmqgw_namesrv_up{address=\"10.0.0.2:9876\"}"));
        assertFalse(s.contains("10.0.0.1:9876"), s);
        assertEquals(-1, MeterReadings.of(metrics).namesrvHealth("10.0.0.1:9876"));
        assertEquals(1, MeterReadings.of(metrics).brokerHealth("10.0.0.5:10911"));
    }

    @Test
    void perTopicLabelsAreOffByDefaultThenCapped() {
        metrics.topicRequest("TopicA", RequestCode.SEND_MESSAGE_V2);
        assertFalse(metrics.scrape().contains("rmqgw_topic_requests_total"));
        assertFalse(metrics.topicLabelsEnabled());

        metrics.topicLabels(true, 2);
        metrics.topicRequest("TopicA", RequestCode.SEND_MESSAGE_V2);
        metrics.topicRequest("TopicB", RequestCode.PULL_MESSAGE);
        metrics.topicRequest("TopicC", RequestCode.SEND_MESSAGE_V2);
        metrics.topicRequest("TopicD", RequestCode.SEND_MESSAGE_V2);
        metrics.topicRequest("TopicA", RequestCode.SEND_MESSAGE_V2);
        String s = metrics.scrape();
        assertEquals(2, sample(s, "rmqgw_topic_requests_total{code=\"SEND_MESSAGE_V2\",topic=\"TopicA\"}"));
        assertEquals(1, sample(s, "rmqgw_topic_requests_total{code=\"PULL_MESSAGE\",topic=\"TopicB\"}"));
        assertEquals(2, sample(s, "rmqgw_topic_requests_total{code=\"SEND_MESSAGE_V2\",topic=\"(other)\"}"));
        assertFalse(s.contains("TopicC"), s);
        assertEquals(2, MeterReadings.of(metrics).topicRequests(GatewayMetrics.OTHER_TOPIC, RequestCode.SEND_MESSAGE_V2));

        metrics.topicLabels(false, 0);
        assertFalse(metrics.scrape().contains("rmqgw_topic_requests_total"));
        assertThrows(IllegalArgumentException.class, () -> metrics.topicLabels(true, 0));
    }

    @Test
    void jvmProcessAndNettyMetrics() {
        ByteBuf held = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(1024);
        try {
            String s = metrics.scrape();
            for (String name : List.of("jvm_memory_used_bytes", "jvm_threads_live_threads", "jvm_gc_",
                "system_cpu_count", "process_uptime_seconds", "rmqgw_netty_pooled_memory_used_bytes{memory=\"heap\"}")) {
                assertTrue(s.contains(name), name + " missing in:\n" + s);
            }
            assertTrue(sample(s, "rmqgw_netty_pooled_memory_used_bytes{memory=\"direct\"}") > 0, s);
        } finally {
            held.release();
        }
    }

    @Test
    void everyRmqgwSeriesFollowsPrometheusConventions() {
        metrics.requestCompleted(RequestCode.SEND_MESSAGE, ResponseCode.SUCCESS, 1, 1);
        metrics.oneway(RequestCode.HEART_BEAT);
        metrics.decodeError("x");
        metrics.nameRejected("y");
        metrics.namesrvListener();
        int seen = PrometheusConventions.assertFollowed(metrics.scrape(), Set.of());
        assertTrue(seen > 10, "rmqgw meters exported: " + seen);
    }

    @Test
    void inMemoryMetricsDoNotScrape() {
        GatewayMetrics memory = GatewayMetrics.inMemory();
        assertFalse(memory.exportsPrometheus());
        assertThrows(IllegalStateException.class, memory::scrape);
        assertTrue(metrics.exportsPrometheus());
        assertTrue(GatewayMetrics.PROMETHEUS_CONTENT_TYPE.startsWith("text/plain; version=0.0.4"));
    }
}
