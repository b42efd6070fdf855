package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The gateway's own PULL_MESSAGE answers (virtual queues): a response with extFields suggestWhichBrokerId 0,
 * nextBeginOffset and maxOffset the next offset, minOffset 0, written straight into the encoding its client
 * reads, the fixed parts as constant bytes: no map, no String, no JSON generator per answer. The output is byte
 * for byte what {@link io.rmqgw.codec.frame.Frames#encode} writes for {@code RemotingHeader.response(opaque, code,
 * remark)} with those four fields in a {@code HashMap} (whose order is suggestWhichBrokerId, nextBeginOffset,
 * maxOffset, minOffset), in both encodings.
 */
public final class PullResponseEncoder {

    private static final byte[] B_SUGGEST = binaryEntry("suggestWhichBrokerId", "0");
    private static final byte[] B_NEXT = binaryKey("nextBeginOffset");
    private static final byte[] B_MAX = binaryKey("maxOffset");
    private static final byte[] B_MIN = binaryEntry("minOffset", "0");
    private static final byte[] J_CODE = Ascii.bytes("{\"code\":");
    private static final byte[] J_NEXT = Ascii.bytes(",\"extFields\":{\"suggestWhichBrokerId\":\"0\",\"nextBeginOffset\":\"");
    private static final byte[] J_MAX = Ascii.bytes("\",\"maxOffset\":\"");
    private static final byte[] J_OPAQUE = Ascii.bytes("\",\"minOffset\":\"0\"},\"flag\":" + RemotingHeader.RESPONSE_FLAG
        + ",\"language\":\"" + LanguageCode.JAVA.name() + "\",\"opaque\":");
    private static final byte[] J_REMARK = Ascii.bytes(",\"remark\":\"");
    private static final byte[] J_TAIL = Ascii.bytes(",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}");

    private PullResponseEncoder() {
    }

    /**
     * The answer frame: prefix, header and {@code body} (ownership of one reference passes to the result, not
     * copied; may be null for none). {@code remark}: null for none, else printable ASCII without quotes or
     * backslashes (the gateway's own words, which JSON writes as they are).
     */
    public static ByteBuf encode(ByteBufAllocator alloc, SerializeType type, int opaque, int code, String remark,
                                 long nextOffset, ByteBuf body) {
        ByteBuf head;
        try {
            byte[] remarkBytes = remark == null ? null : plain(remark);
            int bodyLength = body == null ? 0 : body.readableBytes();
            head = type == SerializeType.ROCKETMQ ? binary(alloc, opaque, code, remarkBytes, nextOffset, bodyLength)
                : json(alloc, opaque, code, remarkBytes, nextOffset, bodyLength);
        } catch (RuntimeException e) {
            if (body != null) {
                body.release();
            }
            throw e;
        }
        return HeaderTranscoder.withBody(alloc, head, body);
    }

    private static ByteBuf binary(ByteBufAllocator alloc, int opaque, int code, byte[] remark, long next, int bodyLength) {
        int digits = Ascii.decimalLength(next);
        int remarkLength = remark == null ? 0 : remark.length;
        int extLength = B_SUGGEST.length + B_NEXT.length + 4 + digits + B_MAX.length + 4 + digits + B_MIN.length;
        int headerLength = CommandHeader.BINARY_FIXED_LENGTH + remarkLength + extLength;
        ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + headerLength);
        try {
            CommandHeader.writeBinaryResponseStart(out, headerLength, bodyLength, code, opaque, remark);
            out.writeInt(extLength);
            out.writeBytes(B_SUGGEST);
            out.writeBytes(B_NEXT).writeInt(digits);
            writeDecimal(out, next, digits);
            out.writeBytes(B_MAX).writeInt(digits);
            writeDecimal(out, next, digits);
            out.writeBytes(B_MIN);
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
    }

    private static ByteBuf json(ByteBufAllocator alloc, int opaque, int code, byte[] remark, long next, int bodyLength) {
        int digits = Ascii.decimalLength(next);
        int codeDigits = Ascii.decimalLength(code);
        int opaqueDigits = Ascii.decimalLength(opaque);
        int headerLength = J_CODE.length + codeDigits + J_NEXT.length + digits + J_MAX.length + digits + J_OPAQUE.length
            + opaqueDigits + (remark == null ? 0 : J_REMARK.length + remark.length + 1) + J_TAIL.length;
        if (headerLength > 0xFFFFFF) {
            throw new IllegalArgumentException("header of " + headerLength + " bytes does not fit the 24-bit header length");
        }
        ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + headerLength);
        try {
            out.writeInt(4 + headerLength + bodyLength);
            out.writeInt((SerializeType.JSON.getCode() << 24) | headerLength);
            out.writeBytes(J_CODE);
            writeDecimal(out, code, codeDigits);
            out.writeBytes(J_NEXT);
            writeDecimal(out, next, digits);
            out.writeBytes(J_MAX);
            writeDecimal(out, next, digits);
            out.writeBytes(J_OPAQUE);
            writeDecimal(out, opaque, opaqueDigits);
            if (remark != null) {
                out.writeBytes(J_REMARK).writeBytes(remark).writeByte('"');
            }
            out.writeBytes(J_TAIL);
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
    }

    /** Writes the {@code length} decimal digits of {@code v} (its {@link Ascii#decimalLength}) with no array. */
    private static void writeDecimal(ByteBuf out, long v, int length) {
        if (v < 0) {
            byte[] digits = new byte[length];
            Ascii.putDecimal(digits, 0, v);
            out.writeBytes(digits);
            return;
        }
        out.ensureWritable(length);
        int end = out.writerIndex() + length;
        int at = end;
        do {
            out.setByte(--at, '0' + (int) (v % 10));
            v /= 10;
        } while (v != 0);
        out.writerIndex(end);
    }

    private static byte[] plain(String remark) {
        byte[] bytes = remark.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < bytes.length; i++) {
            byte b = bytes[i];
            if (b < 0x20 || b >= 0x7F || b == '"' || b == '\\' || remark.charAt(i) >= 0x80) {
                throw new IllegalArgumentException("remark must be printable ASCII without quotes or backslashes: " + remark);
            }
        }
        return bytes;
    }

    private static byte[] binaryKey(String key) {
        byte[] k = Ascii.bytes(key);
        byte[] out = new byte[2 + k.length];
        out[0] = (byte) (k.length >>> 8);
        out[1] = (byte) k.length;
        System.arraycopy(k, 0, out, 2, k.length);
        return out;
    }

    private static byte[] binaryEntry(String key, String value) {
        byte[] k = binaryKey(key);
        byte[] v = Ascii.bytes(value);
        byte[] out = new byte[k.length + 4 + v.length];
        System.arraycopy(k, 0, out, 0, k.length);
        out[k.length + 3] = (byte) v.length;
        System.arraycopy(v, 0, out, k.length + 4, v.length);
        return out;
    }
}
