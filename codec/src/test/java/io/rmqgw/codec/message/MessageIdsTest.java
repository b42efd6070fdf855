package io.rmqgw.codec.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.Random;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageId;
import org.junit.jupiter.api.Test;

class MessageIdsTest {

    static final int BROKER = StoreHostMapper.ipv4(10, 0, 0, 1);
    static final int GATEWAY = StoreHostMapper.ipv4(203, 0, 113, 250);
    static final StoreHostMapper MAPPER = (ip, port) ->
        ip == BROKER && port == 10911 ? StoreHostMapper.pack(GATEWAY, 30911) : StoreHostMapper.UNKNOWN;

    @Test
    void createMatchesRocketMq() throws Exception {
        Random random = new Random(7);
        for (int i = 0; i < 2_000; i++) {
            int ip = random.nextInt();
            int port = i % 3 == 0 ? random.nextInt(65536) : random.nextInt();
            long offset = i % 5 == 0 ? random.nextInt(1 << 20) : random.nextLong();
            InetAddress address = InetAddress.getByAddress(new byte[] {
                (byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip});
            String id = MessageIds.create(ip, port & 0xFFFF, offset);
            assertEquals(MessageDecoder.createMessageId(new InetSocketAddress(address, port & 0xFFFF), offset), id);
            assertTrue(MessageIds.isIpv4OffsetId(id));
            assertEquals(StoreHostMapper.pack(ip, port & 0xFFFF), MessageIds.storeHost(id));
            assertEquals(offset, MessageIds.commitLogOffset(id));
        }
    }

    @Test
    void rewriteReplacesTheAddressAndKeepsTheOffset() throws Exception {
        long offset = 0x0000_0001_2345_6789L;
        String id = MessageDecoder.createMessageId(new InetSocketAddress("10.0.0.1", 10911), offset);
        assertEquals("0A00000100002A9F0000000123456789", id);

        String rewritten = MessageIds.rewrite(id, MAPPER);

        assertEquals("CB0071FA000078BF0000000123456789", rewritten);
        MessageId decoded = MessageDecoder.decodeMessageId(rewritten);
        assertEquals(new InetSocketAddress("203.0.113.250", 30911), decoded.getAddress());
        assertEquals(offset, decoded.getOffset());
        // and back, with the reverse mapping
        StoreHostMapper reverse = (ip, port) ->
            ip == GATEWAY && port == 30911 ? StoreHostMapper.pack(BROKER, 10911) : StoreHostMapper.UNKNOWN;
        assertEquals(id, MessageIds.rewrite(rewritten, reverse));
    }

    @Test
    void rewriteAcceptsLowerCaseAndKeepsTheOffsetCharacters() {
        String id = "0a00000100002a9f00000001abcdef01";
        assertEquals("CB0071FA000078BF00000001abcdef01", MessageIds.rewrite(id, MAPPER));
    }

    @Test
    void rewriteKeepsWhatItCannotOrNeedNotChange() throws Exception {
        String known = MessageIds.create(BROKER, 10911, 99L);
        String unknownHost = MessageIds.create(BROKER, 10912, 99L);
        String ipv6 = MessageDecoder.createMessageId(new InetSocketAddress("2001:db8::1", 10911), 99L);
        assertEquals(MessageIds.IPV6_ID_LENGTH, ipv6.length());
        StoreHostMapper identity = StoreHostMapper::pack;

        assertSame(unknownHost, MessageIds.rewrite(unknownHost, MAPPER));
        assertSame(known, MessageIds.rewrite(known, StoreHostMapper.NONE));
        assertSame(known, MessageIds.rewrite(known, identity));
        assertSame(ipv6, MessageIds.rewrite(ipv6, (ip, port) -> StoreHostMapper.pack(GATEWAY, 1)));
        assertNull(MessageIds.rewrite(null, MAPPER));
        for (String notAnId : new String[] {"", "0A00000100002A9F", known + "0", known.substring(1),
            "0A00000100002A9F000000000000006G", known.toLowerCase(Locale.ROOT).replace('a', 'x'),
            " " + known.substring(1), known.replace('0', '-')}) {
            assertSame(notAnId, MessageIds.rewrite(notAnId, (ip, port) -> StoreHostMapper.pack(GATEWAY, 1)), notAnId);
        }
    }

    @Test
    void rewriteListRewritesEachId() {
        String a = MessageIds.create(BROKER, 10911, 1L);
        String b = MessageIds.create(BROKER, 10912, 2L);    // unknown
        String c = MessageIds.create(BROKER, 10911, 3L);
        String ra = MessageIds.create(GATEWAY, 30911, 1L);
        String rc = MessageIds.create(GATEWAY, 30911, 3L);

        assertEquals(ra + "," + b + "," + rc, MessageIds.rewriteList(a + "," + b + "," + c, MAPPER));
        assertEquals(ra, MessageIds.rewriteList(a, MAPPER));
        assertEquals(b + "," + rc, MessageIds.rewriteList(b + "," + c, MAPPER));
        assertEquals(ra + ",", MessageIds.rewriteList(a + ",", MAPPER));
        assertEquals("," + ra + ",,x," + rc, MessageIds.rewriteList("," + a + ",,x," + c, MAPPER));
        assertEquals(" " + a + "," + rc, MessageIds.rewriteList(" " + a + "," + c, MAPPER), "a padded id is not an id");

        String unchanged = b + "," + b;
        assertSame(unchanged, MessageIds.rewriteList(unchanged, MAPPER));
        String single = b;
        assertSame(single, MessageIds.rewriteList(single, MAPPER));
        assertSame("", MessageIds.rewriteList("", MAPPER));
        assertNull(MessageIds.rewriteList(null, MAPPER));
    }

    @Test
    void rewriteListMatchesRewriteOnRandomLists() {
        Random random = new Random(11);
        StoreHostMapper mapper = (ip, port) -> (ip & 1) == 0 ? StoreHostMapper.pack(ip + 1, port + 1) : StoreHostMapper.UNKNOWN;
        for (int i = 0; i < 1_000; i++) {
            int n = 1 + random.nextInt(8);
            StringBuilder ids = new StringBuilder();
            StringBuilder expected = new StringBuilder();
            for (int j = 0; j < n; j++) {
                String id = MessageIds.create(random.nextInt(), random.nextInt(65536), random.nextLong());
                if (j > 0) {
                    ids.append(',');
                    expected.append(',');
                }
                ids.append(id);
                expected.append(MessageIds.rewrite(id, mapper));
            }
            assertEquals(expected.toString(), MessageIds.rewriteList(ids.toString(), mapper));
        }
    }

    @Test
    void rewriteListInPlaceMatchesRewriteList() {
        String a = MessageIds.create(BROKER, 10911, 1L);
        String b = MessageIds.create(BROKER, 10912, 2L);    // unknown
        String c = MessageIds.create(BROKER, 10911, 3L);
        String lower = "0a00000100002a9f00000001abcdef01";
        Random random = new Random(13);
        java.util.List<String> lists = new java.util.ArrayList<>(java.util.List.of(a + "," + b + "," + c, a, "",
            a + ",", "," + a + ",,x," + c, " " + a + "," + c, b + "," + b, lower + "," + a, "x,y"));
        for (int i = 0; i < 500; i++) {
            StringBuilder ids = new StringBuilder();
            for (int j = 0, n = 1 + random.nextInt(8); j < n; j++) {
                ids.append(j > 0 ? "," : "").append(random.nextInt(4) == 0 ? b : MessageIds.create(BROKER,
                    random.nextBoolean() ? 10911 : random.nextInt(65536), random.nextLong()));
            }
            lists.add(ids.toString());
        }
        for (String list : lists) {
            byte[] bytes = ("<<" + list + ">>").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            MessageIds.rewriteListInPlace(bytes, 2, bytes.length - 2, MAPPER);
            assertEquals("<<" + MessageIds.rewriteList(list, MAPPER) + ">>",
                new String(bytes, java.nio.charset.StandardCharsets.US_ASCII), list);
        }
    }

    @Test
    void storeHostAndOffsetOfOtherShapes() throws Exception {
        assertEquals(StoreHostMapper.UNKNOWN, MessageIds.storeHost("not an id"));
        assertEquals(StoreHostMapper.UNKNOWN, MessageIds.storeHost(null));
        String ipv6 = MessageDecoder.createMessageId(new InetSocketAddress("2001:db8::1", 10911), 1234L);
        assertEquals(StoreHostMapper.UNKNOWN, MessageIds.storeHost(ipv6));
        assertFalse(MessageIds.isIpv4OffsetId(ipv6));
        assertEquals(1234L, MessageIds.commitLogOffset(ipv6));
        assertThrows(IllegalArgumentException.class, () -> MessageIds.commitLogOffset("0A00000100002A9F"));
        assertThrows(IllegalArgumentException.class, () -> MessageIds.commitLogOffset(null));
    }

    @Test
    void packing() {
        int ip = StoreHostMapper.ipv4(192, 168, 0, 1);
        assertEquals(0xC0A80001, ip);
        long packed = StoreHostMapper.pack(ip, 10911);
        assertTrue(packed < 0, "a high ip makes the packed value negative, yet it is not UNKNOWN");
        assertEquals(ip, StoreHostMapper.ip(packed));
        assertEquals(10911, StoreHostMapper.port(packed));
    }
}
