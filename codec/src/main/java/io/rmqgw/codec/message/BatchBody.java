package io.rmqgw.codec.message;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of a SEND_BATCH_MESSAGE request ({@code MessageDecoder.encodeMessages}): messages one
 * after the other, each
 *
 * <pre>
 * TOTALSIZE int   MAGICCODE int   BODYCRC int   FLAG int
 * BODYLENGTH int + body           PROPERTIESLENGTH short + properties (UTF-8, see MessageProperties)
 * </pre>
 *
 * TOTALSIZE counts the whole entry. Reading allocates only the entry list; entries point into the
 * buffer. Writing copies an entry with other properties and every other byte as it was.
 */
public final class BatchBody {

    /** TOTALSIZE, MAGICCODE, BODYCRC, FLAG, BODYLENGTH. */
    static final int FIXED_BEFORE_BODY = 20;
    static final int MIN_ENTRY_LENGTH = FIXED_BEFORE_BODY + 2;

    private BatchBody() {
    }

    /**
     * One message of a batch; indexes are absolute in the buffer it was read from.
     *
     * @param index            where the entry starts (its TOTALSIZE)
     * @param flag             the message flag
     * @param bodyIndex        where its body starts
     * @param bodyLength       body bytes
     * @param propertiesIndex  where its properties start
     * @param propertiesLength properties bytes
     */
    public record Entry(int index, int flag, int bodyIndex, int bodyLength, int propertiesIndex, int propertiesLength) {
    }

    /**
     * The messages of {@code body} (reader to writer index; indexes unchanged).
     *
     * @throws IllegalArgumentException naming the entry and what is wrong when the layout does not add up
     */
    public static List<Entry> read(ByteBuf body) {
        List<Entry> entries = new ArrayList<>();
        int end = body.writerIndex();
        for (int at = body.readerIndex(); at < end; ) {
            int n = entries.size();
            if (end - at < MIN_ENTRY_LENGTH) {
                throw new IllegalArgumentException("batch message " + n + " is truncated: " + (end - at) + " bytes left");
            }
            int total = body.getInt(at);
            if (total < MIN_ENTRY_LENGTH || total > end - at) {
                throw new IllegalArgumentException("batch message " + n + " has TOTALSIZE " + total + " with "
                    + (end - at) + " bytes left");
            }
            int bodyLength = body.getInt(at + 16);
            if (bodyLength < 0 || bodyLength > total - MIN_ENTRY_LENGTH) {
                throw new IllegalArgumentException("batch message " + n + " has body length " + bodyLength
                    + " in an entry of " + total + " bytes");
            }
            int propertiesAt = at + FIXED_BEFORE_BODY + bodyLength;
            int propertiesLength = body.getUnsignedShort(propertiesAt);
            if (FIXED_BEFORE_BODY + bodyLength + 2 + propertiesLength != total) {
                throw new IllegalArgumentException("batch message " + n + ": body " + bodyLength + " and properties "
                    + propertiesLength + " bytes do not add up to TOTALSIZE " + total);
            }
            entries.add(new Entry(at, body.getInt(at + 12), at + FIXED_BEFORE_BODY, bodyLength, propertiesAt + 2,
                propertiesLength));
            at += total;
        }
        return entries;
    }

    /**
     * Appends {@code entry} of {@code source} to {@code out} with the property {@code removedKey} left
     * out: MAGICCODE, BODYCRC, FLAG, body and every other property byte as they were, TOTALSIZE and
     * PROPERTIESLENGTH recomputed.
     */
    public static void writeWithout(ByteBuf source, Entry entry, String removedKey, ByteBuf out) {
        int start = out.writerIndex();
        out.writeInt(0);
        out.writeBytes(source, entry.index() + 4, FIXED_BEFORE_BODY - 4 + entry.bodyLength());
        int lengthAt = out.writerIndex();
        out.writeShort(0);
        int properties = MessageProperties.writeWithout(source, entry.propertiesIndex(), entry.propertiesLength(),
            removedKey, out);
        out.setShort(lengthAt, properties);
        out.setInt(start, out.writerIndex() - start);
    }

    /**
     * Appends one entry as clients write it (MAGICCODE and BODYCRC 0): {@code body} and
     * {@code properties} from their reader indexes, which are not moved.
     */
    public static void write(int flag, ByteBuf body, ByteBuf properties, ByteBuf out) {
        int bodyLength = body.readableBytes();
        int propertiesLength = properties.readableBytes();
        if (propertiesLength > 0xFFFF) {
            throw new IllegalArgumentException("properties of " + propertiesLength + " bytes do not fit a batch entry");
        }
        out.writeInt(FIXED_BEFORE_BODY + bodyLength + 2 + propertiesLength);
        out.writeInt(0);
        out.writeInt(0);
        out.writeInt(flag);
        out.writeInt(bodyLength);
        out.writeBytes(body, body.readerIndex(), bodyLength);
        out.writeShort(propertiesLength);
        out.writeBytes(properties, properties.readerIndex(), propertiesLength);
    }
}
