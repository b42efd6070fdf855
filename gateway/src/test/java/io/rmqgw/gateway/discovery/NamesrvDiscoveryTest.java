package io.rmqgw.gateway.discovery;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import io.rmqgw.gateway.admin.ReloadOutcome;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.gateway.reload.YamlGateway;
import io.rmqgw.gateway.runtime.ConfigReloader;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Name-server discovery over HTTP against WireMock standing in for the address server, with scripted name
 * servers behind a real gateway: the list served is the one client requests reach; a changed list reaches new
 * connections (open ones keep theirs); HTTP 500, a timeout, an empty or a malformed body keep the last good
 * list and are counted; a gateway that started before the address server answered becomes ready once it does;
 * reloads keep the discovered list and take a new URL at once.
 */
@Timeout(90)
class NamesrvDiscoveryTest {

    private static final String PATH = "/rocketmq/nsaddr";
    private static final Duration INTERVAL = Duration.ofMillis(200);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(400);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private WireMockServer addressServer;
    private ScriptedPeer broker;
    private ScriptedPeer namesrvA;
    private ScriptedPeer namesrvB;
    private TestGateway gateway;
    private YamlGateway yamlGateway;
    private NamesrvDiscovery discovery;
    private ConfigReloader reloader;
    private final AtomicInteger opaque = new AtomicInteger(1);

    @BeforeEach
    void start() throws Exception {
        addressServer = new WireMockServer(WireMockConfiguration.options().bindAddress("127.0.0.1").dynamicPort()
            .containerThreads(10).asynchronousResponseEnabled(false));
        addressServer.start();
        broker = ScriptedPeer.start(ScriptedPeer.Script.ECHO);
        Map<String, Map<String, String>> routes = Map.of("TopicA", Map.of("broker-a", broker.address()));
        namesrvA = ScriptedPeer.start(Routes.nameServer(routes));
        namesrvA.clusterInfo(ScriptedPeer.clusterInfoNaming("broker-a", broker.address()));
        namesrvB = ScriptedPeer.start(Routes.nameServer(routes));
        namesrvB.clusterInfo(ScriptedPeer.clusterInfoNaming("broker-a", broker.address()));
    }

    @AfterEach
    void stop() {
        if (reloader != null) {
            reloader.close();
        }
        if (discovery != null) {
            discovery.close();
        }
        if (gateway != null) {
            gateway.close();
        }
        if (yamlGateway != null) {
            yamlGateway.close();
        }
        namesrvA.close();
        namesrvB.close();
        broker.close();
        addressServer.stop();
    }

    private String url(String path) {
        return "http://127.0.0.1:" + addressServer.port() + path;
    }

    private void serve(String path, ResponseDefinitionBuilder response) {
        addressServer.resetMappings();
        addressServer.stubFor(get(urlPathEqualTo(path)).willReturn(response));
    }

    private void serve(String body) {
        serve(PATH, aResponse().withStatus(200).withHeader("Content-Type", "text/plain").withBody(body));
    }

    /** A route request on a connection; returns the name server that received it. */
    private ScriptedPeer routeRequest(RawClient client) throws Exception {
        int id = opaque.getAndIncrement();
        client.send(Routes.request("TopicA", 453).opaque(id).bytes());
        Wire.Frame answer = client.read();
        assertEquals(id, answer.opaque());
        assertEquals(Wire.SUCCESS, answer.code(), answer.toString());
        for (ScriptedPeer ns : List.of(namesrvA, namesrvB)) {
            for (ScriptedPeer.Received r : ns.drainReceived()) {
                if (r.frame().opaque() == id) {
                    return ns;
                }
            }
        }
        throw new AssertionError("no name server received route request " + id);
    }

    private ScriptedPeer viaNewConnection(int port) throws Exception {
        try (RawClient c = RawClient.connect(port)) {
            return routeRequest(c);
        }
    }

    private List<String> namesrvInForce(io.rmqgw.gateway.Gateway g) {
        return g.config().upstream().namesrv().stream().map(HostPort::toString).toList();
    }

    private static UpstreamConfig withUrl(UpstreamConfig u, String url) {
        return new UpstreamConfig(u.namesrv(), u.connectTimeout(), u.requestTimeout(), u.longPollTimeout(),
            u.headerEncoding(), url, INTERVAL, POLL_TIMEOUT);
    }

    @Test
    void theServedListIsUsedChangesReachNewConnectionsAndErrorsKeepTheLastGoodList() throws Exception {
        // the static list names A; the address server names B: once it answered, the URL wins
        gateway = TestGateway.builder().namesrv(namesrvA.address()).requestTimeout(Duration.ofSeconds(2)).start();
        var metrics = gateway.metrics();
        discovery = new NamesrvDiscovery(metrics);
        serve(namesrvB.address());
        List<HostPort> initial = discovery.configure(withUrl(gateway.gateway().config().upstream(), url(PATH)));
        assertEquals(List.of(HostPort.parse("x", namesrvB.address())), initial);
        assertEquals(1, MeterReadings.of(metrics).namesrvDiscoveries(NamesrvDiscovery.CHANGED), 0.0);
        discovery.start(gateway.gateway().namesrvUpdater());
        assertEquals(List.of(namesrvB.address()), namesrvInForce(gateway.gateway()));

        try (RawClient onB = RawClient.connect(gateway.port())) {
            assertEquals(namesrvB, routeRequest(onB), "a client request reaches the name server the URL names");
            assertEquals(1, MeterReadings.of(metrics).namesrvHealth(namesrvB.address()));

            // the list changes: new connections use the new name server, the open one keeps its own
            serve(namesrvA.address());
            TestGateway.await(() -> namesrvInForce(gateway.gateway()).equals(List.of(namesrvA.address())), WAIT,
                "the new list in force");
            assertEquals(namesrvA, viaNewConnection(gateway.port()));
            assertEquals(namesrvB, routeRequest(onB), "an open connection is not dropped");
            assertEquals(-1, MeterReadings.of(metrics).namesrvHealth(namesrvB.address()), "the removed name server's gauge is gone");
            TestGateway.await(() -> MeterReadings.of(metrics).namesrvDiscoveries(NamesrvDiscovery.UNCHANGED) >= 1, WAIT,
                "an unchanged poll");

            // every kind of failure keeps A and is counted
            record Failure(String label, ResponseDefinitionBuilder response) {
            }
            List<Failure> failures = List.of(
                new Failure(AddressServerClient.HTTP_ERROR, aResponse().withStatus(500).withBody("oops")),
                new Failure(AddressServerClient.HTTP_ERROR, aResponse().withStatus(404)),
                new Failure(AddressServerClient.TIMEOUT, aResponse().withStatus(200).withBody(namesrvB.address())
                    .withFixedDelay((int) POLL_TIMEOUT.toMillis() * 3)),
                new Failure(AddressServerClient.EMPTY, aResponse().withStatus(200).withBody("")),
                new Failure(AddressServerClient.EMPTY, aResponse().withStatus(200).withBody(" \n")),
                new Failure(AddressServerClient.MALFORMED, aResponse().withStatus(200).withBody("not-an-address")),
                new Failure(AddressServerClient.MALFORMED, aResponse().withStatus(200).withBody(namesrvB.address() + ";b:x")));
            for (Failure f : failures) {
                double before = MeterReadings.of(metrics).namesrvDiscoveries(f.label());
                serve(PATH, f.response());
                TestGateway.await(() -> MeterReadings.of(metrics).namesrvDiscoveries(f.label()) > before, WAIT, f.label() + " counted");
                assertEquals(List.of(namesrvA.address()), namesrvInForce(gateway.gateway()), f.label() + " keeps the list");
                assertEquals(List.of(HostPort.parse("x", namesrvA.address())), discovery.lastGood());
                assertEquals(namesrvA, viaNewConnection(gateway.port()), "after " + f.label());
            }
            assertEquals(List.of(), addressServer.findAllUnmatchedRequests(), "every poll asked " + PATH);
            assertTrue(addressServer.countRequestsMatching(getRequestedFor(urlPathEqualTo(PATH)).build()).getCount() >= 10);

            // and it recovers: a good answer again, two name servers this time
            serve(namesrvB.address() + ";" + namesrvA.address());
            TestGateway.await(() -> namesrvInForce(gateway.gateway()).equals(List.of(namesrvB.address(), namesrvA.address())),
                WAIT, "the list after recovery");
            assertEquals(namesrvB, viaNewConnection(gateway.port()), "the first of the list is tried first");
        }
    }

    @Test
    void aGatewayStartedBeforeTheAddressServerAnsweredBecomesReadyWhenItDoes() throws Exception {
        serve(PATH, aResponse().withStatus(503));
        yamlGateway = new YamlGateway(dir, "[]");
        yamlGateway.upstreamExtra = "  namesrv-address-url: " + url(PATH) + "\n  namesrv-address-poll-interval: 200ms\n"
            + "  namesrv-address-timeout: 400ms\n";
        String yaml = yamlGateway.yaml("2s", 127, "");
        yamlGateway.write(yaml);
        GatewayConfig config = ConfigLoader.load(yamlGateway.file);
        discovery = new NamesrvDiscovery(yamlGateway.metrics);
        assertEquals(List.of(), discovery.configure(config.upstream()), "nothing answered, no static list");
        yamlGateway.start(yaml);
        var g = yamlGateway.gateway;
        discovery.start(g.namesrvUpdater());
        assertFalse(g.readiness().isReady(), g.readiness().toString());
        assertEquals(503, yamlGateway.get("/health/ready").statusCode());

        serve(namesrvA.address());
        TestGateway.await(() -> g.readiness().isReady(), WAIT, "ready once the address server named a name server");
        assertTrue(g.brokerListeners().containsKey(broker.address()), "brokers got listeners: " + g.brokerListeners());
        assertEquals(200, yamlGateway.get("/health/ready").statusCode());
        assertEquals(namesrvA, viaNewConnection(yamlGateway.listen));
        assertTrue(MeterReadings.of(yamlGateway.metrics).namesrvDiscoveries(AddressServerClient.HTTP_ERROR) >= 1);
    }

    @Test
    void reloadsKeepTheDiscoveredListAndTakeANewUrlAtOnce() throws Exception {
        addressServer.stubFor(get(urlPathEqualTo("/one")).willReturn(aResponse().withBody(namesrvB.address())));
        addressServer.stubFor(get(urlPathEqualTo("/two")).willReturn(
            aResponse().withBody(namesrvA.address() + ";" + namesrvB.address())));
        yamlGateway = new YamlGateway(dir, namesrvA.address());
        // a generous fetch timeout: the first fetch is the cold JVM's, and this test is about reloads
        yamlGateway.upstreamExtra = "  namesrv-address-url: " + url("/one") + "\n  namesrv-address-poll-interval: 1m\n"
            + "  namesrv-address-timeout: 15s\n";
        yamlGateway.write(yamlGateway.yaml("5s", 127, ""));
        GatewayConfig config = ConfigLoader.load(yamlGateway.file);
        discovery = new NamesrvDiscovery(yamlGateway.metrics);
        // as rmqgw start does: ask the URL first, start with what it named
        List<HostPort> initial = discovery.configure(config.upstream());
        yamlGateway.gateway = io.rmqgw.gateway.Gateway.start(config.withNamesrv(initial), yamlGateway.metrics);
        var g = yamlGateway.gateway;
        discovery.start(g.namesrvUpdater());
        reloader = ConfigReloader.builder(g, yamlGateway.metrics, () -> ConfigLoader.load(yamlGateway.file))
            .discovery(discovery).build();
        assertEquals(List.of(namesrvB.address()), namesrvInForce(g));

        // the same file: unchanged (the discovered list is not mistaken for a change of upstream.namesrv)
        assertEquals(ReloadOutcome.Result.UNCHANGED, reloader.reload("test").result());
        assertEquals(List.of(namesrvB.address()), namesrvInForce(g));

        // another timeout: applied, the discovered list stays
        yamlGateway.write(yamlGateway.yaml("3s", 127, ""));
        ReloadOutcome o = reloader.reload("test");
        assertEquals(List.of("upstream"), o.applied());
        assertEquals(List.of(namesrvB.address()), namesrvInForce(g), "the URL's list, not upstream.namesrv");
        assertEquals(Duration.ofSeconds(3), g.config().upstream().requestTimeout());

        // another URL: asked during the reload, its list in force when the reload answers
        yamlGateway.upstreamExtra = "  namesrv-address-url: " + url("/two") + "\n  namesrv-address-poll-interval: 1m\n"
            + "  namesrv-address-timeout: 15s\n";
        yamlGateway.write(yamlGateway.yaml("3s", 127, ""));
        o = reloader.reload("test");
        assertEquals(ReloadOutcome.Result.APPLIED, o.result());
        assertEquals(List.of(namesrvA.address(), namesrvB.address()), namesrvInForce(g));
        assertEquals(namesrvA, viaNewConnection(yamlGateway.listen));

        // no URL any more: the static list
        yamlGateway.upstreamExtra = "";
        yamlGateway.write(yamlGateway.yaml("3s", 127, ""));
        o = reloader.reload("test");
        assertEquals(ReloadOutcome.Result.APPLIED, o.result());
        assertEquals(List.of(namesrvA.address()), namesrvInForce(g));
        assertEquals(null, discovery.url());
    }
}
