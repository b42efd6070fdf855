package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The clusters.* and logical-topics keys: none by default, YAML binding and round trip, refusals with their path. */
class LogicalTopicsConfigTest {

    private static final String NS = "upstream:\n  namesrv: a:9876\n";

    @Test
    void noneByDefault() {
        GatewayConfig c = ConfigLoader.parse(NS);
        assertEquals(Map.of(), c.clusters());
        assertEquals(List.of(), c.logicalTopics());
    }

    @Test
    void boundFromYamlAndWrittenBack() {
        GatewayConfig c = ConfigLoader.parse(NS + "clusters:\n  idc2: {namesrv: '10.1.0.1:9876;10.1.0.2:9876'}\n"
            + "logical-topics:\n  - {topic: Orders, clusters: [default, idc2]}\n"
            + "  - {topic: Ledger, clusters: [idc2, default], ordered: true}\n");
        assertEquals(List.of(new HostPort("10.1.0.1", 9876), new HostPort("10.1.0.2", 9876)),
            c.clusters().get("idc2").namesrv());
        LogicalTopicConfig orders = c.logicalTopics().get(0);
        assertEquals("Orders", orders.topic());
        assertEquals(List.of("default", "idc2"), orders.clusters());
        assertTrue(orders.redirectable());
        assertFalse(c.logicalTopics().get(1).redirectable());
        assertEquals(c, ConfigLoader.parse(ConfigLoader.toYaml(c)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "clusters:\\n  idc2: {}\\n | clusters.idc2.namesrv | at least one name server is required",
        "clusters:\\n  default: {namesrv: 'b:9876'}\\n | clusters.default | default is the cluster of upstream.namesrv",
        "logical-topics:\\n  - {topic: Orders, clusters: [default]}\\n | logical-topics[0].clusters | at least two",
        "logical-topics:\\n  - {topic: Orders, clusters: [default, idc9]}\\n | logical-topics[0].clusters | idc9 is"
            + " neither default nor named under clusters",
        "logical-topics:\\n  - {topic: Orders, clusters: [default, default]}\\n | logical-topics[0].clusters | listed"
            + " twice",
        "logical-topics:\\n  - {topic: 'a b', clusters: [default, idc2]}\\n | logical-topics[0].topic | ",
        "clusters:\\n  idc2: {namesrv: 'b:9876'}\\nlogical-topics:\\n  - {topic: T, clusters: [default, idc2]}\\n"
            + "  - {topic: T, clusters: [idc2, default]}\\n | logical-topics[1].topic | already listed at"
            + " logical-topics[0]",
    })
    void refusedWithPathAndReason(String yaml, String path, String reason) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(NS + yaml.replace("\\n",
            "\n")));
        assertEquals(path, e.path(), e::getMessage);
        assertTrue(reason == null || e.getMessage().contains(reason.trim()), e::getMessage);
    }
}
