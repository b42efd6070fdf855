package io.rmqgw.codec.json;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The output side of the single pass ({@link JsonToBinary}): the ROCKETMQ binary header written into an
 * array, {@link #HEAD_ROOM} bytes in. extFields members are written as binary entries
 * ({@code short keyLength, key, int valueLength, value}) as the scanner reads them ({@link #entries}),
 * from {@link #ENTRIES_AT} on; the remark, read into its own array, is moved in front of them and the
 * fixed fields and lengths are written at the end ({@link #finish}), once the whole header is read.
 *
 * <p>While writing entries it notes where each one-byte key's last entry starts (so that a typed header
 * fills its slots without walking the entries again) and where the {@code msgId} value lies in the input.
 * Output arrays circulate: one can be given away whole ({@link #handOver}) for another in its place.
 * Not thread-safe: one per {@link JsonToBinary}.
 */
final class BinaryHeaderWriter {

    /** Bytes of the output array in front of the binary header, free for the caller (the frame prefix). */
    static final int HEAD_ROOM = 8;
    /** Where the first entry is written: the remark, when there is one, is moved in front of the entries at the end. */
    static final int ENTRIES_AT = HEAD_ROOM + EnvelopeFields.MIN_LENGTH;
    /** {@link #locatedValue()}'s answer when the value is not certainly located. */
    static final long NOT_LOCATED = -1L;

    private static final int KEEP_LIMIT = 64 * 1024;
    private static final int OUT_SIZE = 2048;
    private static final int MAX_KEY_LENGTH = Short.MAX_VALUE;
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    /** The one extFields key whose value's place in the input the writer notes. */
    private static final byte[] LOCATED_KEY = EnvelopeFields.ascii("msgId");
    /** {@code "k":"} with any k: bytes 0, 2, 3 and 4 of a word. */
    private static final long ONE_BYTE_KEY_MASK = 0xFF_FF_FF_00_FFL;
    private static final long ONE_BYTE_KEY = EnvelopeFields.word("\"?\":\"", 0) & ONE_BYTE_KEY_MASK;
    private static final long COMMA_QUOTE = EnvelopeFields.word(",\"", 0);
    /** Per byte: whether it can be a one-byte key as it stands (printable ASCII, not a quote or a backslash). */
    private static final boolean[] PLAIN_KEY_BYTE = new boolean[256];

    static {
        for (int c = 0x20; c < 0x80; c++) {
            PLAIN_KEY_BYTE[c] = c != '"' && c != '\\';
        }
    }

    private byte[] out = new byte[OUT_SIZE];
    /** Whatever the last taker of an array left with {@link #out} when it handed it in (a view of it), or null. */
    private Object outView;
    /** The view that went with the array last given away by {@link #handOver}. */
    private Object handedView;
    private byte[] remarkBuf = new byte[256];
    /** The array holding the last result (the kept one, or a one-off larger one). */
    private byte[] result = out;
    private int length;
    /**
     * Per one-byte key (always ASCII): where its last entry starts, counted from the first entry; valid
     * for the keys flagged in {@link #oneByteKeysLow} (bytes 0-63) and {@link #oneByteKeysHigh} (64-127).
     */
    private final int[] oneByteKeyAt = new int[128];
    private long oneByteKeysLow;
    private long oneByteKeysHigh;
    /** Entries whose key is not one byte long (a typed header walks the entries for those). */
    private int longKeyCount;
    private int entryCount;
    /** Entries with the key {@link #LOCATED_KEY}, and where the value of one sits (packed) or -1. */
    private int locatedCount;
    private long located;

    /** Readies a header read from {@code inputLength} JSON bytes; returns the array to write it to. */
    byte[] begin(int inputLength) {
        length = 0;
        entryCount = 0;
        locatedCount = 0;
        located = NOT_LOCATED;
        oneByteKeysLow = 0;
        oneByteKeysHigh = 0;
        longKeyCount = 0;
        int bound = 2 * inputLength + 64 + HEAD_ROOM;
        byte[] o = bound <= out.length ? out : new byte[bound];
        if (o != out && o.length <= KEEP_LIMIT) {
            out = o;
            outView = null;
        }
        return o;
    }

    /** The array a remark of a header of {@code inputLength} bytes is read into (kept, or a one-off larger one). */
    byte[] remarkArray(int inputLength) {
        if (inputLength + JsonScanner.PAD > remarkBuf.length) {
            byte[] r = new byte[inputLength + JsonScanner.PAD];
            if (r.length <= KEEP_LIMIT) {
                remarkBuf = r;
            }
            return r;
        }
        return remarkBuf;
    }

    /**
     * Reads the members of an extFields object (the scanner's cursor just past its '{') and writes each as
     * a binary entry at {@code o[w...]}; returns the end of the entries, or -1. A null value writes no
     * entry (RemotingCommand drops null values).
     */
    int entries(JsonScanner s, byte[] o, int w) {
        byte[] a = s.a;
        int p = JsonScanner.ws(a, s.p);
        if (a[p] == '}') {
            s.p = p + 1;
            return w;
        }
        int first = ENTRIES_AT; // where the first entry is written (of all extFields objects: they add up)
        long x = s.word(p);
        while (true) {
            int key = w + 2;
            int keyEnd;
            int value;
            int valueEnd;
            int k = (int) (x >>> 8) & 0xFF;
            if ((x & ONE_BYTE_KEY_MASK) == ONE_BYTE_KEY && PLAIN_KEY_BYTE[k]) {
                // "k":"value" with a one-byte plain key (SEND_MESSAGE_V2's a..n): no string scan for the key;
                // key length and key in one write (its last byte is the value length's, written below)
                INT.set(o, w, 0x10000 | k << 8);
                keyEnd = key + 1;
                value = keyEnd + 4;
                s.p = p + 5;
                valueEnd = s.string(o, value);
            } else {
                if (a[p] != '"') {
                    return s.fail(JsonScanner.Stop.EXPECTED_NAME, p);
                }
                s.p = p + 1;
                keyEnd = s.string(o, key);
                if (keyEnd < 0) {
                    return -1;
                }
                if (keyEnd - key > MAX_KEY_LENGTH) {
                    return s.fail(JsonScanner.Stop.KEY_TOO_LONG, p);
                }
                p = s.p;
                value = keyEnd + 4;
                int raw = -1; // where the value's bytes start in the input, when written as fastjson writes it
                if (a[p] == ':' && a[p + 1] == '"') { // "key":"value", as fastjson writes it
                    raw = p + 2;
                    s.p = raw;
                    valueEnd = s.string(o, value);
                } else {
                    valueEnd = s.memberValue(o, value);
                }
                int keyLength = keyEnd - key;
                o[w] = (byte) (keyLength >> 8);
                o[w + 1] = (byte) keyLength;
                k = keyLength == 1 ? o[key] : -1; // a one-byte UTF-8 key is ASCII
                if (keyLength == LOCATED_KEY.length && Arrays.equals(o, key, keyEnd, LOCATED_KEY, 0, keyLength)) {
                    noteLocated(s.p, raw, value, valueEnd);
                }
            }
            if (valueEnd >= 0) {
                INT.set(o, keyEnd, valueEnd - value);
                if (k < 0) {
                    longKeyCount++;
                } else if (k < 64) {
                    oneByteKeysLow |= 1L << k;
                    oneByteKeyAt[k] = w - first;
                } else {
                    oneByteKeysHigh |= 1L << k;
                    oneByteKeyAt[k] = w - first;
                }
                entryCount++;
                w = valueEnd;
            } else if (valueEnd != JsonScanner.NULL_VALUE) {
                return -1;
            }
            p = s.p;
            x = s.word(p);
            if ((x & 0xFFFF) == COMMA_QUOTE) { // ,"next as fastjson writes it: the separator and the next key in one read
                p++;
                x >>>= 8;
                continue;
            }
            p = JsonScanner.ws(a, p);
            if (a[p] == ',') {
                p = JsonScanner.ws(a, p + 1);
                x = s.word(p);
            } else if (a[p] == '}') {
                s.p = p + 1;
                return w;
            } else {
                return s.fail(JsonScanner.Stop.EXPECTED_COMMA_OR_END, p);
            }
        }
    }

    /** Notes a msgId value read from input index {@code raw} (-1: not as fastjson writes it) to {@code after}. */
    private void noteLocated(int after, int raw, int value, int valueEnd) {
        // every escape is longer than what it decodes to, so a value decoded to its own length had none
        boolean asItStands = raw >= 0 && valueEnd >= 0 && after - 1 - raw == valueEnd - value;
        located = locatedCount++ == 0 && asItStands ? (long) raw << 32 | (valueEnd - value) : NOT_LOCATED;
    }

    /**
     * Completes the header in {@code o}, whose entries end at {@code w}: the remark ({@code r[0, remark)})
     * moved in front of the entries, the fixed fields and the two lengths written.
     */
    void finish(byte[] o, int w, byte[] r, int remark, int code, byte language, int version, int opaque, int flag) {
        int h = HEAD_ROOM;
        int extLength = w - ENTRIES_AT;
        if (remark > 0) {
            System.arraycopy(o, ENTRIES_AT, o, ENTRIES_AT + remark, extLength);
            System.arraycopy(r, 0, o, h + EnvelopeFields.REMARK_AT, remark);
        }
        putFixedFields(o, h, code, language, version, opaque, flag);
        INT.set(o, h + EnvelopeFields.REMARK_LENGTH_AT, remark);
        INT.set(o, h + EnvelopeFields.REMARK_AT + remark, extLength);
        result = o;
        length = EnvelopeFields.MIN_LENGTH + remark + extLength;
    }

    /** Writes the binary header's fixed fields (code, language, version, opaque, flag: 13 bytes) at {@code a[at]}. */
    static void putFixedFields(byte[] a, int at, int code, byte language, int version, int opaque, int flag) {
        a[at + EnvelopeFields.CODE_AT] = (byte) (code >> 8);
        a[at + EnvelopeFields.CODE_AT + 1] = (byte) code;
        a[at + EnvelopeFields.LANGUAGE_AT] = language;
        a[at + EnvelopeFields.VERSION_AT] = (byte) (version >> 8);
        a[at + EnvelopeFields.VERSION_AT + 1] = (byte) version;
        INT.set(a, at + EnvelopeFields.OPAQUE_AT, opaque);
        INT.set(a, at + EnvelopeFields.FLAG_AT, flag);
    }

    /** See {@link JsonToBinary#handOver}. */
    byte[] handOver(byte[] replacement, Object view) {
        byte[] given = result;
        if (given == out) {
            handedView = outView;
            out = replacement != null ? replacement : new byte[OUT_SIZE];
            outView = replacement != null ? view : null;
        } else {
            handedView = null; // a one-off larger array: nobody left a view of it
        }
        result = out;
        return given;
    }

    Object handedView() {
        return handedView;
    }

    byte[] bytes() {
        return result;
    }

    int length() {
        return length;
    }

    int entryCount() {
        return entryCount;
    }

    boolean hasOneByteKey(int b) {
        return ((b < 64 ? oneByteKeysLow : oneByteKeysHigh) >>> b & 1) != 0;
    }

    int oneByteKeyOffset(int b) {
        return oneByteKeyAt[b];
    }

    int longKeyCount() {
        return longKeyCount;
    }

    long locatedValue() {
        return locatedCount == 1 ? located : NOT_LOCATED;
    }
}
