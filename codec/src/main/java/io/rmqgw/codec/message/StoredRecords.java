package io.rmqgw.codec.message;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Walks concatenated stored message records, the layout brokers keep in the commit log and send
 * as is in PULL_MESSAGE / LITE_PULL_MESSAGE / POP_MESSAGE, QUERY_MESSAGE and VIEW_MESSAGE_BY_ID
 * response bodies, and in CHECK_TRANSACTION_STATE and CONSUME_MESSAGE_DIRECTLY request bodies:
 *
 * <pre>
 *  0 TOTALSIZE int        4 MAGICCODE int       8 BODYCRC int       12 QUEUEID int
 * 16 FLAG int            20 QUEUEOFFSET long   28 PHYSICALOFFSET long
 * 36 SYSFLAG int         40 BORNTIMESTAMP long 48 BORNHOST ip(4|16) port(4)
 *    STORETIMESTAMP long    STOREHOST ip(4|16) port(4)
 *    RECONSUMETIMES int     PREPAREDTRANSACTIONOFFSET long
 *    BODYLENGTH int + body  TOPICLENGTH (1 byte, 2 with magic code v2) + topic
 *    PROPERTIESLENGTH short + properties
 * </pre>
 *
 * SYSFLAG bit 4 (BORNHOST_V6_FLAG) and bit 5 (STOREHOSTADDRESS_V6_FLAG) select 16-byte addresses.
 * Clients derive each message's offsetMsgId from STOREHOST and PHYSICALOFFSET, which is why the
 * gateway rewrites STOREHOST. Neither address is covered by the body CRC.
 *
 * <p>Nothing here allocates, throws on malformed input or reads outside the buffer: a walk stops at
 * the first record that is not a well-formed stored record (too short, past the buffer, unknown
 * magic code, or field lengths that do not add up to TOTALSIZE), as the client's own decoder stops
 * there too.
 */
public final class StoredRecords {

    /** MAGICCODE of records with a 1-byte topic length (every RocketMQ version). */
    public static final int MAGIC_CODE_V1 = -626843481;
    /** MAGICCODE of records with a 2-byte topic length (RocketMQ 5.x, topics longer than 127 bytes). */
    public static final int MAGIC_CODE_V2 = -626843477;

    static final int BORNHOST_V6_FLAG = 1 << 4;
    static final int STOREHOST_V6_FLAG = 1 << 5;

    static final int MAGIC_CODE_OFFSET = 4;
    static final int QUEUEID_OFFSET = 12;
    static final int QUEUEOFFSET_OFFSET = 20;
    static final int PHYSICALOFFSET_OFFSET = 28;
    static final int SYSFLAG_OFFSET = 36;
    static final int BORNHOST_OFFSET = 48;
    /** Fixed fields, IPv4 hosts, empty body, topic and properties, v1 topic length. */
    static final int MIN_RECORD_LENGTH = 91;

    private StoredRecords() {
    }

    /**
     * Replaces, in place, every IPv4 STOREHOST of the records in {@code body} (from its reader index
     * to its writer index) that {@code mapper} knows. IPv6 store hosts are left alone. Indexes are not
     * moved and nothing is copied: writes go to the buffer (and whatever it is a slice of). A
     * read-only buffer is left unchanged.
     *
     * @return how many store hosts the mapper knew and were written
     */
    public static int rewriteStoreHosts(ByteBuf body, StoreHostMapper mapper) {
        if (body == null || body.isReadOnly()) {
            return 0;
        }
        int rewritten = 0;
        int pos = body.readerIndex();
        int end = body.writerIndex();
        while (end - pos >= MIN_RECORD_LENGTH) {
            int storeHost = storeHostOffset(body, pos, end - pos);
            if (storeHost < 0) {
                break;
            }
            if (storeHost > 0) {
                int ipAt = pos + storeHost;
                int ip = body.getInt(ipAt);
                int port = body.getInt(ipAt + 4);
                long mapped = mapper.map(ip, port);
                if (mapped != StoreHostMapper.UNKNOWN) {
                    body.setInt(ipAt, StoreHostMapper.ip(mapped));
                    body.setInt(ipAt + 4, StoreHostMapper.port(mapped));
                    rewritten++;
                }
            }
            pos += body.getInt(pos);
        }
        return rewritten;
    }

    /**
     * How many well-formed records {@code body} holds from its reader index, up to the first one that
     * is not.
     */
    public static int count(ByteBuf body) {
        if (body == null) {
            return 0;
        }
        int records = 0;
        int pos = body.readerIndex();
        int end = body.writerIndex();
        while (end - pos >= MIN_RECORD_LENGTH && storeHostOffset(body, pos, end - pos) >= 0) {
            records++;
            pos += body.getInt(pos);
        }
        return records;
    }

    /**
     * The TOTALSIZE of the well-formed record starting at {@code pos}, or -1 when no well-formed record
     * starts there or it does not end before the buffer's writer index.
     */
    public static int recordLength(ByteBuf buf, int pos) {
        int available = buf.writerIndex() - pos;
        if (pos < 0 || available < MIN_RECORD_LENGTH || bodyLengthOffset(buf, pos, available) < 0) {
            return -1;
        }
        return buf.getInt(pos);
    }

    /** QUEUEID of the record at {@code pos} (checked by {@link #recordLength} first). */
    public static int queueId(ByteBuf buf, int pos) {
        return buf.getInt(pos + QUEUEID_OFFSET);
    }

    /** QUEUEOFFSET of the record at {@code pos}: its place in its consume queue. */
    public static long queueOffset(ByteBuf buf, int pos) {
        return buf.getLong(pos + QUEUEOFFSET_OFFSET);
    }

    /** PHYSICALOFFSET of the record at {@code pos}: its commit-log offset, what CONSUMER_SEND_MSG_BACK names. */
    public static long commitLogOffset(ByteBuf buf, int pos) {
        return buf.getLong(pos + PHYSICALOFFSET_OFFSET);
    }

    /** RECONSUMETIMES of the well-formed record at {@code pos}, or -1 when no well-formed record starts there. */
    public static int reconsumeTimes(ByteBuf buf, int pos) {
        int at = reconsumeTimesOffset(buf, pos);
        return at < 0 ? -1 : buf.getInt(pos + at);
    }

    /** TOPIC of the record at {@code pos}, or null when no well-formed record starts there. */
    public static String topic(ByteBuf buf, int pos) {
        int topicLengthAt = topicLengthOffset(buf, pos);
        if (topicLengthAt < 0) {
            return null;
        }
        int size = topicLengthSize(buf, pos);
        return buf.toString(pos + topicLengthAt + size, topicLength(buf, pos, topicLengthAt), StandardCharsets.UTF_8);
    }

    /**
     * The value of property {@code key} of the record at {@code pos}: null when it has none or no well-formed record
     * starts there.
     */
    public static String property(ByteBuf buf, int pos, String key) {
        int topicLengthAt = topicLengthOffset(buf, pos);
        if (topicLengthAt < 0) {
            return null;
        }
        int propertiesLengthAt = topicLengthAt + topicLengthSize(buf, pos) + topicLength(buf, pos, topicLengthAt);
        return MessageProperties.value(buf, pos + propertiesLengthAt + 2, buf.getShort(pos + propertiesLengthAt), key);
    }

    /** Offset of TOPICLENGTH in the well-formed record at {@code pos}, or -1. */
    private static int topicLengthOffset(ByteBuf buf, int pos) {
        int available = buf.writerIndex() - pos;
        if (pos < 0 || available < MIN_RECORD_LENGTH) {
            return -1;
        }
        int bodyLengthAt = bodyLengthOffset(buf, pos, available);
        return bodyLengthAt < 0 ? -1 : bodyLengthAt + 4 + buf.getInt(pos + bodyLengthAt);
    }

    private static int topicLengthSize(ByteBuf buf, int pos) {
        return buf.getInt(pos + MAGIC_CODE_OFFSET) == MAGIC_CODE_V2 ? 2 : 1;
    }

    private static int topicLength(ByteBuf buf, int pos, int topicLengthAt) {
        return topicLengthSize(buf, pos) == 1 ? buf.getByte(pos + topicLengthAt) : buf.getShort(pos + topicLengthAt);
    }

    /**
     * Rewrites, in place, what a record says about where it was delivered: QUEUEID, QUEUEOFFSET and
     * RECONSUMETIMES (none is covered by the body CRC). Every other byte stays as it is. Used when a
     * record is delivered on a queue other than the one it was stored in (virtual queues).
     *
     * @return false, with nothing written, when no well-formed record starts at {@code pos} or the buffer is read-only
     */
    public static boolean setDelivery(ByteBuf buf, int pos, int queueId, long queueOffset, int reconsumeTimes) {
        int at = reconsumeTimesOffset(buf, pos);
        if (at < 0 || buf.isReadOnly()) {
            return false;
        }
        setDelivery(buf, pos, at, queueId, queueOffset, reconsumeTimes);
        return true;
    }

    /**
     * {@link #setDelivery(ByteBuf, int, int, long, int)} for a record already checked: {@code reconsumeTimesAt} is
     * its {@link #reconsumeTimesOffset} (taken from these bytes or an exact copy of them), {@code buf} writable.
     * Nothing is checked again.
     */
    public static void setDelivery(ByteBuf buf, int pos, int reconsumeTimesAt, int queueId, long queueOffset,
                                   int reconsumeTimes) {
        buf.setInt(pos + QUEUEID_OFFSET, queueId);
        buf.setLong(pos + QUEUEOFFSET_OFFSET, queueOffset);
        buf.setInt(pos + reconsumeTimesAt, reconsumeTimes);
    }

    /**
     * Offset of RECONSUMETIMES in the well-formed record at {@code pos}, or -1 when no well-formed record starts
     * there or it does not end before the buffer's writer index (the checks of {@link #recordLength}, in one walk).
     */
    public static int reconsumeTimesOffset(ByteBuf buf, int pos) {
        int available = buf.writerIndex() - pos;
        if (pos < 0 || available < MIN_RECORD_LENGTH) {
            return -1;
        }
        int bodyLengthAt = bodyLengthOffset(buf, pos, available);
        // PREPAREDTRANSACTIONOFFSET (8) and RECONSUMETIMES (4) sit right before BODYLENGTH
        return bodyLengthAt < 0 ? -1 : bodyLengthAt - 12;
    }

    /**
     * Checks the record at {@code pos} ({@code available} bytes left, at least
     * {@link #MIN_RECORD_LENGTH}) and returns the offset of its IPv4 STOREHOST in it, 0 when its store
     * host is IPv6, or -1 when it is not a well-formed record.
     */
    private static int storeHostOffset(ByteBuf buf, int pos, int available) {
        int bodyLengthAt = bodyLengthOffset(buf, pos, available);
        if (bodyLengthAt < 0) {
            return -1;
        }
        boolean storeHostV6 = (buf.getInt(pos + SYSFLAG_OFFSET) & STOREHOST_V6_FLAG) != 0;
        // STOREHOST, then RECONSUMETIMES (4) and PREPAREDTRANSACTIONOFFSET (8), then BODYLENGTH
        return storeHostV6 ? 0 : bodyLengthAt - 12 - 8;
    }

    /**
     * Checks the record at {@code pos} ({@code available} bytes left, at least
     * {@link #MIN_RECORD_LENGTH}) and returns the offset of its BODYLENGTH field in it, or -1 when it
     * is not a well-formed record.
     */
    private static int bodyLengthOffset(ByteBuf buf, int pos, int available) {
        int total = buf.getInt(pos);
        if (total < MIN_RECORD_LENGTH || total > available) {
            return -1;
        }
        int magic = buf.getInt(pos + MAGIC_CODE_OFFSET);
        int topicLengthSize;
        if (magic == MAGIC_CODE_V1) {
            topicLengthSize = 1;
        } else if (magic == MAGIC_CODE_V2) {
            topicLengthSize = 2;
        } else {
            return -1;
        }
        int sysFlag = buf.getInt(pos + SYSFLAG_OFFSET);
        boolean storeHostV6 = (sysFlag & STOREHOST_V6_FLAG) != 0;
        int storeTimestamp = BORNHOST_OFFSET + ((sysFlag & BORNHOST_V6_FLAG) == 0 ? 8 : 20);
        int storeHost = storeTimestamp + 8;
        int bodyLengthAt = storeHost + (storeHostV6 ? 20 : 8) + 4 + 8;
        // BODYLENGTH, TOPICLENGTH and PROPERTIESLENGTH must fit before anything is read from them
        if (total < bodyLengthAt + 4 + topicLengthSize + 2) {
            return -1;
        }
        int bodyLength = buf.getInt(pos + bodyLengthAt);
        int topicLengthAt = bodyLengthAt + 4 + bodyLength;
        if (bodyLength < 0 || bodyLength > total - (bodyLengthAt + 4 + topicLengthSize + 2)) {
            return -1;
        }
        int topicLength = topicLengthSize == 1 ? buf.getByte(pos + topicLengthAt) : buf.getShort(pos + topicLengthAt);
        int propertiesLengthAt = topicLengthAt + topicLengthSize + topicLength;
        if (topicLength < 0 || topicLength > total - (topicLengthAt + topicLengthSize + 2)) {
            return -1;
        }
        int propertiesLength = buf.getShort(pos + propertiesLengthAt);
        if (propertiesLength < 0 || propertiesLengthAt + 2 + propertiesLength != total) {
            return -1;
        }
        return bodyLengthAt;
    }
}
