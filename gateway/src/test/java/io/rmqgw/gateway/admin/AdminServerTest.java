package io.rmqgw.gateway.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Real HTTP against the admin port on a free loopback port. */
class AdminServerTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private GatewayMetrics metrics;
    private Readiness readiness;
    private AdminServer server;

    @BeforeEach
    void start() {
        metrics = GatewayMetrics.prometheus();
        readiness = new Readiness();
        server = AdminServer.start("127.0.0.1", 0, metrics, readiness);
    }

    @AfterEach
    void stop() {
        server.close();
        metrics.close();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.localAddress().getPort() + path);
    }

    private HttpResponse<String> send(String method, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri(path))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .timeout(Duration.ofSeconds(10))
            .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return send("GET", path);
    }

    @Test
    void metricsInPrometheusTextFormat() throws Exception {
        metrics.decodeError("bad_length");
        metrics.upstreamFailure(UpstreamFailure.TIMEOUT);
        metrics.requestCompleted(RequestCode.SEND_MESSAGE_V2, ResponseCode.SUCCESS, 25_000, 3_000_000);
        HttpResponse<String> r = get("/metrics");
        assertEquals(200, r.statusCode());
        assertEquals("text/plain; version=0.0.4; charset=utf-8", r.headers().firstValue("content-type").orElseThrow());
        String body = r.body();
        assertTrue(body.contains("rmqgw_decode_errors_total{reason=\"bad_length\"} 1.0"), body);
        assertTrue(body.contains("rmqgw_upstream_failures_total{reason=\"timeout\"} 1.0"), body);
        assertTrue(body.contains("rmqgw_requests_total{code=\"SEND_MESSAGE_V2\",result=\"SUCCESS\"} 1.0"), body);
        assertTrue(body.contains("rmqgw_request_upstream_duration_seconds_bucket{code=\"SEND_MESSAGE_V2\",le=\"0.005\"} 1"),
            body);
        assertTrue(body.contains("# TYPE rmqgw_request_gateway_duration_seconds histogram"), body);
        assertTrue(body.contains("rmqgw_ready 0.0"), body);
        assertTrue(body.contains("jvm_memory_used_bytes"), body);
        assertTrue(body.contains("rmqgw_netty_pooled_memory_used_bytes{memory=\"direct\"}"), body);
        // a query string does not change the path
        assertEquals(200, get("/metrics?name=rmqgw_ready").statusCode());
    }

    @Test
    void liveWhileRunning() throws Exception {
        HttpResponse<String> r = get("/health/live");
        assertEquals(200, r.statusCode());
        assertEquals("live\n", r.body());
        readiness.draining();
        assertEquals(200, get("/health/live").statusCode(), "live stays 200 while draining");
    }

    @Test
    void readyOnceListenersBoundAndNamesrvAnsweredNotWhileDraining() throws Exception {
        HttpResponse<String> r = get("/health/ready");
        assertEquals(503, r.statusCode());
        assertEquals("not ready: listeners not bound yet\n", r.body());

        readiness.listenersBound();
        r = get("/health/ready");
        assertEquals(503, r.statusCode());
        assertEquals("not ready: no upstream name server answered yet\n", r.body());

        readiness.namesrvAnswered();
        r = get("/health/ready");
        assertEquals(200, r.statusCode());
        assertEquals("ready\n", r.body());
        assertTrue(get("/metrics").body().contains("rmqgw_ready 1.0"));

        readiness.draining();
        r = get("/health/ready");
        assertEquals(503, r.statusCode());
        assertEquals("not ready: draining\n", r.body());
        assertTrue(get("/metrics").body().contains("rmqgw_ready 0.0"));
    }

    @Test
    void unknownPathIs404() throws Exception {
        for (String path : new String[] {"/", "/metric", "/health", "/health/ready/", "/metrics/x"}) {
            HttpResponse<String> r = get(path);
            assertEquals(404, r.statusCode(), path);
            assertTrue(r.body().contains("/metrics"), r.body());
        }
        assertEquals(404, send("POST", "/nowhere").statusCode());
    }

    @Test
    void wrongMethodIs405WithAllow() throws Exception {
        for (String method : new String[] {"POST", "PUT", "DELETE"}) {
            for (String path : new String[] {"/metrics", "/health/live", "/health/ready"}) {
                HttpResponse<String> r = send(method, path);
                assertEquals(405, r.statusCode(), method + " " + path);
                assertEquals("GET, HEAD", r.headers().firstValue("allow").orElseThrow());
            }
        }
    }

    @Test
    void headAnswersWithoutBody() throws Exception {
        HttpResponse<String> r = send("HEAD", "/health/live");
        assertEquals(200, r.statusCode());
        assertEquals("", r.body());
        assertEquals("5", r.headers().firstValue("content-length").orElseThrow());
        assertEquals(503, send("HEAD", "/health/ready").statusCode());
        // the connection is still usable after a HEAD
        assertEquals(200, get("/health/live").statusCode());
    }

    @Test
    void manyRequestsOnOneClient() throws Exception {
        for (int i = 0; i < 50; i++) {
            assertEquals(200, get(i % 2 == 0 ? "/metrics" : "/health/live").statusCode());
        }
    }

    @Test
    void inMemoryMetricsAreNotScrapable() throws Exception {
        GatewayMetrics memory = GatewayMetrics.inMemory();
        try (AdminServer other = AdminServer.start("127.0.0.1", 0, memory, readiness)) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + other.localAddress().getPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(503, r.statusCode());
            assertTrue(r.body().contains("in memory"), r.body());
        }
    }

    @Test
    void aTakenPortIsReportedWithItsAddress() {
        int port = server.localAddress().getPort();
        UncheckedIOException e = assertThrows(UncheckedIOException.class,
            () -> AdminServer.start("127.0.0.1", port, metrics, readiness));
        assertTrue(e.getMessage().contains("admin port on 127.0.0.1:" + port), e.getMessage());
    }

    @Test
    void closedServerRefusesConnections() throws Exception {
        assertEquals(200, get("/health/live").statusCode());
        server.close();
        server.close(); // idempotent
        HttpClient fresh = HttpClient.newHttpClient();
        IOException e = assertThrows(IOException.class, () -> fresh.send(HttpRequest.newBuilder(uri("/health/live")).build(),
            HttpResponse.BodyHandlers.ofString()));
        assertTrue(e instanceof ConnectException || e.getCause() instanceof ConnectException, e.toString());
        assertTrue(!metrics.scrape().contains("rmqgw_ready"), "the ready gauge leaves with the server");
    }
}
