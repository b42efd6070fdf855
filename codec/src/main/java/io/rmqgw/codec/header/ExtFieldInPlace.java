package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Where the value of one extFields entry sits in a frame's own header bytes, so that a rewrite keeping its length
 * (a send answer's msgId with its store host replaced) can be done in the frame: no decode, no new header, no new
 * buffer. Found only where that is certain: the key is there once, and its value is plain (JSON: a string with no
 * escape in it). Anything else (absent, repeated, escaped, a number) is "not found", and the caller decodes.
 *
 * <p>In JSON, {@code "key":"} can occur inside another string only behind a backslash (its quotes escaped), so one
 * occurrence with no backslash before it is the entry. In the binary encoding the entries are walked.
 */
public final class ExtFieldInPlace {

    /** {@link #find}'s answer when the value is not certainly located. */
    public static final long NOT_FOUND = -1L;

    private static final int BINARY_FIXED_LENGTH = 13; // code(2) language(1) version(2) opaque(4) flag(4)

    private ExtFieldInPlace() {
    }

    /**
     * The value of entry {@code key} (ASCII) in {@code frame}'s header: its index in {@code frame.content()} and its
     * length, packed by {@link #pack}; or {@link #NOT_FOUND}. The frame is only read.
     */
    public static long find(RemotingFrame frame, byte[] key) {
        ByteBuf content = frame.content();
        int start = content.readerIndex() + RemotingFrame.PREFIX_LENGTH;
        int end = start + frame.headerLength();
        return frame.encoding() == SerializeType.ROCKETMQ ? findBinary(content, start, end, key)
            : findJson(content, start, end, key);
    }

    /** The index part of a {@link #find} result. */
    public static int index(long found) {
        return (int) (found >>> 32);
    }

    /** The length part of a {@link #find} result. */
    public static int length(long found) {
        return (int) found;
    }

    static long pack(int index, int length) {
        return ((long) index << 32) | (length & 0xFFFFFFFFL);
    }

    private static long findJson(ByteBuf in, int start, int end, byte[] key) {
        // "key":"
        int patternLength = key.length + 4;
        long found = NOT_FOUND;
        for (int i = in.indexOf(start, end, (byte) '"'); i >= 0 && i + patternLength <= end;
             i = in.indexOf(i + 1, end, (byte) '"')) {
            if (!quotedKeyAt(in, i, key)) {
                continue;
            }
            if (i > start && in.getByte(i - 1) == '\\') {
                return NOT_FOUND; // an escaped quote, or an escaped backslash before a real one: not certain
            }
            if (found != NOT_FOUND) {
                return NOT_FOUND; // twice: which one a reader keeps is its business
            }
            int value = i + patternLength;
            int close = in.indexOf(value, end, (byte) '"');
            if (close < 0 || in.indexOf(value, close, (byte) '\\') >= 0) {
                return NOT_FOUND;
            }
            found = pack(value, close - value);
            i = close;
        }
        return found;
    }

    private static boolean quotedKeyAt(ByteBuf in, int quote, byte[] key) {
        int at = quote + 1;
        for (byte b : key) {
            if (in.getByte(at++) != b) {
                return false;
            }
        }
        return in.getByte(at) == '"' && in.getByte(at + 1) == ':' && in.getByte(at + 2) == '"';
    }

    private static long findBinary(ByteBuf in, int start, int end, byte[] key) {
        int at = start + BINARY_FIXED_LENGTH;
        if (at + 4 > end) {
            return NOT_FOUND;
        }
        long remarkLength = in.getInt(at) & 0xFFFFFFFFL;
        long extAt = at + 4L + remarkLength;
        if (extAt + 4 > end) {
            return NOT_FOUND;
        }
        long extEnd = extAt + 4 + (in.getInt((int) extAt) & 0xFFFFFFFFL);
        if (extEnd > end) {
            return NOT_FOUND;
        }
        long found = NOT_FOUND;
        int entry = (int) extAt + 4;
        while (entry < extEnd) {
            if (entry + 2 > extEnd) {
                return NOT_FOUND;
            }
            int keyLength = in.getUnsignedShort(entry);
            int valueLengthAt = entry + 2 + keyLength;
            if (valueLengthAt + 4 > extEnd) {
                return NOT_FOUND;
            }
            long valueLength = in.getInt(valueLengthAt) & 0xFFFFFFFFL;
            int value = valueLengthAt + 4;
            if (value + valueLength > extEnd) {
                return NOT_FOUND;
            }
            if (keyLength == key.length && sameBytes(in, entry + 2, key)) {
                if (found != NOT_FOUND) {
                    return NOT_FOUND;
                }
                found = pack(value, (int) valueLength);
            }
            entry = (int) (value + valueLength);
        }
        return found;
    }

    private static boolean sameBytes(ByteBuf in, int at, byte[] key) {
        for (int i = 0; i < key.length; i++) {
            if (in.getByte(at + i) != key[i]) {
                return false;
            }
        }
        return true;
    }
}
