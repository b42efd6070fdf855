package io.rmqgw.codec.message;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;

/** Seed inputs of {@link StoredRecordsFuzzTest}: records as rocketmq-common's MessageDecoder encodes them, and real offset ids. */
public final class StoredRecordsSeeds {

    private StoredRecordsSeeds() {
    }

    /** Three IPv4 records from two brokers, as a pull answer's body carries them. */
    public static byte[] threeRecords() throws Exception {
        return StoredRecordsTest.concat(
            StoredRecordsTest.message("10.0.0.1", 10911, "10.0.0.9", 0, 1024L),
            StoredRecordsTest.message("10.0.0.2", 10911, "10.0.0.9", 1, 2048L),
            StoredRecordsTest.message("10.0.0.1", 10911, "10.0.0.9", 2, 4096L));
    }

    public static void write(Path dir) throws Exception {
        Path records = Files.createDirectories(dir.resolve("records"));
        Path ids = Files.createDirectories(dir.resolve("messageIds"));
        MessageExt v4 = StoredRecordsTest.message("10.0.0.1", 10911, "10.0.0.9", 0, 1024L);
        MessageExt v6Store = StoredRecordsTest.message("::1", 10911, "10.0.0.9", 1, 2048L);
        MessageExt v6Born = StoredRecordsTest.message("10.0.0.2", 10911, "fe80::1", 2, 4096L);
        byte[] one = MessageDecoder.encode(v4, false);
        Files.write(records.resolve("one-ipv4"), one);
        Files.write(records.resolve("three-ipv4"), threeRecords());
        Files.write(records.resolve("ipv6-store-host"), MessageDecoder.encode(v6Store, false));
        Files.write(records.resolve("ipv6-born-host"), MessageDecoder.encode(v6Born, false));
        Files.write(records.resolve("magic-v2"), StoredRecordsTest.toMagicCodeV2(one, v4));
        Files.write(records.resolve("mixed"), StoredRecordsTest.concat(one, MessageDecoder.encode(v6Store, false),
            MessageDecoder.encode(v6Born, false), StoredRecordsTest.toMagicCodeV2(one, v4)));

        String a = MessageDecoder.createMessageId(v4.getStoreHost(), v4.getCommitLogOffset());
        String b = MessageDecoder.createMessageId(v6Born.getStoreHost(), v6Born.getCommitLogOffset());
        String v6 = MessageDecoder.createMessageId(v6Store.getStoreHost(), v6Store.getCommitLogOffset());
        Files.write(ids.resolve("ipv4-id"), ascii(a));
        Files.write(ids.resolve("ipv4-id-lowercase"), ascii(a.toLowerCase()));
        Files.write(ids.resolve("ipv6-id"), ascii(v6));
        Files.write(ids.resolve("batch-list"), ascii(a + "," + b + "," + v6 + "," + a));
        Files.write(ids.resolve("list-with-gaps"), ascii("," + a + ",,not-an-id," + b + ","));
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
