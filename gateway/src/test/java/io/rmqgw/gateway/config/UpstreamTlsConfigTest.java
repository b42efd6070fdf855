package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.testing.TestCerts;
import io.rmqgw.testing.TestCerts.Cert;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UpstreamTlsConfigTest {

    private static final String NS = "upstream:\n  namesrv: [127.0.0.1:9876]\n";

    @Test
    void offByDefaultAndWrittenBack(@TempDir Path dir) {
        GatewayConfig plain = ConfigLoader.parse(NS);
        assertFalse(plain.upstream().tls().enabled());
        Path cert = dir.resolve("ca.crt");
        TestCerts.write(Cert.A, cert, dir.resolve("ca.key"));
        GatewayConfig c = ConfigLoader.parse(NS + "  tls:\n    enabled: true\n    trust-cert: " + cert + "\n");
        assertTrue(c.upstream().tls().enabled());
        assertEquals(cert.toString(), c.upstream().tls().trustCert());
        assertEquals(c, ConfigLoader.parse(ConfigLoader.toYaml(c)));
        assertNull(ConfigLoader.parse(NS + "  tls:\n    enabled: true\n").upstream().tls().trustCert(),
            "no trust-cert: any server certificate, as RocketMQ clients");
    }

    @Test
    void aMissingOrNonPemTrustFileIsRefusedByName(@TempDir Path dir) throws Exception {
        ConfigException missing = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
            NS + "  tls:\n    enabled: true\n    trust-cert: " + dir.resolve("nope.crt") + "\n"));
        assertTrue(missing.getMessage().contains("upstream.tls.trust-cert") && missing.getMessage().contains("no such file"),
            missing.getMessage());
        Path junk = Files.writeString(dir.resolve("junk.crt"), "not a certificate\n");
        ConfigException notPem = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
            NS + "  tls:\n    enabled: true\n    trust-cert: " + junk + "\n"));
        assertTrue(notPem.getMessage().contains("upstream.tls.trust-cert"), notPem.getMessage());
    }

    @Test
    void aClientCertificateIsReadWrittenBackAndItsKeyMustMatch(@TempDir Path dir) {
        Path cert = dir.resolve("gw.crt");
        Path key = dir.resolve("gw.key");
        TestCerts.write(Cert.B, cert, key);
        GatewayConfig c = ConfigLoader.parse(NS + "  tls:\n    enabled: true\n    cert-file: " + cert + "\n    key-file: "
            + key + "\n");
        assertEquals(cert.toString(), c.upstream().tls().certFile());
        assertEquals(key.toString(), c.upstream().tls().keyFile());
        assertEquals(c, ConfigLoader.parse(ConfigLoader.toYaml(c)));

        Path otherKey = dir.resolve("a.key");
        TestCerts.write(Cert.A, dir.resolve("a.crt"), otherKey);
        ConfigException mismatch = assertThrows(ConfigException.class, () -> ConfigLoader.parse(NS
            + "  tls:\n    enabled: true\n    cert-file: " + cert + "\n    key-file: " + otherKey + "\n"));
        assertTrue(mismatch.getMessage().contains("upstream.tls.key-file")
            && mismatch.getMessage().contains("does not go with " + cert), mismatch.getMessage());
    }

    @Test
    void aClientCertificateNeedsBothFilesAndTheyMustExist(@TempDir Path dir) {
        Path cert = dir.resolve("gw.crt");
        Path key = dir.resolve("gw.key");
        TestCerts.write(Cert.B, cert, key);
        ConfigException noKey = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
            NS + "  tls:\n    enabled: true\n    cert-file: " + cert + "\n"));
        assertTrue(noKey.getMessage().contains("upstream.tls.key-file") && noKey.getMessage().contains("is required"),
            noKey.getMessage());
        ConfigException noCert = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
            NS + "  tls:\n    enabled: true\n    key-file: " + key + "\n"));
        assertTrue(noCert.getMessage().contains("upstream.tls.cert-file"), noCert.getMessage());
        ConfigException missing = assertThrows(ConfigException.class, () -> ConfigLoader.parse(NS
            + "  tls:\n    enabled: true\n    cert-file: " + dir.resolve("nope.crt") + "\n    key-file: " + key + "\n"));
        assertTrue(missing.getMessage().contains("upstream.tls.cert-file") && missing.getMessage().contains("no such file"),
            missing.getMessage());
    }

    @Test
    void thePasswordIsNotShownByToString(@TempDir Path dir) {
        Path cert = dir.resolve("gw.crt");
        Path key = dir.resolve("gw.key");
        TestCerts.write(Cert.B, cert, key);
        UpstreamTlsConfig c = new UpstreamTlsConfig(true, null, cert.toString(), key.toString(), null);
        assertTrue(c.toString().contains("keyPassword=none"), c::toString);
        assertFalse(new UpstreamTlsConfig(false, null, null, null, "s3cret").toString().contains("s3cret"));
    }
}
