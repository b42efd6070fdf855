package io.rmqgw.gateway.reload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.admin.ReloadOutcome;
import io.rmqgw.gateway.config.ConfigFileWatcher;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.runtime.ConfigReloader;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.FreePorts;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.net.ConnectException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reloads as an operator triggers them, against a real gateway started from a YAML file: the file changes
 * (watched, debounced, replaced by rename as editors do) and {@code POST /reload} on the admin port. What a
 * reload applies reaches connections that were open before it; an invalid file is refused with its path and
 * reason and the running configuration stays; a listen change is reported as needing a restart; every
 * reload is counted by result.
 */
@Timeout(60)
class ReloadTriggersTest {

    private static final int GET_MAX_OFFSET = 30;
    private static final int SEND_MESSAGE_V2 = 310;
    private static final int INVALID_PARAMETER = 29;
    private static final String TOPIC_20 = "Topic_of_20_chars___";
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private ScriptedPeer broker;
    private ScriptedPeer namesrv;
    private YamlGateway gw;
    private ConfigReloader reloader;
    private ConfigFileWatcher watcher;
    private final AtomicBoolean brokerAnswers = new AtomicBoolean(true);

    @BeforeEach
    void start() throws Exception {
        broker = ScriptedPeer.start((c, f) -> {
            if (f.isResponse() || f.isOneway() || (f.code() == GET_MAX_OFFSET && !brokerAnswers.get())) {
                return;
            }
            c.send(Wire.response(Wire.SUCCESS, f.opaque()).type(f.serializeType()).remark("broker " + f.code()).bytes());
        });
        namesrv = ScriptedPeer.start(Routes.nameServer(Map.of("TopicA", Map.of("broker-a", broker.address()))));
        namesrv.clusterInfo(ScriptedPeer.clusterInfoNaming("broker-a", broker.address()));
        gw = new YamlGateway(dir, namesrv.address());
        gw.start(initialYaml());
        reloader = ConfigReloader.builder(gw.gateway, gw.metrics, () -> ConfigLoader.load(gw.file))
            .describedAs(gw.file.toString()).build();
    }

    private String initialYaml() {
        return gw.yaml("20s", 127, "");
    }

    private void watch() throws Exception {
        watcher = ConfigFileWatcher.start(gw.file, ConfigFileWatcher.DEFAULT_DEBOUNCE,
            () -> reloader.reloadAsync("file change"));
    }

    @AfterEach
    void stop() {
        if (watcher != null) {
            watcher.close();
        }
        if (reloader != null) {
            reloader.close();
        }
        if (gw != null) {
            gw.close();
        }
        namesrv.close();
        broker.close();
    }

    private int brokerPort() {
        String advertised = gw.gateway.brokerListeners().get(broker.address());
        return Integer.parseInt(advertised.substring(advertised.lastIndexOf(':') + 1));
    }

    private static Wire.Builder send(String topic) {
        return Wire.request(SEND_MESSAGE_V2).ext("a", "pg").ext("b", topic).ext("c", "TBW102").ext("d", "4")
            .ext("e", "0").ext("f", "0").ext("g", "1700000000000").ext("h", "0").ext("i", "WAIT\u0001true\u0002")
            .body("payload");
    }

    /** A send of a 20-character topic (opaque below 10: before the limit drops to 10) or of TopicA. */
    private static void sendOk(RawClient client, int opaque) throws Exception {
        client.send(send(opaque < 10 ? TOPIC_20 : "TopicA").opaque(opaque).bytes());
        Wire.Frame answer = client.read();
        assertEquals(opaque, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code(), answer.toString());
    }

    private static void routeOk(RawClient client, int opaque) throws Exception {
        client.send(Routes.request("TopicA", 453).opaque(opaque).bytes());
        Wire.Frame answer = client.read();
        assertEquals(opaque, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code(), answer.toString());
    }

    /** The reloaded settings act on connections opened before the reload. */
    private void assertNewSettingsOn(RawClient brokerClient, RawClient namesrvClient, int opaque) throws Exception {
        brokerClient.send(send(TOPIC_20).opaque(opaque).bytes());
        Wire.Frame refused = brokerClient.read();
        assertEquals(opaque, refused.opaque());
        assertEquals(INVALID_PARAMETER, refused.code(), "topic-max-length 10 now: " + refused);
        assertTrue(refused.remark().endsWith("max length: 10"), refused.remark());

        brokerAnswers.set(false);
        long t0 = System.nanoTime();
        brokerClient.send(Wire.request(GET_MAX_OFFSET).opaque(opaque + 1).ext("topic", "TopicA").ext("queueId", "0").bytes());
        Wire.Frame busy = brokerClient.read(Duration.ofSeconds(5));
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(opaque + 1, busy.opaque());
        assertEquals(Wire.SYSTEM_BUSY, busy.code(), busy.toString());
        assertTrue(millis >= 300 && millis < 3000, "timed out after " + millis + " ms with request-timeout 300ms");
        brokerAnswers.set(true);

        // still the same connections, both sides
        sendOk(brokerClient, opaque + 2);
        routeOk(namesrvClient, opaque + 3);
    }

    @Test
    void aChangedFileIsReloadedAndActsOnOpenConnections() throws Exception {
        watch();
        try (RawClient brokerClient = RawClient.connect(brokerPort());
             RawClient namesrvClient = RawClient.connect(gw.listen)) {
            sendOk(brokerClient, 1);
            routeOk(namesrvClient, 2);
            int brokerConnections = broker.connectionCount();
            int namesrvConnections = namesrv.connectionCount();

            long t0 = System.nanoTime();
            gw.replace(gw.yaml("300ms", 10, ""));   // written elsewhere and renamed over it, as editors do
            TestGateway.await(() -> MeterReadings.of(gw.metrics).configReloads("applied") == 1, WAIT, "the file change reloaded");
            long millis = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("file change to reload applied: " + millis + " ms (debounce "
                + ConfigFileWatcher.DEFAULT_DEBOUNCE.toMillis() + " ms)");
            assertTrue(millis >= ConfigFileWatcher.DEFAULT_DEBOUNCE.toMillis(), "debounced: " + millis + " ms");
            assertEquals(Duration.ofMillis(300), gw.gateway.config().upstream().requestTimeout());
            assertEquals(10, gw.gateway.config().names().topicMaxLength());

            assertNewSettingsOn(brokerClient, namesrvClient, 10);
            assertEquals(brokerConnections, broker.connectionCount(), "no new upstream connection to the broker");
            assertEquals(namesrvConnections, namesrv.connectionCount(), "no new upstream connection to the name server");

            // written in place, invalid: refused, counted, the running configuration stays
            gw.write(gw.yaml("300ms", 0, ""));
            TestGateway.await(() -> MeterReadings.of(gw.metrics).configReloads("refused") == 1, WAIT, "the bad file refused");
            assertEquals(10, gw.gateway.config().names().topicMaxLength());
            brokerClient.send(send(TOPIC_20).opaque(30).bytes());
            assertEquals(INVALID_PARAMETER, brokerClient.read().code(), "topic-max-length 10 still in force");
            routeOk(namesrvClient, 31);

            // saved again without changes: nothing to reload. An absence has no event to wait for: the counters are
            // watched through the debounce and a margin, and a reload among them fails at once.
            gw.write(gw.yaml("300ms", 0, ""));
            Await.holds("no reload after a save without changes", ConfigFileWatcher.DEFAULT_DEBOUNCE.plusMillis(500),
                () -> MeterReadings.of(gw.metrics).configReloads("applied") == 1
                    && MeterReadings.of(gw.metrics).configReloads("refused") == 1
                    && MeterReadings.of(gw.metrics).configReloads("unchanged") == 0);
            assertEquals(1, MeterReadings.of(gw.metrics).configReloads("applied"), 0.0);
            assertEquals(1, MeterReadings.of(gw.metrics).configReloads("refused"), 0.0);
            assertEquals(0, MeterReadings.of(gw.metrics).configReloads("unchanged"), 0.0);
        }
    }

    @Test
    void postReloadAnswersJsonAndActsOnOpenConnections() throws Exception {
        try (RawClient brokerClient = RawClient.connect(brokerPort());
             RawClient namesrvClient = RawClient.connect(gw.listen)) {
            sendOk(brokerClient, 1);
            routeOk(namesrvClient, 2);

            gw.write(gw.yaml("300ms", 10, ""));
            HttpResponse<String> r = gw.post("/reload");
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("application/json"));
            ReloadOutcome o = ReloadOutcome.fromJson(r.body());
            assertEquals(ReloadOutcome.Result.APPLIED, o.result(), r.body());
            assertEquals(List.of("upstream", "names, header encodings, downstream"), o.applied());
            assertEquals(List.of(), o.needsRestart());
            assertNull(o.error());
            assertTrue(r.body().contains("\"result\":\"applied\""), r.body());
            assertTrue(r.body().contains("\"needsRestart\":[]"), r.body());

            assertNewSettingsOn(brokerClient, namesrvClient, 10);

            // the same file again: unchanged
            r = gw.post("/reload");
            assertEquals(200, r.statusCode());
            assertEquals(ReloadOutcome.Result.UNCHANGED, ReloadOutcome.fromJson(r.body()).result(), r.body());
            assertEquals(1, MeterReadings.of(gw.metrics).configReloads("applied"), 0.0);
            assertEquals(1, MeterReadings.of(gw.metrics).configReloads("unchanged"), 0.0);
        }
    }

    @Test
    void anInvalidFileIsRefusedWithPathAndReasonAndTheRunningConfigurationStays() throws Exception {
        try (RawClient brokerClient = RawClient.connect(brokerPort())) {
            sendOk(brokerClient, 1);
            var before = gw.gateway.config();
            String[][] cases = {
                {gw.yaml("300ms", 0, ""), "names.topic-max-length: must be between 1 and 32767, was 0"},
                {gw.yaml("-1s", 10, ""), "upstream.request-timeout: expected a duration such as 30s"},
                {gw.yaml("300ms", 10, "logging:\n  levels:\n    io.rmqgw: LOUD\n"),
                    "logging.levels.io.rmqgw: must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, was 'LOUD'"},
                {gw.yaml("300ms", 10, "upstream2: {}\n"), "upstream2: unknown key (did you mean 'upstream'?)"},
                {"listen: [\n", "YAML syntax error at line"},
            };
            int refused = 0;
            for (String[] c : cases) {
                gw.write(c[0]);
                HttpResponse<String> r = gw.post("/reload");
                assertEquals(422, r.statusCode(), r.body());
                ReloadOutcome o = ReloadOutcome.fromJson(r.body());
                assertEquals(ReloadOutcome.Result.REFUSED, o.result());
                assertTrue(o.error().startsWith(c[1]), () -> "expected '" + c[1] + "', was '" + o.error() + "'");
                assertEquals(List.of(), o.applied());
                assertEquals(++refused, MeterReadings.of(gw.metrics).configReloads("refused"), 0.0);
                assertEquals(before, gw.gateway.config(), "the running configuration stays");
                sendOk(brokerClient, 100 + refused);
            }
            assertEquals(0, MeterReadings.of(gw.metrics).configReloads("applied"), 0.0);
        }
    }

    @Test
    void aListenChangeIsReportedAsNeedingARestartAndNothingMoves() throws Exception {
        int otherListen = FreePorts.port();
        String moved = gw.yaml("300ms", 127, "").replace("listen: 127.0.0.1:" + gw.listen + "\n",
            "listen: 127.0.0.1:" + otherListen + "\n");
        try (RawClient namesrvClient = RawClient.connect(gw.listen)) {
            routeOk(namesrvClient, 1);
            gw.write(moved);
            HttpResponse<String> r = gw.post("/reload");
            assertEquals(200, r.statusCode(), r.body());
            ReloadOutcome o = ReloadOutcome.fromJson(r.body());
            assertEquals(ReloadOutcome.Result.APPLIED, o.result());
            assertEquals(List.of("listen"), o.needsRestart());
            assertEquals(List.of("listen"), o.pendingRestart());
            assertEquals(List.of("upstream"), o.applied(), "the request timeout still applies");
            assertEquals(new HostPort("127.0.0.1", gw.listen), gw.gateway.config().listen());
            assertEquals(gw.listen, gw.gateway.listenAddress().getPort());
            try {
                RawClient.connect(otherListen).close();
                throw new AssertionError("nothing may listen on the new port before a restart");
            } catch (ConnectException expected) {
                // right
            }
            routeOk(namesrvClient, 2);
            // the next reload applies nothing and says so; listen is still pending, not newly changed
            ReloadOutcome again = ReloadOutcome.fromJson(gw.post("/reload").body());
            assertEquals(ReloadOutcome.Result.UNCHANGED, again.result());
            assertEquals(List.of(), again.applied());
            assertEquals(List.of(), again.needsRestart(), "said once");
            assertEquals(List.of("listen"), again.pendingRestart());
            assertEquals(1, MeterReadings.of(gw.metrics).configReloads("applied"), 0.0);
            assertEquals(1, MeterReadings.of(gw.metrics).configReloads("unchanged"), 0.0);

            // another new listen value is news again; the old one back is nothing pending at all
            int third = FreePorts.port();
            gw.write(gw.yaml("300ms", 127, "").replace("listen: 127.0.0.1:" + gw.listen + "\n",
                "listen: 127.0.0.1:" + third + "\n"));
            ReloadOutcome moved2 = ReloadOutcome.fromJson(gw.post("/reload").body());
            assertEquals(ReloadOutcome.Result.UNCHANGED, moved2.result(), "only listen changed: nothing applied");
            assertEquals(List.of("listen"), moved2.needsRestart());
            gw.write(gw.yaml("300ms", 127, ""));
            ReloadOutcome back = ReloadOutcome.fromJson(gw.post("/reload").body());
            assertEquals(List.of(), back.needsRestart());
            assertEquals(List.of(), back.pendingRestart());
        }
    }

    @Test
    void reloadEndpointNeedsPostAndAReloader() throws Exception {
        HttpResponse<String> r = gw.get("/reload");
        assertEquals(405, r.statusCode());
        assertEquals("POST", r.headers().firstValue("allow").orElseThrow());
        reloader.close();
        reloader = null;
        r = gw.post("/reload");
        assertEquals(503, r.statusCode(), r.body());
        assertEquals(ReloadOutcome.Result.REFUSED, ReloadOutcome.fromJson(r.body()).result());
        assertFalse(r.body().isBlank());
    }
}
