package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code admin-requests}: defaults, addresses and CIDRs, refused values named by their path, YAML round trip. */
class AdminRequestsConfigTest {

    private static final String NS = "upstream:\n  namesrv: a:9876\n";

    @Test
    void defaultsRefuse() {
        AdminRequestsConfig c = ConfigLoader.parse(NS).adminRequests();
        assertEquals(AdminRequestsConfig.DEFAULT, c);
        assertFalse(c.allowAll());
        assertFalse(c.allowUnknownCodes());
        assertEquals(List.of(), c.allowFrom());
    }

    @Test
    void readAndWrittenBack() {
        GatewayConfig c = ConfigLoader.parse(NS + "admin-requests:\n  allow-all: false\n  allow-unknown-codes: true\n"
            + "  allow-from: [10.1.0.0/16, ' 192.168.7.9 ', 'fd00::/8']\n");
        assertEquals(List.of("10.1.0.0/16", "192.168.7.9", "fd00::/8"), c.adminRequests().allowFrom());
        assertTrue(c.adminRequests().allowUnknownCodes());
        String yaml = ConfigLoader.toYaml(c);
        assertTrue(yaml.contains("admin-requests:"), yaml);
        assertEquals(c, ConfigLoader.parse(yaml), yaml);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "gateway.internal | admin-requests.allow-from[1]: must be an IP address or a CIDR",
        "10.0.0.0/33 | admin-requests.allow-from[1]: the prefix length must be between 0 and 32",
        "10.0.0.0/x | admin-requests.allow-from[1]: the prefix length",
        "256.1.1.1 | admin-requests.allow-from[1]: must be an IP address"})
    void refusedEntriesNameTheirPath(String entry, String message) {
        ConfigException e = assertThrows(ConfigException.class,
            () -> ConfigLoader.parse(NS + "admin-requests:\n  allow-from: [127.0.0.1, " + entry + "]\n"));
        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({
        "10.1.0.0/16, 10.1.255.7, true",
        "10.1.0.0/16, 10.2.0.1, false",
        "10.1.2.3, 10.1.2.3, true",
        "10.1.2.3, 10.1.2.4, false",
        "0.0.0.0/0, 203.0.113.9, true",
        "127.0.0.1, ::ffff:127.0.0.1, true",
        "fd00::/8, fd12::1, true",
        "fd00::/8, 10.0.0.1, false",
        "10.0.0.0/7, 11.255.0.1, true",
        "10.0.0.0/7, 12.0.0.1, false"})
    void rangesContain(String range, String address, boolean contained) throws Exception {
        AddressRange r = AddressRange.parse(range);
        assertEquals(contained, r.contains(InetAddress.getByName(address)), range + " contains " + address);
    }
}
