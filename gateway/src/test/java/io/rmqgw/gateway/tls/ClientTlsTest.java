package io.rmqgw.gateway.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.TlsConfig;
import io.rmqgw.gateway.config.TlsMode;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.TestCerts;
import io.rmqgw.testing.TestCerts.Cert;
import io.rmqgw.testing.Wire;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the client listeners against scripted upstreams: TLS and plain clients in permissive mode, plain
 * ones refused and counted in enforcing mode, failed handshakes counted, certificates replaced without a
 * restart (file change and reload) while open connections keep working.
 */
class ClientTlsTest {

    @TempDir
    Path dir;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;
    private Path cert;
    private Path key;

    @BeforeEach
    void certificate() throws Exception {
        cert = dir.resolve("gateway.crt");
        key = dir.resolve("gateway.key");
        TestCerts.write(Cert.A, cert, key);
    }

    private void start(TlsConfig tls) throws Exception {
        // a request timeout long enough for the start's cluster discovery on a loaded machine
        ScriptedCluster cluster = ScriptedCluster.options().broker(() -> ScriptedPeer.broker(code -> false))
            .gateway(settings -> settings.requestTimeout(Duration.ofSeconds(5)).tls(tls)).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    private TlsConfig tls(TlsMode mode) {
        return new TlsConfig(true, cert.toString(), key.toString(), null, mode, Duration.ofMillis(200));
    }

    private static void roundTrip(RawClient client, int opaque) throws Exception {
        client.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(opaque).bytes());
        assertEquals(opaque, client.read().opaque());
    }

    private int brokerPort() {
        // the start's one discovery may time out on a heavily loaded machine: ask again, as the gateway would
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!gateway.gateway().brokerListeners().containsKey(broker.address()) && System.nanoTime() < deadline) {
            gateway.gateway().discoverCluster();
        }
        return gateway.brokerPort(broker.address());
    }

    @Test
    void permissiveServesTlsAndPlainClientsOnEveryListener() throws Exception {
        start(tls(TlsMode.PERMISSIVE));
        for (int port : List.of(gateway.port(), brokerPort())) {
            try (RawClient secure = RawClient.connectTls(port); RawClient plain = RawClient.connect(port)) {
                roundTrip(secure, 1);
                roundTrip(plain, 2);
                roundTrip(secure, 3);
            }
            assertEquals(Cert.A.commonName(), TestCerts.presentedCommonName(port));
        }
        assertEquals(0, MeterReadings.of(gateway.metrics()).connectionsClosed("broker", CloseReason.TLS_REQUIRED));
    }

    @Test
    void enforcingClosesPlainClientsWithACountedReason() throws Exception {
        start(tls(TlsMode.ENFORCING));
        try (RawClient plain = RawClient.connect(brokerPort())) {
            plain.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(1).bytes());
            plain.assertClosedBy(Duration.ofSeconds(5));
        }
        try (RawClient plain = RawClient.connect(gateway.port())) {
            plain.send(Wire.request(RequestCode.GET_ROUTEINFO_BY_TOPIC).opaque(1).ext("topic", "T").bytes());
            plain.assertClosedBy(Duration.ofSeconds(5));
        }
        TestGateway.await(() -> MeterReadings.of(gateway.metrics()).connectionsClosed("broker", CloseReason.TLS_REQUIRED) == 1
            && MeterReadings.of(gateway.metrics()).connectionsClosed("namesrv", CloseReason.TLS_REQUIRED) == 1,
            Duration.ofSeconds(5), "both refusals counted");
        assertEquals(0, broker.connectionCount(), "a refused client never reaches the broker");
        try (RawClient secure = RawClient.connectTls(brokerPort())) {
            roundTrip(secure, 5);
        }
    }

    @Test
    void aBrokenHandshakeIsClosedAndCounted() throws Exception {
        start(tls(TlsMode.PERMISSIVE));
        try (Socket garbage = new Socket("127.0.0.1", brokerPort())) {
            garbage.setSoTimeout(5_000);
            // a TLS record header (handshake, TLS 1.0, 5 bytes) followed by nonsense
            garbage.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x00, 0x05, 9, 9, 9, 9, 9});
            byte[] answer = garbage.getInputStream().readAllBytes(); // until the gateway closes
            assertTrue(answer.length == 0 || answer[0] == 0x15, "nothing, or a TLS alert record, then the close");
        }
        TestGateway.await(() -> MeterReadings.of(gateway.metrics()).connectionsClosed("broker", CloseReason.TLS_HANDSHAKE_FAILED) == 1,
            Duration.ofSeconds(5), "handshake failure counted");
        assertEquals(0, MeterReadings.of(gateway.metrics()).connectionsClosed("broker", CloseReason.INTERNAL_ERROR));
    }

    @Test
    void aChangedCertificateFileReachesNewConnectionsWhileOpenOnesKeepWorking() throws Exception {
        start(tls(TlsMode.ENFORCING));
        try (RawClient open = RawClient.connectTls(brokerPort())) {
            roundTrip(open, 1);
            TestCerts.write(Cert.B, cert, key);
            TestGateway.await(() -> MeterReadings.of(gateway.metrics()).tlsReloads("applied") >= 1, Duration.ofSeconds(10),
                "the new files picked up");
            assertEquals(Cert.B.commonName(), TestCerts.presentedCommonName(brokerPort()));
            assertEquals(Cert.B.commonName(), TestCerts.presentedCommonName(gateway.port()));
            roundTrip(open, 2);
        }
        // a broken file is refused by the check; the certificate in force stays
        Files.writeString(key, "not a key");
        TestGateway.await(() -> MeterReadings.of(gateway.metrics()).tlsReloads("failed") >= 1, Duration.ofSeconds(10),
            "the broken file noticed");
        assertEquals(Cert.B.commonName(), TestCerts.presentedCommonName(brokerPort()));
    }

    @Test
    void aCertificateRenewedFileByFileIsTakenOnlyOnceItsKeyMatches() throws Exception {
        start(tls(TlsMode.ENFORCING));
        Path certB = dir.resolve("b.crt");
        Path keyB = dir.resolve("b.key");
        TestCerts.write(Cert.B, certB, keyB);
        // the new certificate first, beside the old key: refused, the old pair stays in force
        Files.copy(certB, cert, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        TestGateway.await(() -> MeterReadings.of(gateway.metrics()).tlsReloads("failed") >= 1, Duration.ofSeconds(10),
            "the mismatched pair noticed");
        assertEquals(Cert.A.commonName(), TestCerts.presentedCommonName(brokerPort()), "handshakes still succeed");
        assertEquals(0, MeterReadings.of(gateway.metrics()).tlsReloads("applied"));
        // then its key: taken
        Files.copy(keyB, key, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        TestGateway.await(() -> MeterReadings.of(gateway.metrics()).tlsReloads("applied") == 1, Duration.ofSeconds(10), "the new pair");
        assertEquals(Cert.B.commonName(), TestCerts.presentedCommonName(brokerPort()));

        ConfigException refused = assertThrows(ConfigException.class, () -> gateway.gateway().reload(
            gateway.gateway().config().withTls(new TlsConfig(true, cert.toString(), dir.resolve("x.key").toString(),
                null, TlsMode.ENFORCING, null))), "a reload naming a missing key");
        assertEquals("tls.key-file", refused.path());
        Path keyA = dir.resolve("a.key");
        TestCerts.write(Cert.A, dir.resolve("a.crt"), keyA);
        ConfigException mismatched = assertThrows(ConfigException.class, () -> gateway.gateway().reload(
            gateway.gateway().config().withTls(new TlsConfig(true, cert.toString(), keyA.toString(), null,
                TlsMode.ENFORCING, null))));
        assertEquals("tls.key-file", mismatched.path());
        assertTrue(mismatched.reason().contains("does not belong to the certificate"), mismatched.getMessage());
    }

    @Test
    void aReloadReadsTheFilesAgainAndCanTurnTlsOffOrRefuseBadFiles() throws Exception {
        start(new TlsConfig(true, cert.toString(), key.toString(), null, TlsMode.ENFORCING, Duration.ZERO));
        TestCerts.write(Cert.B, cert, key);
        var config = gateway.gateway().config();
        assertTrue(gateway.gateway().reload(config).applied().contains("tls"), "same settings, new file contents");
        assertEquals(Cert.B.commonName(), TestCerts.presentedCommonName(brokerPort()));

        Path badKey = dir.resolve("bad.key");
        Files.writeString(badKey, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
        ConfigException refused = assertThrows(ConfigException.class, () -> gateway.gateway().reload(
            config.withTls(new TlsConfig(true, cert.toString(), badKey.toString(), null, TlsMode.ENFORCING, null))));
        assertEquals("tls.key-file", refused.path(), refused.getMessage());
        assertEquals(Cert.B.commonName(), TestCerts.presentedCommonName(brokerPort()), "still in force");

        gateway.gateway().reload(config.withTls(TlsConfig.DISABLED));
        try (RawClient plain = RawClient.connect(brokerPort())) {
            roundTrip(plain, 4);
        }
    }
}
