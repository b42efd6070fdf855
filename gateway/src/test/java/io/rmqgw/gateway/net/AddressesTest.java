package io.rmqgw.gateway.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link Addresses#parse}: IP literals come back resolved, host names unresolved (no DNS on an event loop). */
class AddressesTest {

    @Test
    void anIpv4LiteralIsResolvedWithoutALookup() {
        InetSocketAddress a = Addresses.parse("10.1.2.3:10911");
        assertFalse(a.isUnresolved());
        assertTrue(a.getAddress() instanceof Inet4Address);
        assertArrayEquals(new byte[] {10, 1, 2, 3}, a.getAddress().getAddress());
        assertEquals(10911, a.getPort());
        assertEquals("10.1.2.3:10911", Addresses.of(a));
    }

    @ParameterizedTest
    @ValueSource(strings = {"[2001:db8::7]:9876", "2001:db8::7:9876"})
    void anIpv6LiteralBracketedOrPlainIsResolvedWithoutALookup(String text) {
        InetSocketAddress a = Addresses.parse(text);
        assertFalse(a.isUnresolved());
        assertTrue(a.getAddress() instanceof Inet6Address);
        assertEquals(0x20, a.getAddress().getAddress()[0]);
        assertEquals(7, a.getAddress().getAddress()[15]);
        assertEquals(9876, a.getPort());
    }

    @Test
    void aHostNameIsLeftUnresolvedForTheDialer() {
        // .invalid never resolves (RFC 6761): a lookup here would have failed or taken the DNS timeout
        InetSocketAddress a = Addresses.parse("namesrv-1.example.invalid:9876");
        assertTrue(a.isUnresolved());
        assertNull(a.getAddress());
        assertEquals("namesrv-1.example.invalid", a.getHostString());
        assertEquals(9876, a.getPort());
        assertEquals("namesrv-1.example.invalid:9876", Addresses.of(a));
    }

    @Test
    void localhostIsANameToo() {
        assertTrue(Addresses.parse("localhost:9876").isUnresolved());
    }

    @ParameterizedTest
    @ValueSource(strings = {"no-port", ":9876", "host:", "host:98x6", "host:0", "host:65536", "host:-1",
        "a:b:9876", "[not-ipv6]:9876", "[::1:9876", "::1]:9876", "host:123456789012"})
    void malformedTextIsRefusedQuotingIt(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Addresses.parse(text));
        assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
    }

    @Test
    void aBadPortSaysSo() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Addresses.parse("host:70000"));
        assertEquals("port must be between 1 and 65535, was 70000 in 'host:70000'", e.getMessage());
    }
}
