package io.rmqgw.gateway.discovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HostPort;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Address-server answers read as RocketMQ clients read them. */
class AddressServerClientTest {

    private static AddressServerClient.Fetch parse(String body) {
        return AddressServerClient.parse(body.getBytes(StandardCharsets.UTF_8));
    }

    private static void assertList(String body, String... expected) {
        AddressServerClient.Fetch f = parse(body);
        assertTrue(f instanceof AddressServerClient.Fetch.Ok, () -> body + " -> " + f);
        assertEquals(List.of(expected), ((AddressServerClient.Fetch.Ok) f).namesrv().stream().map(HostPort::toString).toList());
    }

    private static void assertFailed(String body, String result) {
        AddressServerClient.Fetch f = parse(body);
        assertTrue(f instanceof AddressServerClient.Fetch.Failed, () -> body + " -> " + f);
        assertEquals(result, ((AddressServerClient.Fetch.Failed) f).result(), f::toString);
    }

    @Test
    void rocketMqListSyntax() {
        assertList("10.0.0.1:9876;10.0.0.2:9876", "10.0.0.1:9876", "10.0.0.2:9876");
        assertList(" ns1:9876 ; ;ns2:9876;\n", "ns1:9876", "ns2:9876");
        assertList("ns1:9876", "ns1:9876");
        assertList("a:1;a:1;b:2", "a:1", "b:2");
    }

    @Test
    void onlyTheFirstLineCountsAsForClients() {
        assertList("a:1;b:2\r\nc:3\n", "a:1", "b:2");
        assertList("\n\na:1\nb:2", "a:1");
    }

    @Test
    void emptyAnswers() {
        assertFailed("", AddressServerClient.EMPTY);
        assertFailed(" \n\t", AddressServerClient.EMPTY);
        assertFailed(";;", AddressServerClient.EMPTY);
    }

    @Test
    void malformedAnswers() {
        assertFailed("not-an-address", AddressServerClient.MALFORMED);
        assertFailed("a:1;b:x", AddressServerClient.MALFORMED);
        assertFailed("a:1,b:2", AddressServerClient.MALFORMED);
        assertFailed("<html><body>Welcome</body></html>", AddressServerClient.MALFORMED);
        assertFailed("a:99999", AddressServerClient.MALFORMED);
        assertFailed("a:1;" + "x".repeat(AddressServerClient.MAX_BODY_BYTES), AddressServerClient.MALFORMED);
    }
}
