package io.rmqgw.codec.message;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * A message's properties as clients write them ({@code MessageDecoder.messageProperties2String}):
 * UTF-8 {@code key 0x01 value 0x02}, pairs in the client's order, the last separator optional.
 * Read and rewritten on the bytes: the separators never occur inside a multi-byte UTF-8 sequence,
 * so nothing but the values asked for is decoded, and a pair left out leaves every other byte as
 * it was. A key written twice counts with its last value, as {@code string2messageProperties} reads it.
 */
public final class MessageProperties {

    public static final byte NAME_VALUE_SEPARATOR = 1;
    public static final byte PROPERTY_SEPARATOR = 2;

    private MessageProperties() {
    }

    /** The value of {@code key} in the properties at {@code [index, index + length)} of {@code buf}, or null. */
    public static String value(ByteBuf buf, int index, int length, String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        String found = null;
        int end = index + length;
        for (int start = index; start < end; ) {
            int pairEnd = pairEnd(buf, start, end);
            int sep = buf.indexOf(start, pairEnd, NAME_VALUE_SEPARATOR);
            if (sep >= 0 && keyEquals(buf, start, sep, k)) {
                found = buf.toString(sep + 1, pairEnd - sep - 1, StandardCharsets.UTF_8);
            }
            start = pairEnd + 1;
        }
        return found;
    }

    /**
     * Writes the properties at {@code [index, index + length)} of {@code buf} to {@code out} without
     * any pair whose key is {@code key} (the pair and its trailing separator): every other byte as it was.
     *
     * @return the bytes written
     */
    public static int writeWithout(ByteBuf buf, int index, int length, String key, ByteBuf out) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        int written = 0;
        int end = index + length;
        int copyFrom = index;
        for (int start = index; start < end; ) {
            int pairEnd = pairEnd(buf, start, end);
            int sep = buf.indexOf(start, pairEnd, NAME_VALUE_SEPARATOR);
            int next = Math.min(pairEnd + 1, end);
            if (sep >= 0 && keyEquals(buf, start, sep, k)) {
                out.writeBytes(buf, copyFrom, start - copyFrom);
                written += start - copyFrom;
                copyFrom = next;
            }
            start = next;
        }
        out.writeBytes(buf, copyFrom, end - copyFrom);
        return written + end - copyFrom;
    }

    /** The index of the separator ending the pair that starts at {@code start}, or {@code end}. */
    private static int pairEnd(ByteBuf buf, int start, int end) {
        int i = buf.indexOf(start, end, PROPERTY_SEPARATOR);
        return i < 0 ? end : i;
    }

    private static boolean keyEquals(ByteBuf buf, int from, int to, byte[] key) {
        if (to - from != key.length) {
            return false;
        }
        for (int i = 0; i < key.length; i++) {
            if (buf.getByte(from + i) != key[i]) {
                return false;
            }
        }
        return true;
    }
}
