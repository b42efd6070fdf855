package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.testing.TestCerts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The {@code tls} and {@code rate-limits} keys: defaults, binding, refusals with their paths, round trips. */
class SecurityConfigTest {

    private static final String NS = "upstream:\n  namesrv: a:9876\n";

    @TempDir
    Path dir;
    private Path cert;
    private Path key;

    @BeforeEach
    void certs() {
        cert = dir.resolve("c.pem");
        key = dir.resolve("k.pem");
        TestCerts.write(TestCerts.Cert.A, cert, key);
    }

    @Test
    void offAndUnlimitedByDefault() {
        GatewayConfig c = ConfigLoader.parse(NS);
        assertFalse(c.tls().enabled());
        assertEquals(TlsMode.PERMISSIVE, c.tls().mode());
        assertEquals(Duration.ofSeconds(10), c.tls().fileCheckInterval());
        assertTrue(c.rateLimits().isEmpty());
    }

    @Test
    void bindsAndRoundTrips() {
        GatewayConfig c = ConfigLoader.parse(NS + "tls:\n  enabled: true\n  cert-file: " + cert + "\n  key-file: " + key
            + "\n  mode: enforcing\n  file-check-interval: 2s\n"
            + "rate-limits:\n  per-topic:\n    - {topic: Orders, sends-per-second: 100, burst: 300}\n"
            + "    - {topic: '*', sends-per-second: 1000}\n"
            + "  per-client:\n    - {client-id: '*', sends-per-second: 50}\n");
        assertEquals(new TlsConfig(true, cert.toString(), key.toString(), null, TlsMode.ENFORCING, Duration.ofSeconds(2)),
            c.tls());
        assertEquals(List.of(new RateLimitConfig.TopicLimit("Orders", 100, 300),
            new RateLimitConfig.TopicLimit("*", 1000, 1000)), c.rateLimits().perTopic());
        assertEquals(List.of(new RateLimitConfig.ClientLimit("*", 50, 50)), c.rateLimits().perClient());
        String yaml = ConfigLoader.toYaml(c);
        assertEquals(c, ConfigLoader.parse(yaml), yaml);
    }

    @Test
    void pullAndRequestLimitsBindAndRoundTrip() {
        GatewayConfig c = ConfigLoader.parse(NS + "rate-limits:\n  per-topic:\n"
            + "    - {topic: Orders, pulls-per-second: 20, pull-burst: 40}\n"
            + "    - {topic: '*', sends-per-second: 1000, pulls-per-second: 500}\n"
            + "  per-client:\n    - {client-id: '*', requests-per-second: 300}\n"
            + "    - {client-id: 'a@b', sends-per-second: 5, requests-per-second: 50, request-burst: 60}\n");
        assertEquals(List.of(new RateLimitConfig.TopicLimit("Orders", null, null, 20, 40),
            new RateLimitConfig.TopicLimit("*", 1000, 1000, 500, 500)), c.rateLimits().perTopic());
        assertEquals(List.of(new RateLimitConfig.ClientLimit("*", null, null, 300, 300),
            new RateLimitConfig.ClientLimit("a@b", 5, 5, 50, 60)), c.rateLimits().perClient());
        String yaml = ConfigLoader.toYaml(c);
        assertFalse(yaml.contains("null"), yaml);
        assertEquals(c, ConfigLoader.parse(yaml), yaml);
    }

    @Test
    void addressLimitsAndTheRefusalDelayBindAndRoundTrip() {
        GatewayConfig c = ConfigLoader.parse(NS + "rate-limits:\n  refusal-delay: 250ms\n  per-address:\n"
            + "    - {address: '*', requests-per-second: 300, sends-per-second: 100}\n"
            + "    - {address: 10.0.0.0/8, requests-per-second: 1000, request-burst: 2000}\n"
            + "    - {address: '::1', sends-per-second: 5, burst: 7}\n");
        assertEquals(List.of(new RateLimitConfig.AddressLimit("*", 100, 100, 300, 300),
            new RateLimitConfig.AddressLimit("10.0.0.0/8", null, null, 1000, 2000),
            new RateLimitConfig.AddressLimit("::1", 5, 7, null, null)), c.rateLimits().perAddress());
        assertEquals(Duration.ofMillis(250), c.rateLimits().refusalDelay());
        String yaml = ConfigLoader.toYaml(c);
        assertFalse(yaml.contains("null"), yaml);
        assertEquals(c, ConfigLoader.parse(yaml), yaml);
        assertEquals(RateLimitConfig.DEFAULT_REFUSAL_DELAY, ConfigLoader.parse(NS).rateLimits().refusalDelay());
    }

    @Test
    void thePasswordStaysOutOfToString() {
        TlsConfig tls = new TlsConfig(true, cert.toString(), key.toString(), "s3cret", null, null);
        assertFalse(tls.toString().contains("s3cret"), tls.toString());
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @CsvSource(delimiter = '|', value = {
        "tls:\\n  enabled: true\\n  key-file: KEY\\n | tls.cert-file | is required when tls.enabled is true",
        "tls:\\n  enabled: true\\n  cert-file: /no/such.pem\\n  key-file: KEY\\n | tls.cert-file | no such file: /no/such.pem",
        "tls:\\n  enabled: true\\n  cert-file: CERT\\n  key-file: KEY\\n  mode: strict\\n | tls.mode"
            + " | must be one of permissive, enforcing, was 'strict'",
        "tls:\\n  file-check-interval: 10ms\\n | tls.file-check-interval | at least 100ms",
        "rate-limits:\\n  per-topic:\\n    - {topic: T}\\n | rate-limits.per-topic[0].sends-per-second | is required",
        "rate-limits:\\n  per-topic:\\n    - {topic: T, sends-per-second: 0}\\n | rate-limits.per-topic[0].sends-per-second"
            + " | must be between 1 and 10000000, was 0",
        "rate-limits:\\n  per-topic:\\n    - {topic: 'bad topic', sends-per-second: 1}\\n | rate-limits.per-topic[0].topic"
            + " | bad topic",
        "rate-limits:\\n  per-client:\\n    - {sends-per-second: 1}\\n | rate-limits.per-client[0].client-id | is required",
        "rate-limits:\\n  per-client:\\n    - {client-id: a, sends-per-second: 1, burst: -1}\\n"
            + " | rate-limits.per-client[0].burst | must be between 1",
        "rate-limits:\\n  per-topic:\\n    - {topic: T, sends-per-second: 1}\\n    - {topic: T, sends-per-second: 2}\\n"
            + " | rate-limits.per-topic[1].topic | 'T' is already listed at rate-limits.per-topic[0]",
        "rate-limits:\\n  per-topic:\\n    - {topic: T, pull-burst: 3}\\n | rate-limits.per-topic[0].sends-per-second"
            + " | or pulls-per-second is required",
        "rate-limits:\\n  per-topic:\\n    - {topic: T, sends-per-second: 1, pull-burst: 3}\\n"
            + " | rate-limits.per-topic[0].pull-burst | needs pulls-per-second",
        "rate-limits:\\n  per-topic:\\n    - {topic: T, pulls-per-second: 0}\\n | rate-limits.per-topic[0].pulls-per-second"
            + " | must be between 1 and 10000000, was 0",
        "rate-limits:\\n  per-client:\\n    - {client-id: a, requests-per-second: 20000000}\\n"
            + " | rate-limits.per-client[0].requests-per-second | must be between 1 and 10000000",
        "rate-limits:\\n  per-client:\\n    - {client-id: a, request-burst: 5}\\n"
            + " | rate-limits.per-client[0].sends-per-second | or requests-per-second is required",
        "rate-limits:\\n  per-address:\\n    - {address: gateway.example.com, requests-per-second: 1}\\n"
            + " | rate-limits.per-address[0].address | must be an IP address or a CIDR range",
        "rate-limits:\\n  per-address:\\n    - {address: 10.0.0.0/33, requests-per-second: 1}\\n"
            + " | rate-limits.per-address[0].address | the prefix length must be between 0 and 32",
        "rate-limits:\\n  per-address:\\n    - {address: '*'}\\n"
            + " | rate-limits.per-address[0].sends-per-second | or requests-per-second is required",
        "rate-limits:\\n  per-address:\\n    - {requests-per-second: 1}\\n | rate-limits.per-address[0].address"
            + " | is required",
        "rate-limits:\\n  per-address:\\n    - {address: '*', requests-per-second: 1}\\n"
            + "    - {address: '*', sends-per-second: 1}\\n"
            + " | rate-limits.per-address[1].address | '*' is already listed at rate-limits.per-address[0]",
        "rate-limits:\\n  refusal-delay: 2s\\n | rate-limits.refusal-delay | must be between 0s and 1s",
        "rate-limits:\\n  per-topic:\\n    - {topic: T, sends-per-second: 1, sends-per-minute: 1}\\n"
            + " | rate-limits.per-topic[0].sends-per-minute"
            + " | unknown key"})
    void refusalsNameTheKey(String yaml, String path, String reason) {
        String text = NS + yaml.replace("\\n", "\n").replace("CERT", cert.toString()).replace("KEY", key.toString());
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(text));
        assertEquals(path, e.path(), e.getMessage());
        assertTrue(e.reason().contains(reason), () -> "reason '" + e.reason() + "' lacks '" + reason + "'");
    }
}
