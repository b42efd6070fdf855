package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code virtual-queues:} entries: defaults, every key, round trip, and refusals naming the entry's key. */
class VirtualQueueConfigTest {

    private static final String NS = "upstream:\n  namesrv: a:9876\n";

    @Test
    void noneByDefault() {
        assertEquals(List.of(), ConfigLoader.parse(NS).virtualQueues());
        assertEquals(List.of(), ConfigLoader.parse(NS + "virtual-queues: []\n").virtualQueues());
    }

    @Test
    void anEntryWithOnlyGroupAndTopicTakesTheDefaults() {
        GatewayConfig c = ConfigLoader.parse(NS + "virtual-queues:\n  - {group: GID_orders, topic: orders}\n");
        VirtualQueueConfig v = c.virtualQueues().get(0);
        assertEquals(VirtualQueueConfig.of("GID_orders", "orders"), v);
        assertEquals(8, v.perRealQueue());
        assertEquals(1024, v.windowSize());
        assertEquals(16 * 1024 * 1024, v.windowBytes());
        assertEquals(1000, v.maxLeasesPerQueue());
        assertEquals(Duration.ofSeconds(15), v.leaseTimeout());
        assertEquals(Duration.ofMinutes(30), v.leaseDeadline());
        assertEquals(16, v.maxDeliveries());
    }

    /** The commented example in conf/gateway.yaml, uncommented, reads as its comments say: every default. */
    @Test
    void theShippedExampleReadsAsDocumented() throws Exception {
        List<String> lines = Files.readAllLines(ConfigLoaderTest.shippedConfig());
        int start = lines.indexOf("virtual-queues: []");
        assertTrue(start > 0, "conf/gateway.yaml has a virtual-queues key");
        StringBuilder example = new StringBuilder(NS).append("virtual-queues:\n");
        for (int i = start + 1; i < lines.size() && lines.get(i).startsWith("#  "); i++) {
            example.append(lines.get(i).substring(1)).append('\n');
        }
        assertEquals(List.of(VirtualQueueConfig.of("GID_orders", "orders")),
            ConfigLoader.parse(example.toString()).virtualQueues(), example.toString());
        assertEquals(List.of(), ConfigLoader.load(ConfigLoaderTest.shippedConfig()).virtualQueues(), "not active: none listed");
    }

    @Test
    void everyKey() {
        GatewayConfig c = ConfigLoader.parse(NS + "virtual-queues:\n"
            + "  - group: g1\n    topic: t1\n    per-real-queue: 4\n    window-size: 256\n    window-bytes: 1048576\n"
            + "    max-leases-per-queue: 64\n    lease-timeout: 20s\n    lease-deadline: 5m\n    max-deliveries: 3\n"
            + "  - {group: g1, topic: t2}\n");
        assertEquals(List.of(
            new VirtualQueueConfig("g1", "t1", 4, 256, 1_048_576, 64, Duration.ofSeconds(20), Duration.ofMinutes(5), 3),
            VirtualQueueConfig.of("g1", "t2")), c.virtualQueues());
    }

    @Test
    void yamlRoundTrips() {
        GatewayConfig c = ConfigLoader.parse(NS + "virtual-queues:\n  - {group: g, topic: t, lease-timeout: 1500ms}\n"
            + "  - {group: h, topic: t, per-real-queue: 2}\n");
        String yaml = ConfigLoader.toYaml(c);
        assertEquals(c, ConfigLoader.parse(yaml), yaml);
        assertTrue(yaml.contains("lease-timeout: 1500ms"), yaml);
        assertTrue(yaml.contains("per-real-queue: 2"), yaml);
    }

    @Test
    void copiesKeepTheEntries() {
        GatewayConfig c = ConfigLoader.parse(NS + "virtual-queues:\n  - {group: g, topic: t}\n");
        assertEquals(c.virtualQueues(), c.withNamesrv(List.of(new HostPort("b", 1))).virtualQueues());
        assertEquals(c.virtualQueues(), c.withLogging(LoggingConfig.DEFAULT).virtualQueues());
        assertEquals(c.virtualQueues(), c.withUpstream(c.upstream()).virtualQueues());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "virtual-queues:\\n  - {topic: t}\\n|virtual-queues[0].group|is required",
        "virtual-queues:\\n  - {group: g}\\n|virtual-queues[0].topic|is required",
        "virtual-queues:\\n  - {group: g, topic: t}\\n  - {group: 'a b', topic: t}\\n|virtual-queues[1].group|'a b' is not a valid group name (illegal character",
        "virtual-queues:\\n  - {group: g, topic: 't.x'}\\n|virtual-queues[0].topic|is not a valid topic name",
        "virtual-queues:\\n  - {group: g, topic: t, per-real-queue: 0}\\n|virtual-queues[0].per-real-queue|must be between 1 and 256, was 0",
        "virtual-queues:\\n  - {group: g, topic: t, window-size: 0}\\n|virtual-queues[0].window-size|must be between 1 and",
        "virtual-queues:\\n  - {group: g, topic: t, window-bytes: 1000}\\n|virtual-queues[0].window-bytes|must be between 65536 and",
        "virtual-queues:\\n  - {group: g, topic: t, max-leases-per-queue: -1}\\n|virtual-queues[0].max-leases-per-queue|must be between 1",
        "virtual-queues:\\n  - {group: g, topic: t, lease-timeout: 10ms}\\n|virtual-queues[0].lease-timeout|must be at least 1s, was 10ms",
        "virtual-queues:\\n  - {group: g, topic: t, lease-timeout: 2m, lease-deadline: 1m}\\n|virtual-queues[0].lease-deadline|must be at least lease-timeout (2m), was 60s",
        "virtual-queues:\\n  - {group: g, topic: t, max-deliveries: 0}\\n|virtual-queues[0].max-deliveries|must be between 1 and 1000",
        "virtual-queues:\\n  - {group: g, topic: t, lease-timeout: soon}\\n|virtual-queues[0].lease-timeout|expected a duration",
        "virtual-queues:\\n  - {group: g, topic: t, windw-size: 5}\\n|virtual-queues[0].windw-size|did you mean 'window-size'",
        "virtual-queues:\\n  - {group: g, topic: t}\\n  - {group: g, topic: t}\\n|virtual-queues[1]|group g on topic t is already listed at virtual-queues[0]",
        "virtual-queues:\\n  - ~\\n|virtual-queues[0]|must be a mapping with group and topic",
        "virtual-queues: {group: g, topic: t}\\n|virtual-queues|expected a list",
    })
    void refusedWithPathAndReason(String yaml, String path, String reason) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(NS + yaml.replace("\\n", "\n")));
        assertEquals(path, e.path(), e.getMessage());
        assertTrue(e.reason().contains(reason), e.getMessage());
    }

    @Test
    void builtByHandTheKeyIsNamedWithoutItsEntry() {
        ConfigException e = assertThrows(ConfigException.class,
            () -> new VirtualQueueConfig("g", "t", 0, null, null, null, null, null, null));
        assertEquals("per-real-queue", e.path());
        assertTrue(e.isRelative());
    }
}
