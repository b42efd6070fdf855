package io.rmqgw.codec.message;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.rmqgw.testing.fuzz.BoundedFuzz;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes stored-record patching ({@link StoredRecords}) and offset message ids ({@link MessageIds}).
 * Properties: nothing throws (ids: only {@code commitLogOffset}'s documented IllegalArgumentException);
 * a rewrite changes store hosts only, so the walk finds the same records afterwards and rewriting
 * back with the inverse mapping restores every byte; a read-only buffer is left alone; a buffer in
 * two components is patched exactly as a contiguous one; an id list keeps its length and separators.
 */
class StoredRecordsFuzzTest {

    /** Knows every address: maps it to another and back (an involution). */
    private static final StoreHostMapper FLIP = (ip, port) -> StoreHostMapper.pack(ip ^ 0x5A5A5A5A, port ^ 0x1234);

    @FuzzTest(maxDuration = "5m")
    void records(byte[] input) {
        patchRecords(input);
    }

    @FuzzTest(maxDuration = "5m")
    void messageIds(byte[] input) {
        rewriteIds(input);
    }

    @Test
    @Timeout(120)
    void boundedRun() {
        BoundedFuzz.run(StoredRecordsFuzzTest.class, "records", 0x5709EDL, 20_000, StoredRecordsFuzzTest::patchRecords);
        BoundedFuzz.run(StoredRecordsFuzzTest.class, "messageIds", 0x1D5L, 20_000, StoredRecordsFuzzTest::rewriteIds);
    }

    static void patchRecords(byte[] input) {
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false, true);
        ByteBuf buf = alloc.heapBuffer(input.length + 3);
        // a reader index past 0, as for a body slice after the frame's header
        buf.writeBytes(new byte[3]).writeBytes(input).readerIndex(3);
        CompositeByteBuf split = alloc.compositeBuffer();
        try {
            int records = StoredRecords.count(buf);
            check(StoredRecords.rewriteStoreHosts(buf.asReadOnly(), FLIP) == 0, "a read-only buffer is not patched");
            check(Arrays.equals(bytes(buf), input), "a read-only buffer is left as it was");

            int rewritten = StoredRecords.rewriteStoreHosts(buf, FLIP);
            check(rewritten <= records, rewritten + " store hosts rewritten in " + records + " records");
            check(buf.readerIndex() == 3 && buf.writerIndex() == input.length + 3, "indexes unmoved");
            check(StoredRecords.count(buf) == records, "patching keeps every record well formed");
            byte[] patched = bytes(buf);
            check(differingBytes(patched, input) <= 8 * rewritten, "only store hosts change");

            int cut = input.length == 0 ? 0 : Math.floorMod(Arrays.hashCode(input), input.length + 1);
            split.addComponent(true, alloc.heapBuffer(cut).writeBytes(input, 0, cut));
            split.addComponent(true, alloc.heapBuffer(input.length - cut).writeBytes(input, cut, input.length - cut));
            check(StoredRecords.rewriteStoreHosts(split, FLIP) == rewritten, "a composite is patched as a contiguous buffer");
            check(Arrays.equals(bytes(split), patched), "to the same bytes");

            check(StoredRecords.rewriteStoreHosts(buf, FLIP) == rewritten, "the patched records are found again");
            check(Arrays.equals(bytes(buf), input), "rewriting back restores every byte");
            check(StoredRecords.rewriteStoreHosts(buf, StoreHostMapper.NONE) == 0, "an unknown address is kept");
        } finally {
            buf.release();
            split.release();
        }
        check(alloc.metric().usedHeapMemory() == 0, "nothing held");
    }

    static void rewriteIds(byte[] input) {
        String ids = new String(input, StandardCharsets.ISO_8859_1); // one char per byte, any byte
        String single = MessageIds.rewrite(ids, FLIP);
        check(single.length() == ids.length(), "an id keeps its length");
        check(flips(ids) ? !single.equalsIgnoreCase(ids) : single == ids, "IPv4 offset ids change, nothing else");
        check(MessageIds.rewrite(single, FLIP).equalsIgnoreCase(ids), "rewriting back restores the id");
        if (MessageIds.isIpv4OffsetId(ids)) {
            long host = MessageIds.storeHost(ids);
            check(MessageIds.create(StoreHostMapper.ip(host), StoreHostMapper.port(host), MessageIds.commitLogOffset(ids))
                .equalsIgnoreCase(ids), "an id is its store host and offset");
            check(MessageIds.commitLogOffset(single) == MessageIds.commitLogOffset(ids), "the offset is kept");
        } else {
            check(MessageIds.storeHost(ids) == StoreHostMapper.UNKNOWN, "no store host outside an IPv4 id");
            try {
                long offset = MessageIds.commitLogOffset(ids);
                check(ids.length() == MessageIds.IPV6_ID_LENGTH, "only IPv6 ids have an offset besides IPv4 ones: " + offset);
            } catch (IllegalArgumentException expected) {
                // not an offset id: documented
            }
        }
        String list = MessageIds.rewriteList(ids, FLIP);
        check(list.length() == ids.length(), "a list keeps its length");
        for (int i = 0; i < ids.length(); i++) {
            check((ids.charAt(i) == ',') == (list.charAt(i) == ','), "separators stay where they were");
        }
        check(MessageIds.rewriteList(list, FLIP).equalsIgnoreCase(ids), "rewriting a list back restores it");
        check(MessageIds.rewriteList(ids, StoreHostMapper.NONE) == ids, "nothing known: the same instance");
    }

    /** Whether FLIP knows the id's address (all but one address, whose image would be UNKNOWN). */
    private static boolean flips(String id) {
        long host = MessageIds.storeHost(id);
        return MessageIds.isIpv4OffsetId(id)
            && FLIP.map(StoreHostMapper.ip(host), StoreHostMapper.port(host)) != StoreHostMapper.UNKNOWN;
    }

    private static int differingBytes(byte[] a, byte[] b) {
        int n = 0;
        for (int i = 0; i < a.length; i++) {
            n += a[i] != b[i] ? 1 : 0;
        }
        return n;
    }

    private static byte[] bytes(ByteBuf buf) {
        byte[] out = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), out);
        return out;
    }

    private static void check(boolean condition, String property) {
        if (!condition) {
            throw new AssertionError(property);
        }
    }
}
