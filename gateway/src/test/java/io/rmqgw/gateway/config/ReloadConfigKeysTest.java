package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The keys of hot reload and name-server discovery: logging.levels, upstream.namesrv-address-*. */
class ReloadConfigKeysTest {

    private static final String NS = "upstream:\n  namesrv: a:9876\n";

    @TempDir
    Path dir;

    @Test
    void defaults() {
        GatewayConfig c = ConfigLoader.parse(NS);
        assertNull(c.upstream().namesrvAddressUrl());
        assertEquals(Duration.ofMinutes(2), c.upstream().namesrvAddressPollInterval());
        assertEquals(Duration.ofSeconds(3), c.upstream().namesrvAddressTimeout());
        assertEquals(Map.of(), c.logging().levels());
    }

    @Test
    void discoveryKeys() {
        GatewayConfig c = ConfigLoader.parse("upstream:\n  namesrv-address-url: http://10.0.0.9:8080/rocketmq/nsaddr\n"
            + "  namesrv-address-poll-interval: 30s\n  namesrv-address-timeout: 500ms\n");
        assertEquals("http://10.0.0.9:8080/rocketmq/nsaddr", c.upstream().namesrvAddressUrl());
        assertEquals(List.of(), c.upstream().namesrv(), "a URL alone is enough");
        assertEquals(Duration.ofSeconds(30), c.upstream().namesrvAddressPollInterval());
        assertEquals(Duration.ofMillis(500), c.upstream().namesrvAddressTimeout());
        GatewayConfig both = ConfigLoader.parse(NS + "  namesrv-address-url: https://as.example/rocketmq/nsaddr\n");
        assertEquals(List.of(new HostPort("a", 9876)), both.upstream().namesrv());
    }

    @Test
    void incompleteFrameBounds() {
        GatewayConfig defaults = ConfigLoader.parse(NS);
        assertEquals(8 * 1024 * 1024, defaults.downstream().maxIncompleteFrameBytes());
        assertEquals(io.netty.util.internal.PlatformDependent.maxDirectMemory() / 4, defaults.downstream().incompleteFrameBudget());
        GatewayConfig c = ConfigLoader.parse(NS + "downstream:\n  max-incomplete-frame-bytes: 65536\n"
            + "  incomplete-frame-budget: 1048576\n");
        assertEquals(65536, c.downstream().maxIncompleteFrameBytes());
        assertEquals(1048576L, c.downstream().incompleteFrameBudget());
        assertEquals(1048576L, c.downstream().incompleteFrameLimit());
        assertEquals(Long.MAX_VALUE, ConfigLoader.parse(NS + "downstream:\n  incomplete-frame-budget: 0\n")
            .downstream().incompleteFrameLimit(), "0: no limit");
        ConfigException small = assertThrows(ConfigException.class,
            () -> ConfigLoader.parse(NS + "downstream:\n  max-incomplete-frame-bytes: 10\n"));
        assertTrue(small.getMessage().contains("downstream.max-incomplete-frame-bytes"), small.getMessage());
        ConfigException negative = assertThrows(ConfigException.class,
            () -> ConfigLoader.parse(NS + "downstream:\n  incomplete-frame-budget: -1\n"));
        assertTrue(negative.getMessage().contains("downstream.incomplete-frame-budget"), negative.getMessage());
    }

    @Test
    void loggingLevels() {
        GatewayConfig c = ConfigLoader.parse(NS + "logging:\n  levels:\n    io.rmqgw: debug\n    io.rmqgw.gateway.relay: TRACE\n"
            + "    root: warn\n    io.netty: off\n");
        assertEquals(Map.of("io.rmqgw", "DEBUG", "io.rmqgw.gateway.relay", "TRACE", "ROOT", "WARN", "io.netty", "OFF"),
            c.logging().levelNames());
    }

    @Test
    void yamlRoundTripsTheNewKeys() {
        GatewayConfig c = ConfigLoader.parse(NS + "  namesrv-address-url: http://h:1/x\n  namesrv-address-poll-interval: 5s\n"
            + "logging:\n  levels:\n    io.rmqgw: DEBUG\n");
        String yaml = ConfigLoader.toYaml(c);
        assertEquals(c, ConfigLoader.parse(yaml), yaml);
        assertTrue(yaml.contains("namesrv-address-url: http://h:1/x"), yaml);
        assertTrue(yaml.contains("io.rmqgw: DEBUG"), yaml);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "upstream:\\n  namesrv-address-url: ftp://h/x\\n|upstream.namesrv-address-url|must be an http:// or https:// URL",
        "upstream:\\n  namesrv-address-url: 'http://'\\n|upstream.namesrv-address-url|must be an http:// or https:// URL",
        "upstream:\\n  namesrv-address-url: nsaddr\\n|upstream.namesrv-address-url|must be an http:// or https:// URL",
        "upstream:\\n  namesrv-address-url: http://h/x\\n  namesrv-address-poll-interval: 10ms\\n|upstream.namesrv-address-poll-interval|must be at least 100ms",
        "upstream:\\n  namesrv-address-url: http://h/x\\n  namesrv-address-timeout: 0s\\n|upstream.namesrv-address-timeout|must be positive",
        "upstream:\\n  namesrv-address-url: http://h/x\\nembedded:\\n  enabled: true\\n|upstream.namesrv-address-url|cannot be used with embedded.enabled",
        "upstream:\\n  namesrv: []\\n|upstream.namesrv|or upstream.namesrv-address-url is set",
        "upstream:\\n  namesrv: a:1\\nlogging:\\n  levels:\\n    io.rmqgw: LOUD\\n|logging.levels.io.rmqgw|must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, was 'LOUD'",
        "upstream:\\n  namesrv: a:1\\nlogging:\\n  levels:\\n    io.rmqgw: on\\n|logging.levels.io.rmqgw|must be one of",
        "upstream:\\n  namesrv: a:1\\nlogging:\\n  levels:\\n    io.rmqgw: {x: 1}\\n|logging.levels.io.rmqgw|was a mapping of keys",
        "upstream:\\n  namesrv: a:1\\nlogging:\\n  level: DEBUG\\n|logging.level|did you mean 'levels'?",
    })
    void refusedWithPathAndReason(String yaml, String path, String reason) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(yaml.replace("\\n", "\n")));
        assertEquals(path, e.path(), e.getMessage());
        assertTrue(e.reason().contains(reason), e.getMessage());
    }

    @Test
    void adminListenIsReadEvenFromAnInvalidFile() throws Exception {
        Path f = Files.writeString(dir.resolve("bad.yaml"), "admin:\n  listen: 127.0.0.1:19877\nnames:\n  topic-max-length: 0\n");
        assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertEquals(new HostPort("127.0.0.1", 19877), ConfigLoader.adminListen(f));
        Path none = Files.writeString(dir.resolve("none.yaml"), "listen: 127.0.0.1:1\n");
        assertEquals(AdminConfig.DEFAULT_LISTEN, ConfigLoader.adminListen(none));
        Path badListen = Files.writeString(dir.resolve("badlisten.yaml"), "admin:\n  listen: nowhere\n");
        assertEquals("admin.listen", assertThrows(ConfigException.class, () -> ConfigLoader.adminListen(badListen)).path());
        assertThrows(ConfigException.class, () -> ConfigLoader.adminListen(dir.resolve("missing.yaml")));
    }
}
