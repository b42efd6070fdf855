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

    // ---- browsers kept out, and the bearer token ----

    private static final String TOKEN = "s3cret-admin-token-0123";

    /** One HTTP/1.1 request over a plain socket (so Host and Origin can be anything); the status and body. */
    private static String[] raw(int port, String method, String path, String... headerLines) throws IOException {
        return rawWithBody(port, method, path, "", headerLines);
    }

    private static String[] rawWithBody(int port, String method, String path, String body, String... headerLines)
        throws IOException {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            StringBuilder req = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
            boolean hostGiven = false;
            for (String h : headerLines) {
                hostGiven |= h.regionMatches(true, 0, "Host:", 0, 5);
                req.append(h).append("\r\n");
            }
            if (!hostGiven) {
                req.append("Host: 127.0.0.1:").append(port).append("\r\n");
            }
            byte[] content = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            req.append("Content-Length: ").append(content.length).append("\r\nConnection: close\r\n\r\n");
            s.getOutputStream().write(req.toString().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            s.getOutputStream().write(content);
            String answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            String status = answer.substring(answer.indexOf(' ') + 1, answer.indexOf(' ') + 4);
            int split = answer.indexOf("\r\n\r\n");
            return new String[] {status, answer.substring(split + 4), answer.substring(0, split)};
        }
    }

    /** Counts reloads that ran. */
    private final java.util.concurrent.atomic.AtomicInteger reloads = new java.util.concurrent.atomic.AtomicInteger();

    private void countReloads(AdminServer target) {
        target.reloadHandler(() -> {
            reloads.incrementAndGet();
            return java.util.concurrent.CompletableFuture.completedFuture(
                new ReloadOutcome(ReloadOutcome.Result.UNCHANGED, java.util.List.of(), java.util.List.of(),
                    java.util.List.of(), null));
        });
    }

    @Test
    void aCrossOriginReloadIsRefusedAndNeverRuns() throws Exception {
        countReloads(server);
        int port = server.localAddress().getPort();
        String[] r = raw(port, "POST", "/reload", "Origin: http://evil.example");
        assertEquals("403", r[0]);
        assertTrue(r[1].contains("cross-origin request (Origin http://evil.example)"), r[1]);
        r = raw(port, "POST", "/reload", "Origin: null");
        assertEquals("403", r[0], "a sandboxed page's Origin: " + r[1]);
        r = raw(port, "POST", "/reload", "Origin: http://127.0.0.1:" + (port + 1));
        assertEquals("403", r[0], "another port is another origin");
        r = raw(port, "POST", "/reload", "Sec-Fetch-Site: cross-site");
        assertEquals("403", r[0]);
        assertTrue(r[1].contains("cross-site"), r[1]);
        assertEquals(0, reloads.get());

        r = raw(port, "POST", "/reload", "Origin: http://127.0.0.1:" + port);
        assertEquals("200", r[0], "the admin's own origin: " + r[1]);
        assertEquals(1, reloads.get());
    }

    @Test
    void aForeignHostIsRefusedLoopbackNamesAreOneAddress() throws Exception {
        countReloads(server);
        int port = server.localAddress().getPort();
        for (String host : new String[] {"evil.example:" + port, "evil.example", "127.0.0.1:" + (port + 1),
            "10.1.2.3:" + port, "127.0.0.1"}) {
            String[] r = raw(port, "GET", "/metrics", "Host: " + host);
            assertEquals("403", r[0], host);
            assertTrue(r[1].contains("Host " + host + " is not the admin address 127.0.0.1:" + port), r[1]);
        }
        assertEquals("403", raw(port, "POST", "/reload", "Host: rebound.example:" + port)[0]);
        assertEquals(0, reloads.get(), "a DNS-rebound name reached /reload");
        for (String host : new String[] {"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port}) {
            assertEquals("200", raw(port, "GET", "/health/live", "Host: " + host)[0], host);
        }
        assertEquals(200, get("/health/live").statusCode(), "java's own client sends the address as Host");
    }

    @Test
    void reloadTakesNoBodyOrJsonNeverAFormOrText() throws Exception {
        countReloads(server);
        int port = server.localAddress().getPort();
        for (String type : new String[] {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x"}) {
            String[] r = rawWithBody(port, "POST", "/reload", "x=1", "Content-Type: " + type);
            assertEquals("415", r[0], type);
            assertTrue(r[1].contains("POST /reload takes no body, or application/json"), r[1]);
        }
        assertEquals("415", rawWithBody(port, "POST", "/reload", "x=1")[0], "a body without a type");
        assertEquals(0, reloads.get());
        assertEquals("200", rawWithBody(port, "POST", "/reload", "{}", "Content-Type: application/json")[0]);
        assertEquals("200", raw(port, "POST", "/reload")[0]);
        assertEquals(200, send("POST", "/reload").statusCode(), "rmqgw reload's own request");
        assertEquals(3, reloads.get());
    }

    @Test
    void withATokenReloadNeedsItAndMetricsOnlyWhenAsked() throws Exception {
        GatewayMetrics m = GatewayMetrics.prometheus();
        try (AdminServer guarded = AdminServer.start("127.0.0.1", 0, m, readiness, TOKEN, false)) {
            countReloads(guarded);
            int port = guarded.localAddress().getPort();
            String[] r = raw(port, "POST", "/reload");
            assertEquals("401", r[0]);
            assertTrue(r[2].toLowerCase(java.util.Locale.ROOT).contains("www-authenticate: bearer"), r[2]);
            assertTrue(r[1].contains("needs Authorization: Bearer"), r[1]);
            assertEquals("401", raw(port, "POST", "/reload", "Authorization: Bearer wrong-token-0123456789")[0]);
            assertEquals("401", raw(port, "POST", "/reload", "Authorization: Basic " + TOKEN)[0]);
            assertEquals(0, reloads.get());
            assertEquals("200", raw(port, "POST", "/reload", "Authorization: Bearer " + TOKEN)[0]);
            assertEquals(1, reloads.get());
            // the token does not open the door to a browser
            assertEquals("403", raw(port, "POST", "/reload", "Authorization: Bearer " + TOKEN,
                "Origin: http://evil.example")[0]);
            assertEquals("200", raw(port, "GET", "/metrics")[0], "metrics stay open unless asked");
            assertEquals("200", raw(port, "GET", "/health/ready")[0].equals("200") ? "200"
                : raw(port, "GET", "/health/live")[0]);
        } finally {
            m.close();
        }
        GatewayMetrics m2 = GatewayMetrics.prometheus();
        try (AdminServer guarded = AdminServer.start("127.0.0.1", 0, m2, readiness, TOKEN, true)) {
            int port = guarded.localAddress().getPort();
            assertEquals("401", raw(port, "GET", "/metrics")[0]);
            assertEquals("200", raw(port, "GET", "/metrics", "Authorization: Bearer " + TOKEN)[0]);
            assertEquals("200", raw(port, "GET", "/health/live")[0], "probes need no token");
        } finally {
            m2.close();
        }
    }
}
