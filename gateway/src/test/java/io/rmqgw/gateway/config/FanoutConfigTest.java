package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The fanout.* keys: defaults, YAML binding and round trip, refusals with their path. */
class FanoutConfigTest {

    private static final String NS = "upstream:\n  namesrv: a:9876\n";

    @Test
    void offByDefault() {
        FanoutConfig f = ConfigLoader.parse(NS).fanout();
        assertFalse(f.enabled());
        assertEquals("RMQGW_FANOUT", f.topic());
        assertEquals("RMQGW_DESTINATIONS", f.destinationProperty());
        assertEquals("RMQGW_SHARDING_KEY", f.shardingKeyProperty());
        assertEquals(2, f.maxRetries());
        assertEquals(4, f.queues());
    }

    @Test
    void boundFromYamlAndWrittenBack() {
        GatewayConfig c = ConfigLoader.parse(NS + "fanout:\n  enabled: true\n  topic: Events_Fanout\n"
            + "  destination-property: dest\n  sharding-key-property: orderId\n  max-retries: 0\n  queues: 8\n");
        assertEquals(new FanoutConfig(true, "Events_Fanout", "dest", "orderId", 0, 8), c.fanout());
        String yaml = ConfigLoader.toYaml(c);
        assertTrue(yaml.contains("destination-property: dest"), yaml);
        assertEquals(c, ConfigLoader.parse(yaml));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "fanout:\\n  topic: 'a b'\\n|fanout.topic|illegal",
        "fanout:\\n  topic: '%RETRY%g'\\n|fanout.topic|retry or dead-letter",
        "fanout:\\n  max-retries: 17\\n|fanout.max-retries|between 0 and 16",
        "fanout:\\n  queues: 0\\n|fanout.queues|between 1 and 256",
        "fanout:\\n  destination-property: 'a b'\\n|fanout.destination-property|without blanks",
        "fanout:\\n  sharding-key-property: RMQGW_DESTINATIONS\\n|fanout.sharding-key-property|must differ",
        "fanout:\\n  enable: true\\n|fanout.enable|did you mean 'enabled'?",
    })
    void refusedWithPathAndReason(String yaml, String path, String reason) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(NS + yaml.replace("\\n", "\n")));
        assertEquals(path, e.path(), e.getMessage());
        assertTrue(e.reason().contains(reason), e.getMessage());
    }
}
