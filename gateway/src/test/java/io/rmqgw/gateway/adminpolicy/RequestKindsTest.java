package io.rmqgw.gateway.adminpolicy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.HandlerTableCoverageTest;
import io.rmqgw.gateway.core.HandlerTable;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.Test;

/**
 * Every RequestCode of rocketmq-remoting 5.4.0 and of 4.9.7 (rocketmq-common's, read from its own jar) is classified,
 * under its own name; the codes clients send in normal operation pass by default; so does every code a handler is
 * registered for on the name-server and broker ports (the policy stands in front of the unregistered ones only).
 */
class RequestKindsTest {

    static final Path JAR_4_9_7 = Path.of("target", "rocketmq-4.9.7", "rocketmq-common-4.9.7.jar");

    static Map<Integer, String> constants(Class<?> type) throws IllegalAccessException {
        Map<Integer, String> byCode = new TreeMap<>();
        for (Field f : type.getFields()) {
            int m = f.getModifiers();
            if (Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == int.class) {
                String earlier = byCode.put(f.getInt(null), f.getName());
                assertEquals(null, earlier, type.getName() + " names code " + f.getInt(null) + " twice");
            }
        }
        return byCode;
    }

    private static void assertClassified(String version, Map<Integer, String> codes) {
        List<String> missing = new ArrayList<>();
        codes.forEach((code, name) -> {
            RequestKinds.Entry e = RequestKinds.entry(code);
            if (e == null) {
                missing.add(code + " " + name);
            } else {
                assertEquals(name, e.name(), version + ": code " + code + " under another name");
            }
        });
        assertTrue(missing.isEmpty(), () -> version + " request codes not classified in RequestKinds (and in"
            + " docs/ADMIN-REQUESTS.md): " + missing);
    }

    @Test
    void everyCodeOf540IsClassified() throws Exception {
        Map<Integer, String> codes = constants(RequestCode.class);
        assertTrue(codes.size() > 140, "read " + codes.size() + " codes");
        assertClassified("rocketmq-remoting 5.4.0", codes);
    }

    @Test
    void everyCodeOf497IsClassified() throws Exception {
        assertTrue(Files.isRegularFile(JAR_4_9_7), JAR_4_9_7.toAbsolutePath() + " (maven-dependency-plugin copies it)");
        try (URLClassLoader loader = new URLClassLoader(new URL[] {JAR_4_9_7.toUri().toURL()},
            ClassLoader.getPlatformClassLoader())) {
            Class<?> type = Class.forName("org.apache.rocketmq.common.protocol.RequestCode", false, loader);
            Map<Integer, String> codes = constants(type);
            assertTrue(codes.size() > 90, "read " + codes.size() + " codes");
            assertTrue(codes.containsKey(50), "4.9.7 has ACL 1.0's UPDATE_AND_CREATE_ACL_CONFIG");
            assertClassified("rocketmq-common 4.9.7", codes);
        }
    }

    @Test
    void nothingIsClassifiedThatNeitherVersionDefines() throws Exception {
        Map<Integer, String> known = new TreeMap<>(constants(RequestCode.class));
        try (URLClassLoader loader = new URLClassLoader(new URL[] {JAR_4_9_7.toUri().toURL()},
            ClassLoader.getPlatformClassLoader())) {
            known.putAll(constants(Class.forName("org.apache.rocketmq.common.protocol.RequestCode", false, loader)));
        }
        List<Integer> extra = new ArrayList<>(RequestKinds.all().keySet());
        extra.removeAll(known.keySet());
        assertTrue(extra.isEmpty(), "classified but in neither version: " + extra);
        assertEquals(RequestKind.UNKNOWN, RequestKinds.of(60001));
        assertTrue(RequestKind.UNKNOWN.refusedByDefault());
    }

    @Test
    void whatClientsSendInNormalOperationIsNeverRefused() {
        // MQClientAPIImpl of 4.9.7 and 5.4.0 (producers, push/pull/lite-pull/pop consumers, transactions, orderly,
        // request-reply, recall) and rocketmq-client-go v2's internal/request.go
        int[] clientCodes = {10, 11, 12, 14, 15, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 41, 42, 46, 101, 105, 106, 219,
            310, 320, 324, 325, 361, 370, 400, 200050, 200051, 200053, 200054, 200055, 200151};
        for (int code : clientCodes) {
            assertEquals(RequestKind.CLIENT, RequestKinds.of(code), "code " + code);
            assertFalse(RequestKinds.of(code).refusedByDefault());
        }
        // what the issue names: mqadmin's reads and creates pass, deletes and disables do not
        for (int code : new int[] {106, 206, 105, 202, 208, 28, 203, 204, 33, 17, 200}) {
            assertFalse(RequestKinds.of(code).refusedByDefault(), "code " + code);
        }
        for (int code : new int[] {215, 216, 205, 327, 25, 318, 26, 319, 207, 212, 222, 100, 102, 50, 51, 3003, 3008}) {
            assertTrue(RequestKinds.of(code).refusedByDefault(), "code " + code);
        }
    }

    @Test
    void registeredCodesAreNeverRefusedByDefault() {
        HandlerTable broker = HandlerTableCoverageTest.broker();
        HandlerTable namesrv = HandlerTableCoverageTest.namesrv();
        for (HandlerTable table : List.of(broker, namesrv)) {
            table.requestRegistrations().keySet().forEach(code -> assertFalse(RequestKinds.of(code).refusedByDefault(),
                table.role() + " registers code " + code + ", which the policy (in front of the fallback only)"
                    + " would refuse: guard that registration too"));
        }
    }
}
