package io.rmqgw.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one duration syntax of bench and probe, and their one name-server list syntax. */
class DurationsTest {

    @Test
    void numberAndUnitOrBareSeconds() {
        assertEquals(Duration.ofMillis(500), Durations.parse("x", "500ms"));
        assertEquals(Duration.ofSeconds(20), Durations.parse("x", "20s"));
        assertEquals(Duration.ofSeconds(30), Durations.parse("x", "30"), "a bare number is seconds");
        assertEquals(Duration.ofMillis(1500), Durations.parse("x", "1.5s"));
        assertEquals(Duration.ofMillis(1500), Durations.parse("x", "1.5"));
        assertEquals(Duration.ofMinutes(2), Durations.parse("x", "2m"));
        assertEquals(Duration.ofHours(1), Durations.parse("x", "1H"));
        assertEquals(Duration.ZERO, Durations.parse("x", "0s"));
    }

    @Test
    void refusedWithTheOptionNamed() {
        for (String bad : List.of("", "s", "1d", "-1s", "1..2s", "9999h", "PT5S", "soon")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Durations.parse("--duration", bad), bad);
            assertTrue(e.getMessage().startsWith("--duration: "), e.getMessage());
        }
    }

    @Test
    void formatReadsBack() {
        assertEquals("20s", Durations.format(Duration.ofSeconds(20)));
        assertEquals("250ms", Durations.format(Duration.ofMillis(250)));
        assertEquals("2m", Durations.format(Duration.ofMinutes(2)));
        assertEquals("1.5s", Durations.format(Duration.ofMillis(1500)));
        for (Duration d : List.of(Duration.ofMillis(1), Duration.ofMillis(1500), Duration.ofSeconds(59),
            Duration.ofMinutes(90))) {
            assertEquals(d, Durations.parse("x", Durations.format(d)));
        }
    }

    @Test
    void addressLists() {
        assertEquals("a:1;b:2", Addresses.parse("--namesrv", " a:1 ; b:2 ;"));
        assertEquals("127.0.0.1:9876", Addresses.parse("--namesrv", "127.0.0.1:9876"));
        for (String bad : List.of("", " ; ", "nohost", "a:", ":1", "a:0", "a:65536", "a:x")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Addresses.parse("--namesrv", bad), bad);
            assertTrue(e.getMessage().startsWith("--namesrv: "), e.getMessage());
        }
    }
}
