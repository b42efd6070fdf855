package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.node.NullNode;
import io.rmqgw.testing.TestCerts;
import io.rmqgw.testing.TestCerts.Cert;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file that sets every key of every configuration record to a value other than its default, found by walking the
 * records' components (so a key added to a record and not to this file fails here): loaded, written with
 * {@link ConfigLoader#toYaml}, loaded again, it is the same configuration less its {@link Secret} components, and
 * the output names every key but those.
 */
class ConfigRoundTripTest {

    private static final PropertyNamingStrategies.KebabCaseStrategy KEBAB = new PropertyNamingStrategies.KebabCaseStrategy();
    /** Records written as one scalar, not as their components. */
    private static final Set<Class<?>> SCALARS = Set.of(HostPort.class, PortRange.class);
    private static final String ACL_SECRET = "acl-secret-value";
    private static final String LISTENER_KEY_PASSWORD = "listener-key-password";
    private static final String CLIENT_KEY_PASSWORD = "client-key-password";
    private static final String TOKEN = "token-value-0123456789";

    /**
     * Keys the full file cannot set to a non-default value because another key it sets excludes them, each with the
     * overrides that set it instead (checked by {@link #theExcludedKeysRoundTripToo}).
     */
    private static final Map<String, Map<String, Object>> EXCLUDED = Map.of(
        "embedded.enabled", overrides("embedded.enabled", true, "upstream.namesrv-address-url", null),
        "admin.token", overrides("admin.token", TOKEN, "admin.token-file", null, "admin.token-protects-metrics", false),
        // a password on the client key needs an encrypted key, which the output (without the password) cannot load
        "upstream.tls.key-password", overrides("upstream.tls.enabled", false, "upstream.tls.key-password",
            CLIENT_KEY_PASSWORD));

    @TempDir
    Path dir;
    private String yaml;

    @BeforeEach
    void files() throws Exception {
        Path cert = dir.resolve("a.crt");
        Path key = dir.resolve("a.key");
        TestCerts.write(Cert.A, cert, key);
        Path tokenFile = Files.writeString(dir.resolve("token"), TOKEN + "-from-file\n");
        yaml = """
            listen: 127.0.0.2:9100
            advertise-host: gw.example
            broker-ports: 21000-21099
            upstream:
              namesrv: [10.0.0.1:9876, 10.0.0.2:9877]
              connect-timeout: 4s
              request-timeout: 31s
              long-poll-timeout: 61s
              header-encoding: json
              namesrv-address-url: http://10.0.0.9:8080/rocketmq/nsaddr
              namesrv-address-poll-interval: 3m
              namesrv-address-timeout: 2500ms
              acl: {access-key: gateway-user, secret-key: ACL_SECRET}
              tls: {enabled: true, trust-cert: CERT, cert-file: CERT, key-file: KEY}
            routes: {ttl: 90s}
            max-frame-length: 8388608
            drain-timeout: 20s
            embedded: {enabled: false, store-dir: STORE, namesrv-port: 19877, broker-port: 10921}
            admin:
              enabled: false
              listen: 127.0.0.1:9200
              topic-labels: true
              topic-label-limit: 50
              token-file: TOKEN_FILE
              token-protects-metrics: true
            downstream:
              response-encoding: json
              idle-timeout: 3m
              frame-timeout: 20s
              max-connections: 5000
              max-connections-per-address: 10
              max-incomplete-frame-bytes: 4194304
              incomplete-frame-budget: 123456789
              max-pending-write-bytes: 1048576
              max-pending-writes: 500
              unwritable-timeout: 45s
            names: {check: false, topic-max-length: 100, group-max-length: 120, legacy-brokers: true}
            logging: {levels: {io.rmqgw: DEBUG, ROOT: WARN}}
            fanout:
              enabled: true
              topic: FANOUT_T
              destination-property: dest
              sharding-key-property: shard
              max-retries: 3
              queues: 8
            virtual-queues:
              - group: G1
                topic: T1
                per-real-queue: 4
                window-size: 512
                window-bytes: 1048576
                max-leases-per-queue: 100
                lease-timeout: 20s
                lease-deadline: 40m
                max-deliveries: 5
            tls:
              enabled: true
              cert-file: CERT
              key-file: KEY
              key-password: LISTENER_KEY_PASSWORD
              mode: enforcing
              file-check-interval: 5s
            rate-limits:
              per-topic: [{topic: Orders, sends-per-second: 10, burst: 20, pulls-per-second: 5, pull-burst: 7}]
              per-client: [{client-id: '*', sends-per-second: 11, burst: 12, requests-per-second: 13, request-burst: 14}]
              per-address: [{address: 10.0.0.0/8, sends-per-second: 15, burst: 16, requests-per-second: 17, request-burst: 18}]
              refusal-delay: 250ms
            coalescing: {topics: [Orders], max-messages: 32, max-bytes: 65536, max-delay: 2ms, max-in-flight: 2}
            admin-requests: {allow-all: true, allow-from: [10.1.0.0/16], allow-unknown-codes: true}
            clusters:
              idc2: {namesrv: '10.1.0.1:9876;10.1.0.2:9876'}
            logical-topics:
              - {topic: Orders, clusters: [default, idc2], ordered: true}
            """
            .replace("ACL_SECRET", ACL_SECRET).replace("LISTENER_KEY_PASSWORD", LISTENER_KEY_PASSWORD)
            .replace("TOKEN_FILE", tokenFile.toString()).replace("STORE", dir.resolve("store").toString())
            .replace("CERT", cert.toString()).replace("KEY", key.toString());
    }

    @Test
    void theFileSetsEveryKeyToANonDefaultValue() throws Exception {
        GatewayConfig config = ConfigLoader.parse(yaml);
        GatewayConfig defaults = ConfigLoader.defaults(Map.of("upstream.namesrv", "127.0.0.1:9876"));
        List<String> problems = new ArrayList<>();
        walk("", config, defaults, tree(yaml), true, problems);
        assertEquals(List.of(), problems);
    }

    @Test
    void writtenAndReadBackItIsTheSameLessItsSecrets() throws Exception {
        GatewayConfig config = ConfigLoader.parse(yaml);
        String written = ConfigLoader.toYaml(config);
        assertEquals(withoutSecrets(config), ConfigLoader.parse(written), written);
        assertNotEquals(config, ConfigLoader.parse(written), "the secrets are left out");
        List<String> problems = new ArrayList<>();
        walk("", config, null, tree(written), false, problems);
        assertEquals(List.of(), problems, written);
        for (String secret : List.of(ACL_SECRET, LISTENER_KEY_PASSWORD, "secret-key", "key-password", "acl:")) {
            assertFalse(written.contains(secret), secret + " in\n" + written);
        }
        assertTrue(written.contains("max-incomplete-frame-bytes: 4194304"), written);
        assertTrue(written.contains("incomplete-frame-budget: 123456789"), written);
        assertEquals(written, ConfigLoader.toYaml(ConfigLoader.parse(written)), "written again: the same text");
    }

    @Test
    void theExcludedKeysRoundTripToo() throws Exception {
        GatewayConfig defaults = ConfigLoader.defaults(Map.of("upstream.namesrv", "127.0.0.1:9876"));
        for (Map.Entry<String, Map<String, Object>> e : EXCLUDED.entrySet()) {
            GatewayConfig config = ConfigLoader.parse(yaml, e.getValue());
            assertNotEquals(at(defaults, e.getKey()), at(config, e.getKey()), e.getKey());
            String written = ConfigLoader.toYaml(config);
            assertEquals(withoutSecrets(config), ConfigLoader.parse(written), e.getKey() + ":\n" + written);
            for (String secret : List.of(TOKEN + "\n", CLIENT_KEY_PASSWORD, "token:")) {
                assertFalse(written.contains(secret), secret + " in\n" + written);
            }
        }
    }

    /**
     * Checks that {@code node} (the file, or the output) holds every component of {@code value}, recursively, and,
     * when {@code defaults} is given, that no value is its default; secrets are skipped unless {@code withSecrets}.
     */
    private static void walk(String path, Object value, Object defaults, JsonNode node, boolean withSecrets,
                             List<String> problems) throws Exception {
        for (RecordComponent c : value.getClass().getRecordComponents()) {
            String key = path + KEBAB.translate(c.getName());
            if (c.isAnnotationPresent(Secret.class) && !withSecrets) {
                continue;
            }
            JsonNode child = node == null ? null : node.get(KEBAB.translate(c.getName()));
            if (child == null || child.isNull()) {
                if (defaults == null || !EXCLUDED.containsKey(key)) {
                    problems.add(key + " is not written");
                }
                continue;
            }
            Object v = c.getAccessor().invoke(value);
            Object d = defaults == null ? null : c.getAccessor().invoke(defaults);
            if (v != null && v.getClass().isRecord() && !SCALARS.contains(v.getClass())) {
                walk(key + ".", v, d, child, withSecrets, problems);
            } else if (v instanceof List<?> list && !list.isEmpty() && list.get(0).getClass().isRecord()
                && !SCALARS.contains(list.get(0).getClass())) {
                for (int i = 0; i < list.size(); i++) {
                    walk(key + "[" + i + "].", list.get(i), null, child.get(i), withSecrets, problems);
                }
            } else if (defaults != null && Objects.equals(v, d) && !EXCLUDED.containsKey(key)) {
                problems.add(key + " has its default value " + v);
            }
        }
    }

    /** {@code value} rebuilt with every {@link Secret} component null. */
    private static Object stripped(Object value) throws Exception {
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            for (Object o : list) {
                out.add(stripped(o));
            }
            return out;
        }
        if (value == null || !value.getClass().isRecord() || SCALARS.contains(value.getClass())) {
            return value;
        }
        RecordComponent[] components = value.getClass().getRecordComponents();
        Object[] args = new Object[components.length];
        for (int i = 0; i < components.length; i++) {
            args[i] = components[i].isAnnotationPresent(Secret.class) ? null
                : stripped(components[i].getAccessor().invoke(value));
        }
        Class<?>[] types = Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new);
        return value.getClass().getDeclaredConstructor(types).newInstance(args);
    }

    private static GatewayConfig withoutSecrets(GatewayConfig config) throws Exception {
        return (GatewayConfig) stripped(config);
    }

    private static Object at(Object record, String dottedKey) throws Exception {
        Object value = record;
        for (String part : dottedKey.split("\\.")) {
            Object current = value;
            RecordComponent c = Arrays.stream(current.getClass().getRecordComponents())
                .filter(r -> KEBAB.translate(r.getName()).equals(part)).findFirst().orElseThrow();
            value = c.getAccessor().invoke(current);
        }
        return value;
    }

    private static JsonNode tree(String text) throws Exception {
        JsonNode node = ConfigMapper.MAPPER.readTree(text);
        return node == null ? NullNode.getInstance() : node;
    }

    private static Map<String, Object> overrides(Object... keysAndValues) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }
}
