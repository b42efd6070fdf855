package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The coalescing.* keys: defaults, YAML binding and round trip, refusals with their path. */
class CoalescingConfigTest {

    private static final String NS = "upstream:\n  namesrv: a:9876\n";

    @Test
    void offByDefault() {
        CoalescingConfig c = ConfigLoader.parse(NS).coalescing();
        assertFalse(c.enabled());
        assertEquals(List.of(), c.topics());
        assertEquals(64, c.maxMessages());
        assertEquals(256 * 1024, c.maxBytes());
        assertEquals(Duration.ofMillis(1), c.maxDelay(), "a linger of 1 ms, only for busy queues");
        assertEquals(1, c.maxInFlight());
    }

    @Test
    void boundFromYamlAndWrittenBack() {
        GatewayConfig c = ConfigLoader.parse(NS + "coalescing:\n  topics: [Orders, Clicks]\n  max-messages: 32\n"
            + "  max-bytes: 65536\n  max-delay: 2ms\n  max-in-flight: 4\n");
        assertEquals(new CoalescingConfig(List.of("Orders", "Clicks"), 32, 65536, Duration.ofMillis(2), 4),
            c.coalescing());
        assertTrue(c.coalescing().enabled());
        String yaml = ConfigLoader.toYaml(c);
        assertTrue(yaml.contains("max-delay: 2ms"), yaml);
        assertTrue(yaml.contains("max-in-flight: 4"), yaml);
        assertEquals(c, ConfigLoader.parse(yaml));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "coalescing:\\n  topics: ['a b']\\n|coalescing.topics[0]|illegal",
        "coalescing:\\n  topics: [A, '%RETRY%g']\\n|coalescing.topics[1]|retry and dead-letter",
        "coalescing:\\n  topics: [A, A]\\n|coalescing.topics[1]|listed twice",
        "coalescing:\\n  max-messages: 0\\n|coalescing.max-messages|between 1 and 1024",
        "coalescing:\\n  max-bytes: 5000000\\n|coalescing.max-bytes|between 1024 and 4194304",
        "coalescing:\\n  max-delay: 2s\\n|coalescing.max-delay|between 0s and 1s",
        "coalescing:\\n  max-in-flight: 0\\n|coalescing.max-in-flight|between 1 and 64",
        "coalescing:\\n  max-in-flight: 65\\n|coalescing.max-in-flight|between 1 and 64",
        "coalescing:\\n  topic: [A]\\n|coalescing.topic|did you mean 'topics'?",
    })
    void refusedWithPathAndReason(String yaml, String path, String reason) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(NS + yaml.replace("\\n", "\n")));
        assertEquals(path, e.path(), e.getMessage());
        assertTrue(e.reason().contains(reason), e.getMessage());
    }
}
