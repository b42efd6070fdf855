package io.rmqgw.codec.header;

import io.netty.util.concurrent.FastThreadLocal;
import io.rmqgw.codec.frame.RemotingFrame;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Where the value of one extFields entry sits in a frame's own header bytes, so that a rewrite keeping its length
 * (a send answer's msgId with its store host replaced) can be done in the frame: no decode, no new header, no new
 * buffer. Found only where that is certain: the key is there once, and its value is plain (JSON: a string with no
 * escape in it). Anything else (absent, repeated, escaped, a number) is "not found", and the caller decodes.
 *
 * <p>In JSON, {@code "key":"} can occur inside another string only behind a backslash (its quotes escaped), so one
 * occurrence with no backslash before it is the entry. In the binary encoding the entries are walked. The search
 * runs on a per-thread copy of the header ({@link #headerCopy}): reading a pooled buffer byte by byte checks its
 * bounds and reference count at every byte.
 */
public final class ExtFieldInPlace {

    /** {@link #find}'s answer when the value is not certainly located. */
    public static final long NOT_FOUND = -1L;

    private static final int BINARY_FIXED_LENGTH = 13; // code(2) language(1) version(2) opaque(4) flag(4)
    private static final int NO_MATCH = -1;
    private static final int UNSURE = -2;
    /** {@link #withEntryAt}'s answer for an entry there twice, escaped or unplain; no {@link #pack} is negative. */
    private static final long UNCERTAIN = -2L;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long QUOTES = 0x2222222222222222L;
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final FastThreadLocal<byte[]> COPY = new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
            return new byte[1024];
        }
    };

    private ExtFieldInPlace() {
    }

    /**
     * The value of entry {@code key} (ASCII) in {@code frame}'s header: its index in {@code frame.content()} and its
     * length, packed ({@link #index}, {@link #length}); or {@link #NOT_FOUND}. The frame is only read.
     */
    public static long find(RemotingFrame frame, byte[] key) {
        long found = find(headerCopy(frame), frame.headerLength(), frame.encoding(), key);
        if (found == NOT_FOUND) {
            return NOT_FOUND;
        }
        return pack(headerIndex(frame) + index(found), length(found));
    }

    /**
     * {@code frame}'s header bytes at {@code [0, frame.headerLength())} of an array of this thread's, valid until
     * its next call on this thread (a header over 64 KiB gets an array of its own).
     */
    public static byte[] headerCopy(RemotingFrame frame) {
        int length = frame.headerLength();
        byte[] copy = COPY.get();
        if (copy.length < length) {
            copy = new byte[length];
            if (length <= Scratch.KEEP_LIMIT) {
                COPY.set(copy);
            }
        }
        frame.content().getBytes(headerIndex(frame), copy, 0, length);
        return copy;
    }

    /** Where {@code frame}'s header starts in {@code frame.content()}. */
    public static int headerIndex(RemotingFrame frame) {
        return frame.content().readerIndex() + RemotingFrame.PREFIX_LENGTH;
    }

    /**
     * The value of entry {@code key} in the header {@code header[0, length)} of the given encoding, as an index into
     * {@code header} and a length, packed; or {@link #NOT_FOUND}.
     */
    public static long find(byte[] header, int length, SerializeType type, byte[] key) {
        return type == SerializeType.ROCKETMQ ? findBinary(header, length, key) : findJson(header, length, key);
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

    private static long findJson(byte[] a, int end, byte[] key) {
        // the quotes are found eight bytes at a time (SWAR); each is then checked for "key":"
        long found = NOT_FOUND;
        int i = 0;
        for (; i + Long.BYTES <= end; i += Long.BYTES) {
            long x = (long) LONGS.get(a, i) ^ QUOTES;
            // a high bit for each zero byte of x (a quote), possibly also for a byte after one: each is checked
            for (long zeros = (x - ONES) & ~x & HIGHS; zeros != 0; zeros &= zeros - 1) {
                found = withEntryAt(a, end, i + (Long.numberOfTrailingZeros(zeros) >>> 3), key, found);
                if (found == UNCERTAIN) {
                    return NOT_FOUND;
                }
            }
        }
        for (int q = i; q < end; q++) {
            found = withEntryAt(a, end, q, key, found);
            if (found == UNCERTAIN) {
                return NOT_FOUND;
            }
        }
        return found;
    }

    /**
     * {@code found} (the entry met so far, or {@link #NOT_FOUND}) after byte {@code q}: the entry starting there
     * when it is the first, {@link #UNCERTAIN} when it is not the first or is escaped or unplain, else {@code found} as
     * it was. A byte that is no quote, or lies inside the value found, starts nothing.
     */
    private static long withEntryAt(byte[] a, int end, int q, byte[] key, long found) {
        // NOT_FOUND's index and length are both -1: no q lies at or before their sum
        if (q <= index(found) + length(found) || a[q] != '"') {
            return found;
        }
        int close = valueAfter(a, end, q, key);
        if (close == NO_MATCH) {
            return found;
        }
        if (close == UNSURE || found != NOT_FOUND) {
            return UNCERTAIN; // twice: which one a reader keeps is its business (an unplain one: the caller decodes)
        }
        int value = q + key.length + 4;
        return pack(value, close - value);
    }

    /**
     * For the quote at {@code q}: the index of the closing quote of the value when {@code "key":"value"} starts
     * there, {@link #NO_MATCH} when it does not, {@link #UNSURE} when it does but is escaped or unplain.
     */
    private static int valueAfter(byte[] a, int end, int q, byte[] key) {
        int value = q + key.length + 4;
        if (value > end || !quotedKeyAt(a, q, key)) {
            return NO_MATCH;
        }
        if (q > 0 && a[q - 1] == '\\') {
            return UNSURE; // an escaped quote, or an escaped backslash before a real one
        }
        for (int close = value; close < end; close++) {
            if (a[close] == '"') {
                return close;
            }
            if (a[close] == '\\') {
                return UNSURE;
            }
        }
        return UNSURE;
    }

    private static boolean quotedKeyAt(byte[] a, int quote, byte[] key) {
        int at = quote + 1;
        for (byte b : key) {
            if (a[at++] != b) {
                return false;
            }
        }
        return a[at] == '"' && a[at + 1] == ':' && a[at + 2] == '"';
    }

    private static long findBinary(byte[] a, int end, byte[] key) {
        int at = BINARY_FIXED_LENGTH;
        if (at + 4 > end) {
            return NOT_FOUND;
        }
        long extAt = at + 4L + (intAt(a, at) & 0xFFFFFFFFL);
        if (extAt + 4 > end) {
            return NOT_FOUND;
        }
        long extEnd = extAt + 4 + (intAt(a, (int) extAt) & 0xFFFFFFFFL);
        if (extEnd > end) {
            return NOT_FOUND;
        }
        long found = NOT_FOUND;
        int entry = (int) extAt + 4;
        while (entry < extEnd) {
            if (entry + 2 > extEnd) {
                return NOT_FOUND;
            }
            int keyLength = ((a[entry] & 0xFF) << 8) | (a[entry + 1] & 0xFF);
            int valueLengthAt = entry + 2 + keyLength;
            if (valueLengthAt + 4 > extEnd) {
                return NOT_FOUND;
            }
            long valueLength = intAt(a, valueLengthAt) & 0xFFFFFFFFL;
            int value = valueLengthAt + 4;
            if (value + valueLength > extEnd) {
                return NOT_FOUND;
            }
            if (keyLength == key.length && Arrays.equals(a, entry + 2, entry + 2 + keyLength, key, 0, keyLength)) {
                if (found != NOT_FOUND) {
                    return NOT_FOUND;
                }
                found = pack(value, (int) valueLength);
            }
            entry = (int) (value + valueLength);
        }
        return found;
    }

    private static int intAt(byte[] a, int at) {
        return (a[at] & 0xFF) << 24 | (a[at + 1] & 0xFF) << 16 | (a[at + 2] & 0xFF) << 8 | (a[at + 3] & 0xFF);
    }
}
