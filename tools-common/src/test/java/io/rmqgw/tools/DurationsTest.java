package io.rmqgw.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one duration syntax of the configuration and the tools, and the tools' one name-server list syntax. */
class DurationsTest {

    @Test
    void aNumberAndAUnit() {
        assertEquals(Duration.ofMillis(500), Durations.parse("x", "500ms"));
        assertEquals(Duration.ofSeconds(20), Durations.parse("x", "20s"));
        assertEquals(Duration.ofSeconds(20), Durations.parse("x", " 20 s "));
        assertEquals(Duration.ofMillis(1500), Durations.parse("x", "1.5s"));
        assertEquals(Duration.ofMinutes(2), Durations.parse("x", "2m"));
        assertEquals(Duration.ofHours(1), Durations.parse("x", "1H"));
        assertEquals(Duration.ofDays(1), Durations.parse("x", "1d"));
        assertEquals(Duration.ofSeconds(30), Durations.parse("x", "PT30S"), "ISO-8601 too");
        assertEquals(Duration.ZERO, Durations.parse("x", "0s"));
    }

    @Test
    void aBareNumberIsRefusedWithTheWaysToWriteIt() {
        for (String bare : List.of("30", "1.5")) {
            InvalidValueException e = assertThrows(InvalidValueException.class, () -> Durations.parse("--duration", bare));
            assertEquals("--duration: needs a unit: " + bare + "s, " + bare + "ms or " + bare + "m, was '" + bare + "'",
                e.getMessage());
            assertEquals("--duration", e.what());
            assertTrue(e.reason().startsWith("needs a unit"), e.reason());
        }
    }

    @Test
    void wholeMillisecondsOnlyAndTheToolsAtMostAWeek() {
        InvalidValueException fraction = assertThrows(InvalidValueException.class, () -> Durations.parse("x", "0.1ms"));
        assertEquals("x: must be a whole number of milliseconds, was '0.1ms'", fraction.getMessage());
        assertEquals(Duration.ofHours(9999), Durations.parse("x", "9999h"), "the syntax itself has no bound");
        InvalidValueException tooLong = assertThrows(InvalidValueException.class,
            () -> Durations.parse("--timeout", "9999h", Durations.TOOL_MAX));
        assertEquals("--timeout: at most a week, was '9999h'", tooLong.getMessage());
        assertEquals(Duration.ofDays(7), Durations.parse("--timeout", "7d", Durations.TOOL_MAX));
        InvalidValueException huge = assertThrows(InvalidValueException.class,
            () -> Durations.parse("x", "99999999999999999999d"));
        assertEquals("x: is too large, was '99999999999999999999d'", huge.getMessage());
    }

    @Test
    void refusedWithTheOptionNamed() {
        for (String bad : List.of("", "s", "30", "-1s", "1..2s", "1w", "P-5S", "PT-5S", "soon")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Durations.parse("--duration", bad, Durations.TOOL_MAX), bad);
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

    @Test
    void oneHostPortSyntax() {
        assertEquals(new HostPort("10.0.0.1", 9876), HostPort.parse("x", " 10.0.0.1:9876 "));
        assertEquals(new HostPort("[::1]", 9876), HostPort.parse("x", "[::1]:9876"));
        assertEquals("::1", HostPort.parse("x", "[::1]:9876").bareHost());
        assertEquals(new HostPort("::1", 9876), HostPort.parse("x", "::1:9876"), "split at the last colon, as RocketMQ");
        assertEquals(65535, HostPort.parse("x", "h:65535").port());
        for (String[] bad : new String[][] {
            {"", "--listen: must be host:port, e.g. 127.0.0.1:9876"},
            {"9876", "--listen: must be host:port, e.g. 127.0.0.1:9876, was '9876'"},
            {"h:", "--listen: must be host:port, e.g. 127.0.0.1:9876, was 'h:'"},
            {"h:x", "--listen: port is not a number in 'h:x'"},
            {"h:0", "--listen: port must be between 1 and 65535, was 0 in 'h:0'"},
            {"h:65536", "--listen: port must be between 1 and 65535, was 65536 in 'h:65536'"},
            {"h:123456789012", "--listen: port must be between 1 and 65535, was 123456789012 in 'h:123456789012'"},
            {"a:b:1", "--listen: host must be a host name or address, was 'a:b' in 'a:b:1'"},
            {"[v6]:1", "--listen: host must be a host name or address, was '[v6]' in '[v6]:1'"},
            {"a b:1", "--listen: host must be a host name or address, was 'a b' in 'a b:1'"}}) {
            InvalidValueException e = assertThrows(InvalidValueException.class, () -> HostPort.parse("--listen", bad[0]));
            assertEquals(bad[1], e.getMessage());
        }
    }
}
