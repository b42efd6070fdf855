package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.json.BinaryToJson;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The answers to the sends of one batch, made from the broker's one answer to it: answer {@code i} is a send
 * response with the broker's code, remark and other fields, the {@code i}-th offset message id of the batch
 * answer's comma-separated {@code msgId} list (store host rewritten) and queue offset = the batch's base + i;
 * {@code batchUniqId} is left out. What the answers share is encoded once, in both header encodings; an
 * answer is those bytes with its opaque, id and offset put in, written straight into the encoding its client
 * reads: no map, no String per answer. The output is what {@link io.rmqgw.codec.frame.Frames#encode} writes
 * for {@code RemotingHeader.response(opaque, code, remark)} with the extFields msgId, queueOffset and then the
 * broker's others in their order (binary: byte for byte).
 *
 * <p>Immutable once made: answers may be encoded on any thread.
 */
public final class SendResponseTemplate {

    private static final byte[] MSG_ID = Ascii.bytes("msgId");
    private static final byte[] QUEUE_OFFSET = Ascii.bytes("queueOffset");
    private static final byte[] BATCH_UNIQ_ID = Ascii.bytes("batchUniqId");
    private static final byte[] J_QUEUE_OFFSET = Ascii.bytes("\",\"queueOffset\":\"");
    private static final int MAX_HEADER_LENGTH = 0xFFFFFF;

    private final int code;
    /** The remark as UTF-8, or null for none. */
    private final byte[] remark;
    /** The broker's other entries in the binary layout, in their order. */
    private final byte[] binaryEntries;
    /** {@code {"code":C,"extFields":{"msgId":"}. */
    private final byte[] jsonHead;
    /** {@code "} then the other entries, then {@code },"flag":1,"language":"JAVA","opaque":}. */
    private final byte[] jsonAfterOffset;
    /** The remark, if any, then {@code ,"serializeTypeCurrentRPC":"JSON","version":0}}. */
    private final byte[] jsonTail;
    /** The ids, comma-separated, store hosts rewritten. */
    private final byte[] ids;
    /** Start of id i at [i]; [count] is one past the end of the last (where its separator would be). */
    private final int[] idStarts;
    private final boolean idsPlain;
    private final long baseOffset;

    private SendResponseTemplate(int code, byte[] remark, byte[] binaryEntries, byte[] jsonMembers, byte[] ids,
                                 long baseOffset) {
        this.code = code;
        this.remark = remark;
        this.binaryEntries = binaryEntries;
        this.ids = ids;
        this.baseOffset = baseOffset;
        int count = 0;
        for (byte b : ids) {
            if (b == ',') {
                count++;
            }
        }
        count = ids.length == 0 ? 0 : count + 1;
        idStarts = new int[count + 1];
        int at = 1;
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == ',') {
                idStarts[at++] = i + 1;
            }
        }
        idStarts[count] = ids.length + 1;
        boolean plain = true;
        for (byte b : ids) {
            plain &= b >= 0x20 && b < 0x7F && b != '"' && b != '\\';
        }
        idsPlain = plain;
        jsonHead = Ascii.bytes("{\"code\":" + code + ",\"extFields\":{\"msgId\":\"");
        ByteArrayOutputStream after = new ByteArrayOutputStream();
        after.write('"');
        if (jsonMembers.length > 0) {
            after.write(',');
            after.writeBytes(jsonMembers);
        }
        after.writeBytes(Ascii.bytes("},\"flag\":" + RemotingHeader.RESPONSE_FLAG + ",\"language\":\""
            + LanguageCode.JAVA.name() + "\",\"opaque\":"));
        jsonAfterOffset = after.toByteArray();
        ByteArrayOutputStream tail = new ByteArrayOutputStream();
        if (remark != null) {
            tail.writeBytes(Ascii.bytes(",\"remark\":\""));
            tail.writeBytes(BinaryToJson.escapedCopy(remark, 0, remark.length));
            tail.write('"');
        }
        tail.writeBytes(Ascii.bytes(",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}"));
        jsonTail = tail.toByteArray();
    }

    /**
     * The answers to a batch the broker answered with {@code code} and {@code answer} (not released here; the
     * template keeps nothing of it). Each id's store host is rewritten with {@code storeHosts}.
     */
    public static SendResponseTemplate of(int code, SendResponseHeader answer, StoreHostMapper storeHosts) {
        String remarkText = answer.remark();
        byte[] remark = remarkText == null ? null : remarkText.getBytes(StandardCharsets.UTF_8);
        ByteBuf image = answer.image();
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        int e = answer.entriesStart;
        while (e < answer.entriesEnd) {
            int keyLength = image.getShort(e);
            int v = e + 2 + keyLength;
            int end = v + 4 + image.getInt(v);
            if (!isKey(image, e + 2, keyLength, MSG_ID) && !isKey(image, e + 2, keyLength, QUEUE_OFFSET)
                && !isKey(image, e + 2, keyLength, BATCH_UNIQ_ID)) {
                byte[] entry = new byte[end - e];
                image.getBytes(e, entry);
                kept.writeBytes(entry);
            }
            e = end;
        }
        byte[] binaryEntries = kept.toByteArray();
        byte[] members = BinaryToJson.members(binaryEntries, 0, binaryEntries.length,
            answer.sourceEncoding() == SerializeType.ROCKETMQ);
        if (members == null) {
            throw new IllegalStateException("extFields entries no longer match their lengths"); // index() checked them
        }
        int idLength = answer.msgIdLength();
        byte[] ids = new byte[Math.max(idLength, 0)];
        if (idLength > 0) {
            image.getBytes(answer.msgIdIndex(), ids);
            MessageIds.rewriteListInPlace(ids, 0, ids.length, storeHosts);
        }
        return new SendResponseTemplate(code, remark, binaryEntries, members, ids, answer.queueOffset());
    }

    private static boolean isKey(ByteBuf image, int at, int length, byte[] key) {
        if (length != key.length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (image.getByte(at + i) != key[i]) {
                return false;
            }
        }
        return true;
    }

    /** Ids in the batch answer's msgId list (0 when it has none). */
    public int count() {
        return idStarts.length - 1;
    }

    /** The batch's queue offset (its first message's), or {@link CommandHeader#ABSENT_LONG}. */
    public long baseOffset() {
        return baseOffset;
    }

    /**
     * The frame (prefix and header, no body) answering the request with {@code opaque} in {@code type}: id
     * {@code index}, queue offset base + {@code index}.
     */
    public ByteBuf encode(ByteBufAllocator alloc, SerializeType type, int opaque, int index) {
        if (index < 0 || index >= count()) {
            throw new IndexOutOfBoundsException("id " + index + " of " + count());
        }
        int idFrom = idStarts[index];
        int idLength = idStarts[index + 1] - 1 - idFrom;
        long offset = baseOffset + index;
        byte[] digits = new byte[Ascii.decimalLength(offset)];
        Ascii.putDecimal(digits, 0, offset);
        return type == SerializeType.ROCKETMQ ? binary(alloc, opaque, idFrom, idLength, digits)
            : json(alloc, opaque, idFrom, idLength, digits);
    }

    private ByteBuf binary(ByteBufAllocator alloc, int opaque, int idFrom, int idLength, byte[] digits) {
        int remarkLength = remark == null ? 0 : remark.length;
        int extLength = 2 + MSG_ID.length + 4 + idLength + 2 + QUEUE_OFFSET.length + 4 + digits.length
            + binaryEntries.length;
        int headerLength = CommandHeader.BINARY_FIXED_LENGTH + remarkLength + extLength;
        ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + headerLength);
        CommandHeader.writeBinaryResponseStart(out, headerLength, 0, code, opaque, remark);
        out.writeInt(extLength);
        out.writeShort(MSG_ID.length).writeBytes(MSG_ID).writeInt(idLength).writeBytes(ids, idFrom, idLength);
        out.writeShort(QUEUE_OFFSET.length).writeBytes(QUEUE_OFFSET).writeInt(digits.length).writeBytes(digits);
        out.writeBytes(binaryEntries);
        return out;
    }

    private ByteBuf json(ByteBufAllocator alloc, int opaque, int idFrom, int idLength, byte[] digits) {
        byte[] id = ids;
        if (!idsPlain) {
            id = BinaryToJson.escapedCopy(ids, idFrom, idLength);
            idFrom = 0;
            idLength = id.length;
        }
        int opaqueLength = Ascii.decimalLength(opaque);
        int headerLength = jsonHead.length + idLength + J_QUEUE_OFFSET.length + digits.length
            + jsonAfterOffset.length + opaqueLength + jsonTail.length;
        ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + headerLength);
        out.writeInt(4 + headerLength);
        out.writeInt(typeAndLength(SerializeType.JSON, headerLength));
        out.writeBytes(jsonHead).writeBytes(id, idFrom, idLength).writeBytes(J_QUEUE_OFFSET).writeBytes(digits)
            .writeBytes(jsonAfterOffset);
        byte[] o = new byte[opaqueLength];
        Ascii.putDecimal(o, 0, opaque);
        out.writeBytes(o).writeBytes(jsonTail);
        return out;
    }

    private static int typeAndLength(SerializeType type, int headerLength) {
        if (headerLength > MAX_HEADER_LENGTH) {
            throw new IllegalStateException("header of " + headerLength + " bytes does not fit the 24-bit header length");
        }
        return (type.getCode() << 24) | headerLength;
    }
}
