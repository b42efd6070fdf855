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
}
