package io.rmqgw.codec.message;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.junit.jupiter.api.Test;

class StoredRecordsTest {

    static final int BROKER_A = StoreHostMapper.ipv4(10, 0, 0, 1);
    static final int BROKER_B = StoreHostMapper.ipv4(10, 0, 0, 2);
    static final int GATEWAY = StoreHostMapper.ipv4(192, 168, 1, 200);

    /** 10.0.0.1:10911 -> 192.168.1.200:20911, 10.0.0.2:10911 -> 192.168.1.200:20912. */
    static final StoreHostMapper MAPPER = (ip, port) -> {
        if (port == 10911 && ip == BROKER_A) {
            return StoreHostMapper.pack(GATEWAY, 20911);
        }
        if (port == 10911 && ip == BROKER_B) {
            return StoreHostMapper.pack(GATEWAY, 20912);
        }
        return StoreHostMapper.UNKNOWN;
    };

    @Test
    void constantsMatchRocketMq() {
        assertEquals(MessageDecoder.MESSAGE_MAGIC_CODE, StoredRecords.MAGIC_CODE_V1);
        assertEquals(MessageDecoder.MESSAGE_MAGIC_CODE_V2, StoredRecords.MAGIC_CODE_V2);
        assertEquals(MessageDecoder.SYSFLAG_POSITION, StoredRecords.SYSFLAG_OFFSET);
        assertEquals(MessageSysFlag.BORNHOST_V6_FLAG, StoredRecords.BORNHOST_V6_FLAG);
        assertEquals(MessageSysFlag.STOREHOSTADDRESS_V6_FLAG, StoredRecords.STOREHOST_V6_FLAG);
    }

    @Test
    void rewritesAnIpv4StoreHostInPlace() throws Exception {
        MessageExt original = message("10.0.0.1", 10911, "127.0.0.1", 7, 123_456_789L);
        byte[] bytes = MessageDecoder.encode(original, false);
        ByteBuf body = Unpooled.wrappedBuffer(bytes.clone());

        assertEquals(1, StoredRecords.rewriteStoreHosts(body, MAPPER));

        assertEquals(0, body.readerIndex());
        assertEquals(bytes.length, body.writerIndex());
        List<MessageExt> decoded = MessageDecoder.decodes(body.nioBuffer());
        assertEquals(1, decoded.size());
        MessageExt m = decoded.get(0);
        assertEquals(new InetSocketAddress("192.168.1.200", 20911), m.getStoreHost());
        assertEquals(MessageIds.create(GATEWAY, 20911, 123_456_789L), ((MessageClientExt) m).getOffsetMsgId());
        assertSameExceptStoreHost(original, m);
        assertOnlyStoreHostBytesDiffer(bytes, body, storeHostOffset(original));
    }

    @Test
    void rewritesBehindAnIpv6BornHost() throws Exception {
        MessageExt original = message("10.0.0.2", 10911, "fe80::1234:5678", 1, 42L);
        byte[] bytes = MessageDecoder.encode(original, false);
        ByteBuf body = Unpooled.wrappedBuffer(bytes.clone());

        assertEquals(1, StoredRecords.rewriteStoreHosts(body, MAPPER));

        MessageExt m = MessageDecoder.decodes(body.nioBuffer()).get(0);
        assertEquals(new InetSocketAddress("192.168.1.200", 20912), m.getStoreHost());
        assertEquals(MessageIds.create(GATEWAY, 20912, 42L), ((MessageClientExt) m).getOffsetMsgId());
        assertSameExceptStoreHost(original, m);
        assertOnlyStoreHostBytesDiffer(bytes, body, storeHostOffset(original));
    }

    @Test
    void leavesIpv6StoreHostsAlone() throws Exception {
        for (String bornHost : new String[] {"127.0.0.1", "::1"}) {
            byte[] bytes = MessageDecoder.encode(message("2001:db8::1", 10911, bornHost, 0, 1L), false);
            ByteBuf body = Unpooled.wrappedBuffer(bytes.clone());
            StoreHostMapper everything = (ip, port) -> StoreHostMapper.pack(GATEWAY, 1);

            assertEquals(0, StoredRecords.rewriteStoreHosts(body, everything));
            assertArrayEquals(bytes, bytes(body));
            assertEquals(1, StoredRecords.count(body), "the record is still walked over");
        }
    }

    @Test
    void walksManyRecordsAndKeepsUnknownHosts() throws Exception {
        MessageExt[] messages = {
            message("10.0.0.1", 10911, "127.0.0.1", 0, 100L),
            message("10.0.0.9", 10911, "127.0.0.1", 1, 200L),        // unknown to the mapper
            message("10.0.0.2", 10911, "::1", 2, 300L),
            message("2001:db8::2", 10911, "127.0.0.1", 3, 400L),     // IPv6 store host
            message("10.0.0.1", 10912, "127.0.0.1", 4, 500L),        // unknown port
            message("10.0.0.2", 10911, "127.0.0.1", 5, 600L),
        };
        byte[] all = concat(messages);
        ByteBuf body = Unpooled.wrappedBuffer(all.clone());

        assertEquals(3, StoredRecords.rewriteStoreHosts(body, MAPPER));

        List<MessageExt> decoded = MessageDecoder.decodes(body.nioBuffer());
        assertEquals(messages.length, decoded.size());
        InetSocketAddress[] expected = {
            new InetSocketAddress("192.168.1.200", 20911),
            (InetSocketAddress) messages[1].getStoreHost(),
            new InetSocketAddress("192.168.1.200", 20912),
            (InetSocketAddress) messages[3].getStoreHost(),
            (InetSocketAddress) messages[4].getStoreHost(),
            new InetSocketAddress("192.168.1.200", 20912),
        };
        for (int i = 0; i < messages.length; i++) {
            assertEquals(expected[i], decoded.get(i).getStoreHost(), "record " + i);
            assertSameExceptStoreHost(messages[i], decoded.get(i));
        }
        assertEquals(messages.length, StoredRecords.count(body));
    }

    @Test
    void unknownHostsChangeNothing() throws Exception {
        byte[] all = concat(message("10.0.0.1", 10911, "127.0.0.1", 0, 1L), message("10.0.0.2", 10911, "::1", 0, 2L));
        ByteBuf body = Unpooled.wrappedBuffer(all.clone());
        assertEquals(0, StoredRecords.rewriteStoreHosts(body, StoreHostMapper.NONE));
        assertArrayEquals(all, bytes(body));
    }

    @Test
    void rewritesMagicCodeV2Records() throws Exception {
        MessageExt original = message("10.0.0.1", 10911, "127.0.0.1", 0, 77L);
        byte[] v2 = toMagicCodeV2(MessageDecoder.encode(original, false), original);
        ByteBuf body = Unpooled.wrappedBuffer(concat(v2, MessageDecoder.encode(message("10.0.0.2", 10911, "::1", 0, 78L), false)));

        assertEquals(2, StoredRecords.rewriteStoreHosts(body, MAPPER));

        List<MessageExt> decoded = MessageDecoder.decodes(body.nioBuffer());
        assertEquals(2, decoded.size());
        assertEquals(original.getTopic(), decoded.get(0).getTopic());
        assertEquals(new InetSocketAddress("192.168.1.200", 20911), decoded.get(0).getStoreHost());
        assertEquals(new InetSocketAddress("192.168.1.200", 20912), decoded.get(1).getStoreHost());
    }

    @Test
    void readsTopicAndPropertiesOfV1AndV2Records() throws Exception {
        MessageExt first = message("10.0.0.1", 10911, "127.0.0.1", 3, 77L);
        MessageExt second = message("10.0.0.2", 10911, "::1", 4, 78L);
        byte[] v1 = MessageDecoder.encode(first, false);
        ByteBuf body = Unpooled.wrappedBuffer(concat(v1, toMagicCodeV2(MessageDecoder.encode(second, false), second)));
        assertEquals("TopicTest-3", StoredRecords.topic(body, 0));
        assertEquals("v3", StoredRecords.property(body, 0, "k"));
        assertEquals(first.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
            StoredRecords.property(body, 0, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
        assertEquals(null, StoredRecords.property(body, 0, "absent"));
        assertEquals("TopicTest-4", StoredRecords.topic(body, v1.length));
        assertEquals("v4", StoredRecords.property(body, v1.length, "k"));
        assertEquals(null, StoredRecords.topic(body, 1), "no record starts there");
        assertEquals(null, StoredRecords.property(Unpooled.wrappedBuffer(new byte[8]), 0, "k"));
    }

    @Test
    void honoursReaderIndexAndWriterIndex() throws Exception {
        byte[] record = MessageDecoder.encode(message("10.0.0.1", 10911, "127.0.0.1", 0, 5L), false);
        byte[] frame = new byte[30 + record.length * 2];
        Arrays.fill(frame, (byte) 0x5A);
        System.arraycopy(record, 0, frame, 30, record.length);
        System.arraycopy(record, 0, frame, 30 + record.length, record.length);
        ByteBuf whole = Unpooled.wrappedBuffer(frame);
        // only the first record is in the window
        ByteBuf window = whole.slice(30, record.length);

        assertEquals(1, StoredRecords.rewriteStoreHosts(window, MAPPER));

        byte[] after = bytes(whole);
        assertEquals(new InetSocketAddress("192.168.1.200", 20911),
            MessageDecoder.decode(ByteBuffer.wrap(after, 30, record.length)).getStoreHost());
        assertArrayEquals(record, Arrays.copyOfRange(after, 30 + record.length, after.length), "outside the window");
        for (int i = 0; i < 30; i++) {
            assertEquals(0x5A, after[i]);
        }
    }

    @Test
    void rewritesAcrossCompositeComponents() throws Exception {
        byte[] all = concat(message("10.0.0.1", 10911, "127.0.0.1", 0, 1L), message("10.0.0.2", 10911, "127.0.0.1", 0, 2L));
        ByteBuf direct = ByteBufAllocator.DEFAULT.directBuffer(all.length);
        CompositeByteBuf composite = ByteBufAllocator.DEFAULT.compositeBuffer();
        try {
            direct.writeBytes(all);
            // cut through the first record's store host (IPv4 hosts: STOREHOST at 64) and the second record
            int[] cuts = {0, 66, 150, all.length};
            for (int i = 0; i + 1 < cuts.length; i++) {
                composite.addComponent(true, direct.retainedSlice(cuts[i], cuts[i + 1] - cuts[i]));
            }
            assertEquals(2, StoredRecords.rewriteStoreHosts(composite, MAPPER));
            List<MessageExt> decoded = MessageDecoder.decodes(ByteBuffer.wrap(bytes(composite)));
            assertEquals(new InetSocketAddress("192.168.1.200", 20911), decoded.get(0).getStoreHost());
            assertEquals(new InetSocketAddress("192.168.1.200", 20912), decoded.get(1).getStoreHost());
        } finally {
            composite.release();
            direct.release();
        }
    }

    @Test
    void readOnlyBuffersAreLeftAlone() throws Exception {
        byte[] record = MessageDecoder.encode(message("10.0.0.1", 10911, "127.0.0.1", 0, 1L), false);
        ByteBuf body = Unpooled.wrappedBuffer(record.clone()).asReadOnly();
        assertEquals(0, StoredRecords.rewriteStoreHosts(body, MAPPER));
        assertArrayEquals(record, bytes(body));
        assertEquals(0, StoredRecords.rewriteStoreHosts(null, MAPPER));
    }

    @Test
    void truncatedBodiesRewriteOnlyWholeRecords() throws Exception {
        MessageExt[] messages = {
            message("10.0.0.1", 10911, "127.0.0.1", 0, 1L),
            message("10.0.0.2", 10911, "::1", 1, 2L),
            message("10.0.0.1", 10911, "127.0.0.1", 2, 3L),
        };
        byte[] all = concat(messages);
        int[] ends = new int[messages.length];
        int at = 0;
        for (int i = 0; i < messages.length; i++) {
            at += MessageDecoder.encode(messages[i], false).length;
            ends[i] = at;
        }
        for (int cut = 0; cut <= all.length; cut++) {
            byte[] copy = Arrays.copyOf(all, cut);
            ByteBuf body = Unpooled.wrappedBuffer(copy);
            int whole = 0;
            while (whole < ends.length && ends[whole] <= cut) {
                whole++;
            }
            assertEquals(whole, StoredRecords.rewriteStoreHosts(body, MAPPER), "cut at " + cut);
            int intact = whole == 0 ? 0 : ends[whole - 1];
            assertArrayEquals(Arrays.copyOfRange(all, intact, cut), Arrays.copyOfRange(copy, intact, cut),
                "the partial record at " + intact + " is untouched (cut at " + cut + ")");
            assertEquals(whole, StoredRecords.count(body));
        }
    }

    @Test
    void stopsAtTheFirstMalformedRecord() throws Exception {
        byte[] first = MessageDecoder.encode(message("10.0.0.1", 10911, "127.0.0.1", 0, 1L), false);
        byte[] second = MessageDecoder.encode(message("10.0.0.2", 10911, "127.0.0.1", 0, 2L), false);
        int bodyLengthAt = 84;
        int topicLengthAt = bodyLengthAt + 4 + ByteBuffer.wrap(second).getInt(bodyLengthAt);
        int propertiesLengthAt = topicLengthAt + 1 + second[topicLengthAt];
        // each corruption of the second record; a third, valid record follows and must not be reached
        List<java.util.function.Consumer<ByteBuffer>> corruptions = List.of(
            b -> b.putInt(0, 90),                        // TOTALSIZE below the minimum
            b -> b.putInt(0, -1),                        // negative TOTALSIZE
            b -> b.putInt(0, Integer.MAX_VALUE),         // past the buffer
            b -> b.putInt(0, b.getInt(0) + 1),           // longer than its fields
            b -> b.putInt(0, b.getInt(0) - 1),           // shorter than its fields
            b -> b.putInt(4, MessageDecoder.BLANK_MAGIC_CODE),
            b -> b.putInt(4, 0),
            b -> b.putInt(bodyLengthAt, -5),
            b -> b.putInt(bodyLengthAt, 1 << 20),
            b -> b.put(topicLengthAt, (byte) -3),
            b -> b.put(topicLengthAt, (byte) 120),
            b -> b.putShort(propertiesLengthAt, (short) -1),
            b -> b.putShort(propertiesLengthAt, (short) (b.getShort(propertiesLengthAt) + 1)),
            b -> b.putInt(36, b.getInt(36) | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG), // flags disagree with layout
            b -> b.putInt(36, b.getInt(36) | MessageSysFlag.BORNHOST_V6_FLAG));
        for (int i = 0; i < corruptions.size(); i++) {
            byte[] bad = second.clone();
            corruptions.get(i).accept(ByteBuffer.wrap(bad));
            byte[] all = concat(first, bad, first);
            ByteBuf body = Unpooled.wrappedBuffer(all.clone());
            assertEquals(1, StoredRecords.rewriteStoreHosts(body, MAPPER), "corruption " + i);
            assertArrayEquals(Arrays.copyOfRange(all, first.length, all.length),
                Arrays.copyOfRange(bytes(body), first.length, all.length), "corruption " + i);
            assertEquals(1, StoredRecords.count(body));
        }
    }

    @Test
    void neverThrowsOnGarbage() throws Exception {
        Random random = new Random(20240611L);
        byte[] valid = concat(message("10.0.0.1", 10911, "127.0.0.1", 0, 1L), message("10.0.0.2", 10911, "::1", 0, 2L));
        StoreHostMapper everything = (ip, port) -> StoreHostMapper.pack(ip ^ 1, port);
        for (int i = 0; i < 20_000; i++) {
            byte[] bytes;
            if (i % 2 == 0) {
                bytes = new byte[random.nextInt(400)];
                random.nextBytes(bytes);
                if (bytes.length >= 8 && random.nextBoolean()) {
                    // plausible prefix: a size within the buffer and a real magic code
                    ByteBuffer.wrap(bytes).putInt(0, 91 + random.nextInt(Math.max(1, bytes.length - 90)))
                        .putInt(4, random.nextBoolean() ? StoredRecords.MAGIC_CODE_V1 : StoredRecords.MAGIC_CODE_V2);
                }
            } else {
                // valid records with a few flipped bytes
                bytes = valid.clone();
                for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
                    bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
                }
                bytes = Arrays.copyOf(bytes, random.nextInt(bytes.length + 1));
            }
            ByteBuf body = Unpooled.wrappedBuffer(bytes);
            int n = StoredRecords.rewriteStoreHosts(body, everything);
            assertTrue(n >= 0 && n <= bytes.length / StoredRecords.MIN_RECORD_LENGTH);
        }
    }

    @Test
    void walkingDoesNotAllocate() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported()
            && threads.isThreadAllocatedMemoryEnabled());
        MessageExt[] messages = new MessageExt[32];
        for (int i = 0; i < messages.length; i++) {
            messages[i] = message(i % 2 == 0 ? "10.0.0.1" : "10.0.0.2", 10911, i % 3 == 0 ? "::1" : "127.0.0.1", i, i);
        }
        // unpooled heap: not wrapped by the leak detector, which records (allocates) on every access
        ByteBuf body = Unpooled.wrappedBuffer(concat(messages));
        StoreHostMapper flip = (ip, port) -> StoreHostMapper.pack(ip ^ 0x00FF0000, port);
        for (int i = 0; i < 20_000; i++) {
            StoredRecords.rewriteStoreHosts(body, flip);
        }
        long thread = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(thread);
        int total = 0;
        for (int i = 0; i < 10_000; i++) {
            total += StoredRecords.rewriteStoreHosts(body, flip);
        }
        long allocated = threads.getThreadAllocatedBytes(thread) - before;
        assertEquals(32 * 10_000, total);
        assertTrue(allocated < 64 * 1024, "allocated " + allocated + " bytes for 320,000 records");
    }

    // ---- reading fields and re-addressing a delivery (virtual queues) ----

    @Test
    void readsTheFieldsOfEachRecord() throws Exception {
        MessageExt[] messages = {
            message("10.0.0.1", 10911, "127.0.0.1", 3, 100L),
            message("10.0.0.2", 10911, "::1", 5, 200L),
            message("2001:db8::2", 10911, "::1", 7, 300L),
        };
        ByteBuf body = Unpooled.wrappedBuffer(concat(messages));
        int pos = 0;
        for (MessageExt m : messages) {
            int length = StoredRecords.recordLength(body, pos);
            assertEquals(MessageDecoder.encode(m, false).length, length);
            assertEquals(m.getQueueId(), StoredRecords.queueId(body, pos));
            assertEquals(m.getQueueOffset(), StoredRecords.queueOffset(body, pos));
            assertEquals(m.getCommitLogOffset(), StoredRecords.commitLogOffset(body, pos));
            assertEquals(m.getReconsumeTimes(), StoredRecords.reconsumeTimes(body, pos));
            assertEquals(m.getReconsumeTimes(), body.getInt(pos + StoredRecords.reconsumeTimesOffset(body, pos)));
            pos += length;
        }
        assertEquals(body.writerIndex(), pos);
        assertEquals(-1, StoredRecords.recordLength(body, pos), "nothing after the last record");
        assertEquals(-1, StoredRecords.recordLength(body.copy(0, body.getInt(0) - 1), 0), "a truncated record is not one");
        assertEquals(-1, StoredRecords.recordLength(body, 1), "no record starts there");
        assertEquals(-1, StoredRecords.reconsumeTimesOffset(body, pos), "checked as recordLength checks");
        assertEquals(-1, StoredRecords.reconsumeTimesOffset(body.copy(0, body.getInt(0) - 1), 0));
        assertEquals(-1, StoredRecords.reconsumeTimesOffset(body, 1));
        assertEquals(-1, StoredRecords.reconsumeTimes(Unpooled.wrappedBuffer(new byte[200]), 0));
    }

    @Test
    void setDeliveryChangesOnlyQueueIdOffsetAndReconsumeTimes() throws Exception {
        for (String[] hosts : new String[][] {{"10.0.0.1", "127.0.0.1"}, {"10.0.0.1", "::1"}, {"2001:db8::2", "::1"}}) {
            MessageExt original = message(hosts[0], 10911, hosts[1], 3, 4242L);
            byte[] v1 = MessageDecoder.encode(original, false);
            for (byte[] before : new byte[][] {v1, toMagicCodeV2(v1, original)}) {
                ByteBuf body = Unpooled.wrappedBuffer(concat(new byte[17], before));

                ByteBuf copy = body.copy();
                assertTrue(StoredRecords.setDelivery(body, 17, 9, 123_456_789_012L, 5));
                StoredRecords.setDelivery(copy, 17, StoredRecords.reconsumeTimesOffset(copy, 17), 9, 123_456_789_012L, 5);
                assertEquals(body, copy, "the unchecked form, given the offset, writes the same bytes");

                ByteBuf record = body.slice(17, before.length);
                MessageExt m = MessageDecoder.decode(record.nioBuffer(), true, false, false);
                assertEquals(9, m.getQueueId());
                assertEquals(123_456_789_012L, m.getQueueOffset());
                assertEquals(5, m.getReconsumeTimes());
                assertEquals(original.getTopic(), m.getTopic());
                assertArrayEquals(original.getBody(), m.getBody());
                assertEquals(original.getCommitLogOffset(), m.getCommitLogOffset());
                assertEquals(original.getStoreHost(), m.getStoreHost());
                assertEquals(original.getProperties(), m.getProperties());
                int reconsumeAt = StoredRecordsTest.storeHostOffset(original)
                    + ((original.getSysFlag() & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) == 0 ? 8 : 20);
                byte[] now = bytes(record);
                for (int i = 0; i < before.length; i++) {
                    boolean patched = (i >= 12 && i < 16) || (i >= 20 && i < 28) || (i >= reconsumeAt && i < reconsumeAt + 4);
                    if (!patched) {
                        assertEquals(before[i], now[i], "byte " + i);
                    }
                }
            }
        }
    }

    @Test
    void setDeliveryRefusesWhatIsNotARecord() throws Exception {
        byte[] record = MessageDecoder.encode(message("10.0.0.1", 10911, "127.0.0.1", 0, 1L), false);
        ByteBuf truncated = Unpooled.wrappedBuffer(Arrays.copyOf(record, record.length - 1));
        assertFalse(StoredRecords.setDelivery(truncated, 0, 1, 1, 1));
        assertArrayEquals(Arrays.copyOf(record, record.length - 1), bytes(truncated));
        ByteBuf readOnly = Unpooled.wrappedBuffer(record.clone()).asReadOnly();
        assertFalse(StoredRecords.setDelivery(readOnly, 0, 1, 1, 1));
        assertFalse(StoredRecords.setDelivery(Unpooled.wrappedBuffer(record.clone()), 1, 1, 1, 1));
        assertFalse(StoredRecords.setDelivery(Unpooled.wrappedBuffer(record.clone()), -1, 1, 1, 1));
    }

    // ---- helpers ----

    static MessageExt message(String storeHost, int storePort, String bornHost, int queueId, long commitLogOffset)
        throws UnknownHostException {
        MessageExt m = new MessageExt();
        m.setTopic("TopicTest-" + queueId);
        m.setBody(("hello " + commitLogOffset + " ✓").getBytes(StandardCharsets.UTF_8));
        m.setBodyCRC(0x1234567 + queueId);
        m.setQueueId(queueId);
        m.setFlag(3);
        m.setQueueOffset(1000L + queueId);
        m.setCommitLogOffset(commitLogOffset);
        m.setBornTimestamp(1_700_000_000_000L);
        m.setStoreTimestamp(1_700_000_000_123L);
        m.setReconsumeTimes(2);
        m.setPreparedTransactionOffset(0L);
        InetAddress born = InetAddress.getByName(bornHost);
        InetAddress store = InetAddress.getByName(storeHost);
        m.setBornHost(new InetSocketAddress(born, 54321));
        m.setStoreHost(new InetSocketAddress(store, storePort));
        if (born.getAddress().length == 16) {
            m.setBornHostV6Flag();
        }
        if (store.getAddress().length == 16) {
            m.setStoreHostAddressV6Flag();
        }
        m.putUserProperty("k", "v" + queueId);
        m.getProperties().put(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, "7F00000100002A9F0000000000000" + queueId);
        return m;
    }

    static byte[] concat(MessageExt... messages) throws Exception {
        byte[][] parts = new byte[messages.length][];
        for (int i = 0; i < messages.length; i++) {
            parts[i] = MessageDecoder.encode(messages[i], false);
        }
        return concat(parts);
    }

    static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] p : parts) {
            length += p.length;
        }
        byte[] out = new byte[length];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    static byte[] bytes(ByteBuf buf) {
        byte[] out = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), out);
        return out;
    }

    /** Offset of STOREHOST in the record of {@code m}. */
    static int storeHostOffset(MessageExt m) {
        return 48 + ((m.getSysFlag() & MessageSysFlag.BORNHOST_V6_FLAG) == 0 ? 8 : 20) + 8;
    }

    /** The same record with magic code v2: a 2-byte topic length. */
    static byte[] toMagicCodeV2(byte[] v1, MessageExt m) {
        int bodyLengthAt = storeHostOffset(m) + ((m.getSysFlag() & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) == 0 ? 8 : 20) + 12;
        int topicLengthAt = bodyLengthAt + 4 + ByteBuffer.wrap(v1).getInt(bodyLengthAt);
        ByteBuffer v2 = ByteBuffer.allocate(v1.length + 1);
        v2.put(v1, 0, topicLengthAt);
        v2.putShort(topicLengthAt, v1[topicLengthAt]).position(topicLengthAt + 2);
        v2.put(v1, topicLengthAt + 1, v1.length - topicLengthAt - 1);
        v2.putInt(0, v1.length + 1).putInt(4, StoredRecords.MAGIC_CODE_V2);
        return v2.array();
    }

    static void assertSameExceptStoreHost(MessageExt expected, MessageExt actual) {
        assertEquals(expected.getTopic(), actual.getTopic());
        assertArrayEquals(expected.getBody(), actual.getBody());
        assertEquals(expected.getQueueId(), actual.getQueueId());
        assertEquals(expected.getQueueOffset(), actual.getQueueOffset());
        assertEquals(expected.getCommitLogOffset(), actual.getCommitLogOffset());
        assertEquals(expected.getBornHost(), actual.getBornHost());
        assertEquals(expected.getBornTimestamp(), actual.getBornTimestamp());
        assertEquals(expected.getStoreTimestamp(), actual.getStoreTimestamp());
        assertEquals(expected.getBodyCRC(), actual.getBodyCRC());
        assertEquals(expected.getReconsumeTimes(), actual.getReconsumeTimes());
        assertEquals(expected.getProperties(), actual.getProperties());
    }

    static void assertOnlyStoreHostBytesDiffer(byte[] before, ByteBuf after, int storeHostOffset) {
        byte[] now = bytes(after);
        for (int i = 0; i < before.length; i++) {
            if (i < storeHostOffset || i >= storeHostOffset + 8) {
                assertEquals(before[i], now[i], "byte " + i);
            }
        }
    }
}
