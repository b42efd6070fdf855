package io.rmqgw.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.alibaba.fastjson2.JSONWriter;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicQueueMappingInfo;
import org.junit.jupiter.api.Test;

class BrokerAddressRewriterTest {

    private static final String A_MASTER = "10.0.0.1:10911";
    private static final String A_SLAVE = "10.0.0.2:10911";
    private static final String B_MASTER = "10.0.0.3:10911";
    private static final String FILTER_SERVER = "10.0.0.1:30000";

    private static final Map<String, String> GATEWAY = Map.of(
        A_MASTER, "gw.example:20002",
        A_SLAVE, "gw.example:20005",
        B_MASTER, "gw.example:20008");

    /** Maps every address it is asked about, so a rewrite outside brokerAddrs would show. */
    private static final Function<String, String> TOTAL_MAPPING =
        real -> GATEWAY.getOrDefault(real, "gw.example:1");

    // ---- real serializer output: what 5.4.0 and 4.9.x name servers write ----

    /** 5.4.0 ClientRequestProcessor, version >= 401 or acceptStandardJsonOnly=true. */
    private static byte[] standardFastjson2(TopicRouteData route) {
        return route.encode(JSONWriter.Feature.BrowserCompatible, JSONWriter.Feature.MapSortField);
    }

    /** 4.9.x ClientRequestProcessor standard form (fastjson 1). */
    private static byte[] standardFastjson1(Object body) {
        return com.alibaba.fastjson.JSON.toJSONString(body,
            com.alibaba.fastjson.serializer.SerializerFeature.BrowserCompatible,
            com.alibaba.fastjson.serializer.SerializerFeature.QuoteFieldNames,
            com.alibaba.fastjson.serializer.SerializerFeature.SkipTransientField,
            com.alibaba.fastjson.serializer.SerializerFeature.MapSortField).getBytes(StandardCharsets.UTF_8);
    }

    /** 4.9.x RemotingSerializable.encode() (fastjson 1), used for old clients and for cluster info. */
    private static byte[] legacyFastjson1(Object body) {
        return com.alibaba.fastjson.JSON.toJSONString(body).getBytes(StandardCharsets.UTF_8);
    }

    private static TopicRouteData route() {
        TopicRouteData route = new TopicRouteData();
        route.setOrderTopicConf("broker-a:4;broker-b:4");
        route.setQueueDatas(new ArrayList<>(List.of(queue("broker-a"), queue("broker-b"))));
        HashMap<Long, String> a = new HashMap<>();
        a.put(0L, A_MASTER);
        a.put(1L, A_SLAVE);
        BrokerData brokerA = new BrokerData("DefaultCluster", "broker-a", a);
        brokerA.setZoneName("zone \"brokerAddrs\" é");
        HashMap<Long, String> b = new HashMap<>();
        b.put(0L, B_MASTER);
        BrokerData brokerB = new BrokerData("brokerAddrs", "broker-b", b, true);
        route.setBrokerDatas(new ArrayList<>(List.of(brokerA, brokerB)));
        HashMap<String, List<String>> filters = new HashMap<>();
        filters.put(A_MASTER, List.of(FILTER_SERVER));
        route.setFilterServerTable(filters);
        TopicQueueMappingInfo mapping = new TopicQueueMappingInfo("TopicTest", 8, "broker-a", 3);
        mapping.getCurrIdMap().put(0, 4);
        mapping.getCurrIdMap().put(1, 5);
        route.setTopicQueueMappingByBroker(new HashMap<>(Map.of("broker-a", mapping)));
        return route;
    }

    private static QueueData queue(String brokerName) {
        QueueData q = new QueueData();
        q.setBrokerName(brokerName);
        q.setReadQueueNums(4);
        q.setWriteQueueNums(4);
        q.setPerm(6);
        return q;
    }

    private static ClusterInfo clusterInfo() {
        TopicRouteData route = route();
        Map<String, BrokerData> byName = new HashMap<>();
        route.getBrokerDatas().forEach(b -> byName.put(b.getBrokerName(), b));
        ClusterInfo info = new ClusterInfo();
        info.setBrokerAddrTable(byName);
        info.setClusterAddrTable(new HashMap<>(Map.of("DefaultCluster", new HashSet<>(Set.of("broker-a", "broker-b")))));
        return info;
    }

    /** The original text with each broker address string (and nothing else) replaced. */
    private static byte[] expectedRewrite(byte[] original) {
        String text = new String(original, StandardCharsets.UTF_8);
        for (Map.Entry<String, String> e : GATEWAY.entrySet()) {
            text = text.replace('"' + e.getKey() + '"', '"' + e.getValue() + '"');
        }
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static TopicRouteData withGatewayAddresses(TopicRouteData route) {
        TopicRouteData expected = route.deepCloneTopicRouteData();
        expected.getBrokerDatas().forEach(b -> b.getBrokerAddrs().replaceAll((id, addr) -> GATEWAY.get(addr)));
        HashMap<String, List<String>> filters = new HashMap<>();
        expected.getFilterServerTable().forEach((addr, list) -> filters.put(GATEWAY.get(addr), list));
        expected.setFilterServerTable(filters);
        return expected;
    }

    private static void assertStrictJson(byte[] body) throws Exception {
        try (JsonParser p = new JsonFactory().createParser(body)) {
            while (p.nextToken() != null) {
                // a standard-JSON client parses every token
            }
        }
    }

    private static String text(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    @Test
    void rewritesStandardFastjson2RouteAndKeepsItStandard() throws Exception {
        TopicRouteData route = route();
        byte[] original = standardFastjson2(route);
        assertTrue(text(original).contains("\"0\":\"" + A_MASTER + "\""), text(original));

        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(original, TOTAL_MAPPING);

        assertArrayEquals(expectedRewrite(original), result.body(), text(result.body()));
        assertEquals(new LinkedHashSet<>(List.of(A_MASTER, A_SLAVE, B_MASTER)), result.brokerAddresses());
        assertEquals(4, result.replacements(), "three brokerAddrs values and one filterServerTable key");
        assertStrictJson(result.body());
        TopicRouteData decoded = TopicRouteData.decode(result.body(), TopicRouteData.class);
        assertEquals(withGatewayAddresses(route), decoded);
        assertEquals(route.getTopicQueueMappingByBroker(), decoded.getTopicQueueMappingByBroker());
        assertEquals(List.of(FILTER_SERVER), decoded.getFilterServerTable().get("gw.example:20002"));
    }

    @Test
    void rewritesFastjson2DialectAndKeepsUnquotedKeys() {
        TopicRouteData route = route();
        byte[] original = route.encode();
        assertTrue(text(original).contains("{0:\"" + A_MASTER + "\""), text(original));

        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(original, TOTAL_MAPPING);

        assertArrayEquals(expectedRewrite(original), result.body(), text(result.body()));
        assertTrue(text(result.body()).contains("{0:\"gw.example:20002\",1:\"gw.example:20005\"}"), text(result.body()));
        assertTrue(text(result.body()).contains("\"currIdMap\":{0:4,1:5}"), text(result.body()));
        assertEquals(withGatewayAddresses(route), TopicRouteData.decode(result.body(), TopicRouteData.class));
    }

    @Test
    void rewritesFastjson1OutputOfOlderNameServersInBothDialects() throws Exception {
        TopicRouteData route = route();
        for (byte[] original : List.of(standardFastjson1(route), legacyFastjson1(route))) {
            BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(original, TOTAL_MAPPING);
            assertArrayEquals(expectedRewrite(original), result.body(), text(result.body()));
            assertEquals(Set.of(A_MASTER, A_SLAVE, B_MASTER), result.brokerAddresses());
            assertEquals(withGatewayAddresses(route), TopicRouteData.decode(result.body(), TopicRouteData.class));
        }
        // fastjson 1 BrowserCompatible escapes non-ASCII; those escapes must survive untouched
        byte[] standard = BrokerAddressRewriter.rewrite(standardFastjson1(route), TOTAL_MAPPING).body();
        assertTrue(text(standard).contains("\\u00E9"), text(standard));
        assertStrictJson(standard);
    }

    @Test
    void rewritesClusterInfoFromBothSerializers() {
        ClusterInfo info = clusterInfo();
        for (byte[] original : List.of(info.encode(), legacyFastjson1(info), standardFastjson1(info))) {
            BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(original, TOTAL_MAPPING);

            assertArrayEquals(expectedRewrite(original), result.body(), text(result.body()));
            assertEquals(Set.of(A_MASTER, A_SLAVE, B_MASTER), result.brokerAddresses());
            ClusterInfo decoded = ClusterInfo.decode(result.body(), ClusterInfo.class);
            assertEquals(Map.of(0L, "gw.example:20002", 1L, "gw.example:20005"),
                decoded.getBrokerAddrTable().get("broker-a").getBrokerAddrs());
            assertEquals(Map.of(0L, "gw.example:20008"), decoded.getBrokerAddrTable().get("broker-b").getBrokerAddrs());
            assertEquals(info.getClusterAddrTable(), decoded.getClusterAddrTable());
        }
    }

    @Test
    void rewritesHandWrittenFastjsonSample() {
        String sample = "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"127.0.0.1:10911\"},\"brokerName\":\"broker-a\","
            + "\"cluster\":\"DefaultCluster\"}],\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-a\","
            + "\"perm\":6,\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}";

        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(sample.getBytes(StandardCharsets.UTF_8),
            real -> real.equals("127.0.0.1:10911") ? "192.168.1.5:30002" : null);

        assertEquals(sample.replace("{0:\"127.0.0.1:10911\"}", "{0:\"192.168.1.5:30002\"}"), text(result.body()));
        assertEquals(Set.of("127.0.0.1:10911"), result.brokerAddresses());
    }

    @Test
    void keepsWhitespaceAndEscapesAroundAddresses() {
        String sample = "{ \"brokerDatas\" : [ { \"brokerAddrs\" : { 0 : \"10.0.0.1:10911\" ,\n 1:\"10.0.0.\\u0032:10911\" } ,"
            + " \"zoneName\" : \"\\\"brokerAddrs\\\"\" } ] }\n";

        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(sample.getBytes(StandardCharsets.UTF_8),
            TOTAL_MAPPING);

        assertEquals(sample.replace("\"10.0.0.1:10911\"", "\"gw.example:20002\"")
            .replace("\"10.0.0.\\u0032:10911\"", "\"gw.example:20005\""), text(result.body()));
        assertEquals(Set.of(A_MASTER, A_SLAVE), result.brokerAddresses(), "escapes are decoded before mapping");
    }

    @Test
    void nullMappingLeavesBodyUntouchedButReportsAddresses() {
        byte[] original = route().encode();

        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(original, real -> null);

        assertSame(original, result.body());
        assertFalse(result.changed());
        assertEquals(List.of(A_MASTER, A_SLAVE, B_MASTER), List.copyOf(result.brokerAddresses()));
        assertEquals(result.brokerAddresses(), BrokerAddressRewriter.brokerAddresses(original));
    }

    @Test
    void partialMappingRewritesOnlyMappedAddresses() {
        byte[] original = standardFastjson2(route());

        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(original,
            real -> real.equals(B_MASTER) ? "gw.example:20008" : null);

        assertEquals(text(original).replace('"' + B_MASTER + '"', "\"gw.example:20008\""), text(result.body()));
        assertEquals(1, result.replacements());
        assertEquals(Set.of(A_MASTER, A_SLAVE, B_MASTER), result.brokerAddresses());
    }

    @Test
    void asksTheMappingOncePerDistinctAddress() {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        BrokerAddressRewriter.rewrite(route().encode(), real -> {
            calls.computeIfAbsent(real, k -> new AtomicInteger()).incrementAndGet();
            return GATEWAY.get(real);
        });
        // A_MASTER is in brokerAddrs and filterServerTable
        assertEquals(Set.of(A_MASTER, A_SLAVE, B_MASTER), calls.keySet());
        calls.values().forEach(n -> assertEquals(1, n.get()));
    }

    @Test
    void escapesReplacementStrings() {
        String sample = "{\"brokerAddrs\":{0:\"10.0.0.1:10911\"}}";
        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(sample.getBytes(StandardCharsets.UTF_8),
            real -> "odd\"host\\:1");
        assertEquals("{\"brokerAddrs\":{0:\"odd\\\"host\\\\:1\"}}", text(result.body()));
    }

    @Test
    void readsByteBufWithoutConsumingIt() {
        byte[] original = route().encode();
        ByteBuf heap = Unpooled.buffer(original.length + 10).writeBytes(new byte[7]).writeBytes(original);
        heap.readerIndex(7);
        ByteBuf direct = Unpooled.directBuffer(original.length).writeBytes(original);
        try {
            for (ByteBuf buf : List.of(heap, direct)) {
                int readerIndex = buf.readerIndex();
                BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(buf, TOTAL_MAPPING);
                assertArrayEquals(expectedRewrite(original), result.body());
                assertEquals(readerIndex, buf.readerIndex());
                assertEquals(1, buf.refCnt());
                assertEquals(Set.of(A_MASTER, A_SLAVE, B_MASTER), BrokerAddressRewriter.brokerAddresses(buf));
            }
        } finally {
            heap.release();
            direct.release();
        }
    }

    @Test
    void toleratesNullBrokerAddrsAndNullValues() {
        String sample = "{\"brokerDatas\":[{\"brokerAddrs\":null},{\"brokerAddrs\":{0:null,1:\"10.0.0.2:10911\"}}],"
            + "\"filterServerTable\":null}";
        BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(sample.getBytes(StandardCharsets.UTF_8),
            TOTAL_MAPPING);
        assertEquals(sample.replace(A_SLAVE, "gw.example:20005"), text(result.body()));
    }

    @Test
    void rejectsMalformedBodiesWithClearMessages() {
        assertMalformed("", "empty");
        assertMalformed(" \n ", "blank");
        assertMalformed("[]", "expected a JSON object");
        assertMalformed("null", "expected a JSON object");
        assertMalformed("{\"brokerAddrs\":[\"10.0.0.1:10911\"]}", "\"brokerAddrs\" must be an object");
        assertMalformed("{\"brokerAddrs\":{0:10911}}", "entry 0 must be an address string");
        assertMalformed("{\"brokerAddrs\":{0:{\"a\":1}}}", "entry 0 must be an address string");
        assertMalformed("{\"filterServerTable\":[]}", "\"filterServerTable\" must be an object");
        assertMalformed("{}{}", "trailing content");
        assertMalformed("{} x", "malformed route body");
        assertMalformed("{\"brokerAddrs\":{0:\"10.0.0.1:10911\"", "end-of-input");
        assertMalformed("{\"brokerAddrs\":{0:'10.0.0.1:10911'}}", "malformed route body at byte");
        assertMalformed("{\"a\":\"\u0001\"}", "malformed route body");
        MalformedRouteBodyException badUtf8 = assertThrows(MalformedRouteBodyException.class,
            () -> BrokerAddressRewriter.rewrite(new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xC3, '"', '}'}, TOTAL_MAPPING));
        assertTrue(badUtf8.getMessage().contains("UTF-8"), badUtf8.getMessage());
    }

    private static void assertMalformed(String body, String messagePart) {
        MalformedRouteBodyException e = assertThrows(MalformedRouteBodyException.class,
            () -> BrokerAddressRewriter.rewrite(body.getBytes(StandardCharsets.UTF_8), TOTAL_MAPPING), body);
        assertTrue(e.getMessage().contains(messagePart), "'" + body + "' -> " + e.getMessage());
    }

    @Test
    void everyTruncationIsRejectedNeverHangs() {
        List<byte[]> bodies = List.of(route().encode(), standardFastjson2(route()), clusterInfo().encode());
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            for (byte[] body : bodies) {
                for (int len = 0; len < body.length; len++) {
                    byte[] prefix = java.util.Arrays.copyOf(body, len);
                    assertThrows(MalformedRouteBodyException.class,
                        () -> BrokerAddressRewriter.rewrite(prefix, TOTAL_MAPPING), "prefix of length " + len);
                }
            }
        });
    }

    @Test
    void randomCorruptionEitherParsesOrFailsCleanly() {
        byte[] body = route().encode();
        Random random = new Random(42);
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            for (int round = 0; round < 20_000; round++) {
                byte[] corrupt = body.clone();
                for (int n = 1 + random.nextInt(3); n > 0; n--) {
                    corrupt[random.nextInt(corrupt.length)] = (byte) random.nextInt(256);
                }
                try {
                    BrokerAddressRewriter.Result result = BrokerAddressRewriter.rewrite(corrupt, TOTAL_MAPPING);
                    // whatever survived corruption, the output is readable and advertises only gateway addresses
                    for (String advertised : BrokerAddressRewriter.brokerAddresses(result.body())) {
                        assertTrue(advertised.startsWith("gw.example:"), advertised + " in " + text(result.body()));
                    }
                } catch (MalformedRouteBodyException expected) {
                    // clean rejection
                } catch (RuntimeException other) {
                    fail("round " + round + " threw " + other + " for " + text(corrupt), other);
                }
            }
        });
    }

    @Test
    void jacksonTokensMatchFastjsonUnquotedKeys() throws Exception {
        // The rewriter leans on Jackson reading fastjson's {0:"..."}; pin that down explicitly.
        JsonFactory lenient = JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.json.JsonReadFeature.ALLOW_UNQUOTED_FIELD_NAMES).build();
        try (JsonParser p = lenient.createParser("{0:\"a\",12:\"b\",-1:\"c\"}".getBytes(StandardCharsets.UTF_8))) {
            List<String> names = new ArrayList<>();
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == JsonToken.FIELD_NAME) {
                    names.add(p.currentName());
                }
            }
            assertEquals(List.of("0", "12", "-1"), names);
        }
    }

    /** Found by RouteBodyFuzzTest: a UTF-16 body was read without byte offsets and failed with an IllegalStateException. */
    @Test
    void aUtf16BodyIsMalformed() {
        byte[] utf16 = "{\"brokerDatas\":[]}".getBytes(StandardCharsets.UTF_16BE);
        MalformedRouteBodyException e = assertThrows(MalformedRouteBodyException.class,
            () -> BrokerAddressRewriter.rewrite(utf16, a -> "gw:1"));
        assertTrue(e.getMessage().contains("not UTF-8"), e.getMessage());
        assertThrows(MalformedRouteBodyException.class, () -> new ClusterView().learnRoute("T", utf16));
        assertThrows(MalformedRouteBodyException.class,
            () -> new ClusterView().learnClusterInfo("{}".getBytes(StandardCharsets.UTF_16LE)));
    }
}
