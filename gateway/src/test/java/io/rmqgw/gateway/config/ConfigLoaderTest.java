package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ConfigLoaderTest {

    private static final String NS = "upstream:\n  namesrv: 10.0.0.1:9876\n";

    /** The repository's conf/gateway.yaml, found from the module directory Maven runs tests in. */
    static Path shippedConfig() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("conf/gateway.yaml");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("conf/gateway.yaml not found above " + Path.of("").toAbsolutePath());
    }

    @Test
    void shippedConfigLoads() {
        GatewayConfig c = ConfigLoader.load(shippedConfig());
        assertEquals(new HostPort("127.0.0.1", 9876), c.listen());
        assertEquals("127.0.0.1", c.advertiseHost());
        assertEquals(new PortRange(20900, 20999), c.brokerPorts());
        assertTrue(c.embedded().enabled());
        assertEquals("./data/embedded", c.embedded().storeDir());
        assertEquals(19876, c.embedded().namesrvPort());
        assertEquals(10911, c.embedded().brokerPort());
        assertEquals(List.of(), c.upstream().namesrv());
        assertEquals(Duration.ofSeconds(3), c.upstream().connectTimeout());
        assertEquals(Duration.ofSeconds(30), c.upstream().requestTimeout());
        assertEquals(Duration.ofSeconds(60), c.upstream().longPollTimeout());
        assertEquals(Duration.ofSeconds(60), c.routes().ttl());
        assertEquals(16 * 1024 * 1024, c.maxFrameLength());
        assertEquals(Duration.ofSeconds(10), c.drainTimeout());
    }

    @Test
    void shippedConfigEqualsTheDefaults() {
        assertEquals(ConfigLoader.defaults(Map.of("embedded.enabled", true)), ConfigLoader.load(shippedConfig()));
    }

    @Test
    void missingKeysTakeDefaults() {
        GatewayConfig c = ConfigLoader.parse(NS);
        assertEquals(GatewayConfig.DEFAULT_LISTEN, c.listen());
        assertEquals(GatewayConfig.DEFAULT_BROKER_PORTS, c.brokerPorts());
        assertEquals(List.of(new HostPort("10.0.0.1", 9876)), c.upstream().namesrv());
        assertEquals(UpstreamConfig.DEFAULT_REQUEST_TIMEOUT, c.upstream().requestTimeout());
        assertFalse(c.embedded().enabled());
        assertEquals(GatewayConfig.DEFAULT_MAX_FRAME_LENGTH, c.maxFrameLength());
    }

    @Test
    void everyKeyBinds() {
        GatewayConfig c = ConfigLoader.parse("""
            listen: 0.0.0.0:19000
            advertise-host: gw.example.com
            broker-ports: 21000-21005
            upstream:
              namesrv:
                - ns1:9876
                - ns2:9877
              connect-timeout: 500ms
              request-timeout: 1.5s
              long-poll-timeout: 2m
            routes:
              ttl: 1h
            max-frame-length: 4096
            drain-timeout: 0s
            embedded:
              enabled: false
              store-dir: /tmp/x
              namesrv-port: 1234
              broker-port: 2345
            """);
        assertEquals(new HostPort("0.0.0.0", 19000), c.listen());
        assertEquals("gw.example.com", c.advertiseHost());
        assertEquals(new PortRange(21000, 21005), c.brokerPorts());
        assertEquals(List.of(new HostPort("ns1", 9876), new HostPort("ns2", 9877)), c.upstream().namesrv());
        assertEquals(Duration.ofMillis(500), c.upstream().connectTimeout());
        assertEquals(Duration.ofMillis(1500), c.upstream().requestTimeout());
        assertEquals(Duration.ofMinutes(2), c.upstream().longPollTimeout());
        assertEquals(Duration.ofHours(1), c.routes().ttl());
        assertEquals(4096, c.maxFrameLength());
        assertEquals(Duration.ZERO, c.drainTimeout());
        assertEquals(new EmbeddedConfig(false, "/tmp/x", 1234, 2345), c.embedded());
    }

    @Test
    void namesrvAcceptsRocketMqString() {
        GatewayConfig list = ConfigLoader.parse("upstream:\n  namesrv: [a:9876, b:9876]\n");
        GatewayConfig string = ConfigLoader.parse("upstream:\n  namesrv: \"a:9876;b:9876\"\n");
        GatewayConfig plain = ConfigLoader.parse("upstream:\n  namesrv: a:9876; b:9876;\n");
        assertEquals(list, string);
        assertEquals(list, plain);
        assertEquals(2, list.upstream().namesrv().size());
    }

    @Test
    void overridesApplyBeforeBinding() {
        GatewayConfig c = ConfigLoader.parse(NS, Map.of(
            "listen", "127.0.0.1:7000",
            "upstream.namesrv", "x:1;y:2",
            "embedded.store-dir", "/data"));
        assertEquals(7000, c.listen().port());
        assertEquals("127.0.0.1", c.advertiseHost());
        assertEquals(List.of(new HostPort("x", 1), new HostPort("y", 2)), c.upstream().namesrv());
        assertEquals("/data", c.embedded().storeDir());
    }

    @Test
    void yamlRoundTrips() {
        GatewayConfig c = ConfigLoader.parse(NS + "listen: 0.0.0.0:1\nadvertise-host: h\nroutes: {ttl: 1500ms}\n");
        String yaml = ConfigLoader.toYaml(c);
        assertEquals(c, ConfigLoader.parse(yaml), yaml);
        assertTrue(yaml.contains("ttl: 1500ms"), yaml);
        assertTrue(yaml.contains("request-timeout: 30s"), yaml);
    }

    @Test
    void durationsParseAndFormat() {
        assertEquals(Duration.ofMillis(500), ConfigLoader.parseDuration("x", "500ms"));
        assertEquals(Duration.ofSeconds(30), ConfigLoader.parseDuration("x", "30s"));
        assertEquals(Duration.ofSeconds(30), ConfigLoader.parseDuration("x", "PT30S"));
        assertEquals(Duration.ofMinutes(2), ConfigLoader.parseDuration("x", "2m"));
        assertEquals(Duration.ofDays(1), ConfigLoader.parseDuration("x", "1d"));
        assertEquals("500ms", ConfigLoader.formatDuration(Duration.ofMillis(500)));
        assertEquals("90s", ConfigLoader.formatDuration(Duration.ofSeconds(90)));
        assertEquals("2m", ConfigLoader.formatDuration(Duration.ofMinutes(2)));
        assertEquals("60s", ConfigLoader.formatDuration(Duration.ofMinutes(1)));
        assertEquals("1h", ConfigLoader.formatDuration(Duration.ofHours(1)));
        assertEquals("0s", ConfigLoader.formatDuration(Duration.ZERO));
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parseDuration("drain-timeout", "0.1ms"));
        assertEquals("drain-timeout", e.path());
    }

    static Stream<Arguments> badFiles() {
        return Stream.of(
            // unknown keys, top level and nested
            Arguments.of(NS + "listne: 127.0.0.1:9876\n", "listne", "unknown key (did you mean 'listen'?)"),
            Arguments.of("upstream:\n  namesrv: a:1\n  request-timout: 5s\n", "upstream.request-timout",
                "did you mean 'request-timeout'?"),
            Arguments.of(NS + "embedded:\n  store_dir: x\n", "embedded.store_dir", "did you mean 'store-dir'?"),
            Arguments.of(NS + "routes:\n  ttl: 1s\n  size: 10\n", "routes.size", "valid keys here: ttl"),
            // durations
            Arguments.of("upstream:\n  namesrv: a:1\n  request-timeout: 30\n", "upstream.request-timeout", "needs a unit"),
            Arguments.of("upstream:\n  namesrv: a:1\n  request-timeout: soon\n", "upstream.request-timeout",
                "expected a duration such as 30s, 500ms or 2m, was 'soon'"),
            Arguments.of("upstream:\n  namesrv: a:1\n  request-timeout: 0s\n", "upstream.request-timeout", "must be positive, was 0s"),
            Arguments.of("upstream:\n  namesrv: a:1\n  connect-timeout: [1s]\n", "upstream.connect-timeout", "was a list"),
            Arguments.of(NS + "routes:\n  ttl: -1s\n", "routes.ttl", "expected a duration"),
            Arguments.of(NS + "drain-timeout: 5 minutes\n", "drain-timeout", "expected a duration"),
            // addresses
            Arguments.of(NS + "listen: localhost\n", "listen", "must be host:port"),
            Arguments.of(NS + "listen: localhost:99999\n", "listen", "port must be between 1 and 65535"),
            Arguments.of(NS + "listen: 9876\n", "listen", "must be host:port"),
            Arguments.of(NS + "listen: {host: a, port: 1}\n", "listen", "expected host:port"),
            Arguments.of("upstream:\n  namesrv:\n    - a:9876\n    - b\n", "upstream.namesrv[1]", "must be host:port"),
            Arguments.of("upstream:\n  namesrv:\n    - a:9876\n    - {b: 1}\n", "upstream.namesrv[1]", "expected host:port"),
            Arguments.of("upstream:\n  namesrv: a:9876;b:x\n", "upstream.namesrv", "port is not a number in 'b:x'"),
            Arguments.of("upstream:\n  namesrv: a:9876,b:9876\n", "upstream.namesrv", "must be a host name or address"),
            Arguments.of("upstream:\n  namesrv: {a: 1}\n", "upstream.namesrv", "expected a list of host:port"),
            Arguments.of("upstream:\n  namesrv: []\n", "upstream.namesrv", "at least one name server"),
            Arguments.of("", "upstream.namesrv", "at least one name server"),
            Arguments.of(NS + "listen: 0.0.0.0:9876\n", "advertise-host", "not the wildcard"),
            Arguments.of(NS + "advertise-host: gw:9876\n", "advertise-host", "without a port"),
            Arguments.of(NS + "advertise-host: on\n", "advertise-host", "quote the value"),
            // ranges and numbers
            Arguments.of(NS + "broker-ports: 20900\n", "broker-ports", "must be FROM-TO"),
            Arguments.of(NS + "broker-ports: 20999-20900\n", "broker-ports", "must be FROM-TO within 1-65535"),
            Arguments.of(NS + "broker-ports: 20900-20901\n", "broker-ports", "needs at least 3 ports"),
            Arguments.of(NS + "broker-ports: 9800-9900\n", "broker-ports", "contains the listen port 9876"),
            Arguments.of(NS + "max-frame-length: big\n", "max-frame-length", "expected a whole number, was 'big'"),
            Arguments.of(NS + "max-frame-length: 1.5\n", "max-frame-length", "expected a whole number"),
            Arguments.of(NS + "max-frame-length: 99999999999\n", "max-frame-length", "of at most 2147483647"),
            Arguments.of(NS + "max-frame-length: 10\n", "max-frame-length", "must be between 1024"),
            // embedded
            Arguments.of(NS + "embedded:\n  enabled: 1\n", "embedded.enabled", "expected true or false"),
            Arguments.of(NS + "embedded:\n  enabled: maybe\n", "embedded.enabled", "expected true or false"),
            Arguments.of(NS + "embedded: true\n", "embedded", "expected a mapping of keys, was true"),
            Arguments.of(NS + "embedded:\n  namesrv-port: 70000\n", "embedded.namesrv-port", "between 1 and 65535"),
            Arguments.of(NS + "embedded:\n  store-dir: ' '\n", "embedded.store-dir", "must not be empty"),
            Arguments.of("embedded:\n  enabled: true\n  broker-port: 20950\n", "embedded.broker-port", "overlap broker-ports"),
            Arguments.of("embedded:\n  enabled: true\n  namesrv-port: 9876\n", "embedded.namesrv-port", "is the listen port"),
            Arguments.of("embedded:\n  enabled: true\n  broker-port: 9878\n", "embedded.broker-port", "include the listen port"),
            // sections of the wrong shape
            Arguments.of("upstream: ns:9876\n", "upstream", "expected a mapping of keys, was 'ns:9876'"),
            Arguments.of(NS + "routes: [1]\n", "routes", "expected a mapping of keys, was a list"),
            // file-level problems
            Arguments.of("- listen\n", "", "the file must be a mapping of keys"),
            Arguments.of(NS + "listen: a:1\nlisten: b:2\n", "listen", "is written twice"),
            Arguments.of("upstream:\n  namesrv: a:1\n bad: indent\n", "", "YAML syntax error at line 3"),
            Arguments.of(NS + "---\nlisten: a:1\n", "", "one YAML document"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badFiles")
    void errorsNameThePath(String yaml, String path, String reason) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(yaml));
        assertEquals(path, e.path(), e.getMessage());
        assertTrue(e.reason().contains(reason), () -> "reason '" + e.reason() + "' lacks '" + reason + "'");
        assertFalse(e.getMessage().contains("com.fasterxml") || e.getMessage().contains("java.lang")
            || e.getMessage().contains("\n"), e.getMessage());
        assertEquals(path.isEmpty() ? e.reason() : path + ": " + e.reason(), e.getMessage());
    }

    @Test
    void missingFileIsAConfigError(@TempDir Path dir) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(dir.resolve("nope.yaml")));
        assertEquals("", e.path());
        assertTrue(e.reason().startsWith("no such file"), e.reason());
    }

    @Test
    void emptyFileNeedsNamesrvOrEmbedded(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("empty.yaml"), "# nothing\n");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(file));
        assertEquals("upstream.namesrv", e.path());
        GatewayConfig c = ConfigLoader.load(file, Map.of("embedded.enabled", true));
        assertTrue(c.embedded().enabled());
    }

    @Test
    void withNamesrvKeepsEverythingElse() {
        GatewayConfig c = ConfigLoader.load(shippedConfig());
        GatewayConfig replaced = c.withNamesrv(List.of(new HostPort("127.0.0.1", 19876)));
        assertEquals(List.of(new HostPort("127.0.0.1", 19876)), replaced.upstream().namesrv());
        assertEquals(c.upstream().requestTimeout(), replaced.upstream().requestTimeout());
        assertEquals(c.embedded(), replaced.embedded());
    }
}
