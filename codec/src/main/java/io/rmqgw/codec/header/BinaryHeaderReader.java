package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.json.JsonToBinary;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Reads a ROCKETMQ binary header by offsets. The entries stay where they are: the header keeps a
 * retained slice of the input from the remark length on; only the extFields section is copied once
 * into a scratch array to be walked (checked and indexed) as plain bytes. A JSON header transcoded to
 * binary ({@link JsonToBinary}) is read the same way from the transcoder's array, which the header
 * takes over.
 */
final class BinaryHeaderReader {

    private static final int REMARK_OFFSET = 13;

    private BinaryHeaderReader() {
    }

    static CommandHeader read(ByteBuf header, HeaderKind kind) {
        return read(header, header.readerIndex(), header.readableBytes(), kind);
    }

    /** Reads the {@code length} header bytes at {@code base} of {@code header}. */
    static CommandHeader read(ByteBuf header, int base, int length, HeaderKind kind) {
        if (length < CommandHeader.BINARY_FIXED_LENGTH) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD, "binary header of " + length
                + " bytes is shorter than the fixed fields (" + CommandHeader.BINARY_FIXED_LENGTH + ")");
        }
        int remarkLength = header.getInt(base + REMARK_OFFSET);
        if (remarkLength < 0 || remarkLength > length - CommandHeader.BINARY_FIXED_LENGTH) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
                "remark length " + remarkLength + " runs past the header (" + length + " bytes)");
        }
        int extLengthAt = base + REMARK_OFFSET + 4 + remarkLength;
        int extLength = header.getInt(extLengthAt);
        if (extLength < 0 || extLength > length - CommandHeader.BINARY_FIXED_LENGTH - remarkLength) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
                "extFields length " + extLength + " runs past the header (" + length + " bytes)");
        }
        CommandHeader h = kind.newHeader();
        // image index 0 = the remark length field
        int entriesStart = 8 + remarkLength;
        if (extLength > 0) {
            byte[] scratch = Scratch.get().in(extLength);
            header.getBytes(extLengthAt + 4, scratch, 0, extLength);
            h.index(scratch, 0, extLength, entriesStart);
        } else {
            java.util.Arrays.fill(h.slots, -1);
        }
        h.source = SerializeType.ROCKETMQ;
        h.code = header.getShort(base);
        h.language = header.getByte(base + 2);
        h.version = header.getShort(base + 3);
        h.opaque = header.getInt(base + 5);
        h.flag = header.getInt(base + 9);
        h.remarkIndex = remarkLength == 0 ? -1 : 4;
        h.remarkLength = remarkLength;
        h.extPresent = extLength > 0;
        h.entriesStart = entriesStart;
        h.entriesEnd = entriesStart + extLength;
        h.image = header.retainedSlice(base + REMARK_OFFSET, entriesStart + extLength);
        h.imageIsTail = true;
        return h;
    }

    /**
     * The header {@code t} holds (a JSON header just transcoded), as {@code kind}; its image is the
     * transcoder's own array, taken over whole (no copy: the header's previous array goes back to the
     * transcoder in its place, and {@code t} forgets its result). Reads as the JSON did: an empty remark
     * or value stays an empty string, an empty extFields object stays present.
     */
    static CommandHeader read(JsonToBinary t, HeaderKind kind) {
        int remarkLength = t.remarkLength();
        int extLength = JsonToBinary.HEAD_ROOM + t.length() - t.entriesStart();
        int imageLength = t.length() - REMARK_OFFSET;
        CommandHeader h = kind.newHeader(SpareHeaders.of(t));
        // image index 0 = the remark length field, as for a binary frame; the prefix and the fixed fields
        // lie just in front of it, where a binary frame head is put together
        h.index(t, 8 + remarkLength, t.bytes(), t.entriesStart());
        h.source = SerializeType.JSON;
        h.code = t.code();
        h.language = t.languageCode();
        h.version = t.version();
        h.opaque = t.opaque();
        h.flag = t.flag();
        h.remarkIndex = remarkLength == 0 ? -1 : 4;
        h.remarkLength = remarkLength;
        h.remark = remarkLength == 0 && t.remarkGiven() ? "" : null;
        h.extPresent = t.extFieldsGiven();
        h.entriesStart = 8 + remarkLength;
        h.entriesEnd = 8 + remarkLength + extLength;
        h.imageIsTail = true;
        h.takeImage(t, imageLength);
        return h;
    }
}
