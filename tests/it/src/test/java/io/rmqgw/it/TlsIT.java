package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.TlsConfig;
import io.rmqgw.gateway.config.TlsMode;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.TestCerts;
import io.rmqgw.testing.TestCerts.Cert;
import io.rmqgw.testing.UniqueNames;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * TLS on the gateway's client listeners with real clients in their own TLS mode ({@code -Dtls.enable=true},
 * rocketmq-remoting's TlsHelper: TLS on every connection, name server and brokers alike, any server
 * certificate trusted by default) producing and consuming through the gateway to the real 5.4.0 broker.
 * An enforcing gateway proves the clients really speak TLS; a permissive one serves plain clients too;
 * an enforcing one refuses them with a counted reason. The certificate is a committed self-signed one.
 */
@RocketMqCluster
class TlsIT {

    static ClusterUnderTest shared;
    static GatewayFixture permissive;
    static GatewayFixture enforcing;
    static Path cert;
    static Path key;

    @BeforeAll
    static void setUp(ClusterUnderTest cluster) throws Exception {
        shared = cluster;
        Path dir = cluster.dir().resolve("tls-it");
        cert = dir.resolve("gateway.crt");
        key = dir.resolve("gateway.key");
        TestCerts.write(Cert.A, cert, key);
        permissive = cluster.closeAfterClass(GatewayFixture.on(cluster).configure(c -> c.withTls(tls(TlsMode.PERMISSIVE)))
            .start());
        enforcing = cluster.closeAfterClass(GatewayFixture.on(cluster).configure(c -> c.withTls(tls(TlsMode.ENFORCING)))
            .start());
    }

    private static TlsConfig tls(TlsMode mode) {
        return new TlsConfig(true, cert.toString(), key.toString(), null, mode, Duration.ofMillis(200));
    }

    private static ScenarioRunner.Spec tlsClient(ClientVersion version, String scenario, GatewayFixture gateway,
                                                 String topic) {
        return ScenarioRunner.scenario(version, scenario).namesrv(gateway.namesrvAddress()).topic(topic)
            .systemProperty("tls.enable", "true").timeout(Duration.ofSeconds(90))
            // the first send of a fresh JVM pays for TLS set-up and two handshakes besides the topic's
            // creation: past the default 5 s on a loaded 2-core machine
            .arg("send-timeout-ms", 20_000);
    }

    @ParameterizedTest
    @EnumSource(ClientVersion.class)
    void tlsClientsProduceAndConsumeThroughAnEnforcingGateway(ClientVersion version) throws Exception {
        String topic = UniqueNames.topic("tls_" + version.name());
        ScenarioResult sent = tlsClient(version, "sync-send", enforcing, topic).count(20).run().assertOk();
        ScenarioResult received = tlsClient(version, "push-consume", enforcing, topic).count(20).run().assertOk();
        assertEquals(20, sent.keys("sent").size());
        assertEquals(new HashSet<>(sent.keys("sent")), new HashSet<>(received.keys("received")), received::describe);
        assertTrue(received.remotePorts().stream().allMatch(enforcing.clientPorts()::contains),
            "every connection went to the gateway: " + received.remotePorts());
    }

    @Test
    void permissiveServesTlsAndPlainClientsSideBySide() throws Exception {
        String topic = UniqueNames.topic("tls_mixed");
        ScenarioResult secure = tlsClient(ClientVersion.V5_4_0, "sync-send", permissive, topic).count(10)
            .keyPrefix("tls").run().assertOk();
        ScenarioResult plain = ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
            .namesrv(permissive.namesrvAddress()).topic(topic).count(10).keyPrefix("plain")
            .timeout(Duration.ofSeconds(90)).run().assertOk();
        ScenarioResult received = ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume")
            .namesrv(permissive.namesrvAddress()).topic(topic).count(20).timeout(Duration.ofSeconds(90)).run()
            .assertOk();
        HashSet<String> sent = new HashSet<>(secure.keys("sent"));
        sent.addAll(plain.keys("sent"));
        assertEquals(sent, new HashSet<>(received.keys("received")));
        assertEquals(0, MeterReadings.of(permissive.metrics()).connectionsClosed(GatewayMetrics.NAMESRV, CloseReason.TLS_REQUIRED));
    }

    @Test
    void aPlainClientIsRefusedByAnEnforcingGatewayWithACountedReason() throws Exception {
        double before = MeterReadings.of(enforcing.metrics()).connectionsClosed(GatewayMetrics.NAMESRV, CloseReason.TLS_REQUIRED);
        ScenarioResult r = ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send")
            .namesrv(enforcing.namesrvAddress()).topic(UniqueNames.topic("tls_plain")).count(1).arg("retries", 0)
            .arg("send-timeout-ms", 3000).timeout(Duration.ofSeconds(30)).run();
        assertFalse(r.ok(), r::describe);
        assertTrue(r.lines("sent").isEmpty(), r::describe);
        assertTrue(MeterReadings.of(enforcing.metrics()).connectionsClosed(GatewayMetrics.NAMESRV, CloseReason.TLS_REQUIRED) > before,
            "counted as tls_required");
    }

    @Test
    void aRenewedCertificateServesNewTlsClientsWithoutARestart() throws Exception {
        Path dir = shared.dir().resolve("tls-it-renew");
        Path renewCert = dir.resolve("gateway.crt");
        Path renewKey = dir.resolve("gateway.key");
        TestCerts.write(Cert.A, renewCert, renewKey);
        try (GatewayFixture gateway = GatewayFixture.on(shared).configure(c -> c.withTls(new TlsConfig(true,
            renewCert.toString(), renewKey.toString(), null, TlsMode.ENFORCING, Duration.ofMillis(200)))).start()) {
            assertEquals(Cert.A.commonName(), TestCerts.presentedCommonName(gateway.listenPort()));
            TestCerts.write(Cert.B, renewCert, renewKey);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (MeterReadings.of(gateway.metrics()).tlsReloads("applied") < 1 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(Cert.B.commonName(), TestCerts.presentedCommonName(gateway.listenPort()));
            String topic = UniqueNames.topic("tls_renewed");
            tlsClient(ClientVersion.V5_4_0, "sync-send", gateway, topic).count(5).run().assertOk();
        }
    }
}
