package io.rmqgw.gateway.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.AdminConfig;
import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.EmbeddedConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.RouteCacheConfig;
import io.rmqgw.gateway.config.UpstreamConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code admin} section of the configuration. */
class AdminConfigTest {

    private static final String NS = "upstream:\n  namesrv: 10.0.0.1:9876\n";

    private static ConfigException refused(String yaml) {
        return assertThrows(ConfigException.class, () -> ConfigLoader.parse(NS + yaml));
    }

    @Test
    void defaults() {
        AdminConfig a = ConfigLoader.parse(NS).admin();
        assertTrue(a.enabled());
        assertEquals(new HostPort("127.0.0.1", 9877), a.listen());
        assertFalse(a.topicLabels());
        assertEquals(100, a.topicLabelLimit());
        assertEquals(AdminConfig.DEFAULT, a);
    }

    @Test
    void everyKeyBinds() {
        AdminConfig a = ConfigLoader.parse(NS + """
            admin:
              enabled: false
              listen: 0.0.0.0:19877
              topic-labels: true
              topic-label-limit: 500
            """).admin();
        assertEquals(new AdminConfig(false, new HostPort("0.0.0.0", 19877), true, 500), a);
    }

    @Test
    void overridesAndYamlRoundTrip() {
        GatewayConfig c = ConfigLoader.parse(NS, Map.of("admin.listen", "127.0.0.1:9100", "admin.topic-labels", true));
        assertEquals(9100, c.admin().listen().port());
        assertTrue(c.admin().topicLabels());
        String yaml = ConfigLoader.toYaml(c);
        assertTrue(yaml.contains("admin:"), yaml);
        assertTrue(yaml.contains("listen: 127.0.0.1:9100"), yaml);
        assertTrue(yaml.contains("topic-label-limit: 100"), yaml);
        assertEquals(c, ConfigLoader.parse(yaml));
    }

    @Test
    void shippedConfigOpensTheAdminPortOnLoopback() {
        Path shipped = null;
        for (Path dir = Path.of("").toAbsolutePath(); dir != null && shipped == null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("conf/gateway.yaml"))) {
                shipped = dir.resolve("conf/gateway.yaml");
            }
        }
        assertEquals(AdminConfig.DEFAULT, ConfigLoader.load(shipped).admin());
    }

    @Test
    void badValuesNameTheirKey() {
        ConfigException e = refused("admin:\n  listen: nowhere\n");
        assertEquals("admin.listen", e.path());
        e = refused("admin:\n  topic-label-limit: 0\n");
        assertEquals("admin.topic-label-limit", e.path());
        e = refused("admin:\n  topic-label-limit: 10001\n");
        assertEquals("admin.topic-label-limit", e.path());
        e = refused("admin:\n  enabled: 1\n");
        assertEquals("admin.enabled", e.path());
        e = refused("admin:\n  topic-label: true\n");
        assertEquals("admin.topic-label", e.path());
        assertTrue(e.reason().contains("did you mean 'topic-labels'"), e.reason());
    }

    @Test
    void thePortMustNotCollide() {
        ConfigException e = refused("listen: 127.0.0.1:9877\n");
        assertEquals("admin.listen", e.path());
        assertTrue(e.reason().contains("listen port"), e.reason());
        e = refused("broker-ports: 9877-9899\n");
        assertEquals("admin.listen", e.path());
        assertTrue(e.reason().contains("broker-ports"), e.reason());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
            "embedded:\n  enabled: true\n  namesrv-port: 9877\n"));
        assertEquals("admin.listen", e.path());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
            "embedded:\n  enabled: true\n  broker-port: 9879\n"));
        assertEquals("admin.listen", e.path());
        // a disabled admin port collides with nothing
        ConfigLoader.parse(NS + "listen: 127.0.0.1:9877\nadmin:\n  enabled: false\n");
    }

    @Test
    void handBuiltConfigsHaveNoAdminPort() {
        GatewayConfig c = new GatewayConfig(new HostPort("127.0.0.1", 9877), "127.0.0.1", null,
            new UpstreamConfig(List.of(new HostPort("10.0.0.1", 9876)), null, null, null), new RouteCacheConfig(null),
            null, null, null);
        assertFalse(c.admin().enabled());
        assertEquals(AdminConfig.DISABLED, c.admin());
        assertEquals(c.admin(), c.withNamesrv(List.of(new HostPort("x", 1))).admin());
        GatewayConfig full = new GatewayConfig(null, null, null, c.upstream(), null, null, null, EmbeddedConfig.DISABLED, null);
        assertTrue(full.admin().enabled(), "a null admin section takes the defaults");
    }

    @Test
    void aTokenBindsIsCheckedAndNeverShown() throws Exception {
        AdminConfig a = ConfigLoader.parse(NS + "admin:\n  token: abcdefghijklmnop-1\n  token-protects-metrics: true\n")
            .admin();
        assertEquals("abcdefghijklmnop-1", a.bearerToken());
        assertTrue(a.tokenProtectsMetrics());
        assertFalse(a.toString().contains("abcdefghijklmnop-1"), a.toString());
        assertFalse(ConfigLoader.toYaml(ConfigLoader.parse(NS + "admin:\n  token: abcdefghijklmnop-1\n"))
            .contains("abcdefghijklmnop-1"));

        Path file = Files.createTempFile("rmqgw-token", ".txt");
        try {
            Files.writeString(file, "  from-a-file-0123456789  \nsecond line ignored\n");
            AdminConfig f = ConfigLoader.parse(NS + "admin:\n  token-file: " + file + "\n").admin();
            assertEquals("from-a-file-0123456789", f.bearerToken());
            assertEquals("from-a-file-0123456789", ConfigLoader.adminToken(writeConfig("admin:\n  token-file: " + file)));
        } finally {
            Files.deleteIfExists(file);
        }
        assertEquals(null, AdminConfig.DEFAULT.bearerToken());
        assertEquals("127.0.0.1", AdminConfig.DEFAULT.listen().host(), "the admin port stays on loopback by default");

        assertEquals("admin.token", refused("admin:\n  token: short\n").path());
        assertEquals("admin.token", refused("admin:\n  token: \"has white space 0123\"\n").path());
        assertEquals("admin.token-file", refused("admin:\n  token: abcdefghijklmnop-1\n  token-file: /x\n").path());
        assertEquals("admin.token-file", refused("admin:\n  token-file: /nonexistent/rmqgw-token\n").path());
        assertEquals("admin.token-protects-metrics", refused("admin:\n  token-protects-metrics: true\n").path());
    }

    private static Path writeConfig(String admin) throws Exception {
        Path f = Files.createTempFile("rmqgw-config", ".yaml");
        f.toFile().deleteOnExit();
        Files.writeString(f, NS + admin + "\n");
        return f;
    }
}
