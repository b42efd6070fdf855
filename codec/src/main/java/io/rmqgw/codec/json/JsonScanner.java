package io.rmqgw.codec.json;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The JSON lexing of the single pass ({@link JsonToBinary}): a header's bytes copied once into an array
 * padded with zeros, a cursor ({@link #p}) and the tokens read at it. Strings are copied to an output
 * array as UTF-8 with their escapes decoded, exactly as jackson and {@code String.getBytes(UTF_8)}
 * together would (an unpaired surrogate becomes '?'); numbers are copied as their text. Nothing is
 * decoded into Strings.
 *
 * <p>A token the scanner does not take returns -1 (or false, or {@link #BAIL}) and notes why and where
 * ({@link #stop()}, {@link #stopAt()}): malformed input, or input the general reader decides (invalid
 * UTF-8, a nested value where a scalar belongs). The note is written on those paths only.
 *
 * <p>Output arrays need room for eight bytes past what is written: runs of plain string bytes are
 * copied eight at a time. Not thread-safe: one per {@link JsonToBinary}.
 */
final class JsonScanner {

    /** Why a scan stopped. */
    enum Stop {
        NONE, END_OF_INPUT, CONTROL_CHARACTER, BAD_ESCAPE, BAD_UNICODE_ESCAPE, INVALID_UTF8, BAD_NUMBER,
        NUMBER_TOO_LONG, NOT_AN_INT, BAD_LITERAL, NESTED_VALUE, EXPECTED_OBJECT, EXPECTED_NAME, EXPECTED_COLON,
        EXPECTED_COMMA_OR_END, ESCAPED_NAME, KEY_TOO_LONG, LANGUAGE_NOT_PLAIN, TRAILING_CONTENT, NO_CODE
    }

    /** Zero bytes after the input: any read past the end meets a 0, which nothing here accepts. */
    static final int PAD = 8;
    /** {@link #intValue()}'s answer when the token is not an int. */
    static final long BAIL = Long.MIN_VALUE;
    /** {@link #memberValue}'s answer for a null value. */
    static final int NULL_VALUE = -2;
    /** jackson's default limit on a number's length (StreamReadConstraints). */
    private static final int MAX_NUMBER_LENGTH = 1000;
    private static final int KEEP_LIMIT = 64 * 1024;
    /** Eight bytes at a time, for runs of plain string bytes. */
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    /** Per byte: its value as a hex digit, or -1. */
    private static final byte[] HEX_VALUE = new byte[256];
    /** Per byte: whether it is JSON whitespace. */
    private static final boolean[] WHITESPACE = new boolean[256];

    static {
        Arrays.fill(HEX_VALUE, (byte) -1);
        for (int i = 0; i < 10; i++) {
            HEX_VALUE['0' + i] = (byte) i;
        }
        for (int i = 0; i < 6; i++) {
            HEX_VALUE['a' + i] = (byte) (10 + i);
            HEX_VALUE['A' + i] = (byte) (10 + i);
        }
        WHITESPACE[' '] = true;
        WHITESPACE['\t'] = true;
        WHITESPACE['\n'] = true;
        WHITESPACE['\r'] = true;
    }

    static final byte[] TRUE = EnvelopeFields.ascii("true");
    static final byte[] FALSE = EnvelopeFields.ascii("false");
    static final byte[] NULL = EnvelopeFields.ascii("null");

    /** The kept input array (headers up to {@link #KEEP_LIMIT}): reused from header to header. */
    private byte[] kept = new byte[2048];
    /** The current header's bytes from index 0, then {@link #PAD} zeros: {@link #kept}, or a one-off larger array. */
    byte[] a = kept;
    /** The current header's length. */
    int end;
    /** The cursor: what the token methods read from and move past. */
    int p;
    private Stop stop = Stop.NONE;
    private int stopAt;

    /** Copies {@code buf[index, index + length)} in as the current input (the buffer is only read); the cursor at 0. */
    byte[] load(ByteBuf buf, int index, int length) {
        byte[] in = length + PAD <= kept.length ? kept : new byte[length + PAD];
        if (in.length <= KEEP_LIMIT) {
            kept = in;
        }
        buf.getBytes(index, in, 0, length);
        LONG.set(in, length, 0L); // the zero padding (PAD bytes)
        a = in;
        end = length;
        p = 0;
        stop = Stop.NONE;
        return in;
    }

    /** Why the last token not taken was not taken ({@link Stop#NONE}: every token was). */
    Stop stop() {
        return stop;
    }

    /** Where in the input {@link #stop()} was found. */
    int stopAt() {
        return stopAt;
    }

    /** Notes why and where the scan stops; returns -1. */
    int fail(Stop why, int at) {
        stop = why;
        stopAt = at;
        return -1;
    }

    /** {@link #fail} for boolean answers: returns false. */
    boolean refuse(Stop why, int at) {
        fail(why, at);
        return false;
    }

    /** Eight input bytes from {@code at}, little-endian (bytes past the input are its zero padding). */
    long word(int at) {
        return (long) LONG.get(a, at);
    }

    /** The first index from {@code p} on that is not JSON whitespace. */
    static int ws(byte[] a, int p) {
        while (WHITESPACE[a[p] & 0xFF]) {
            p++;
        }
        return p;
    }

    /**
     * Copies the JSON string whose content starts at the cursor to {@code o[w...]} as UTF-8, escapes
     * decoded; leaves the cursor past the closing quote and returns the end in {@code o}, or -1.
     */
    int string(byte[] o, int w) {
        byte[] a = this.a;
        int p = this.p;
        while (true) {
            // eight bytes at a time up to the first special one; the zero padding after the input stops
            // this before its end, and output arrays have room for eight bytes past what is written
            long x = (long) LONG.get(a, p);
            long t = special(x);
            while (t == 0) {
                LONG.set(o, w, x);
                p += 8;
                w += 8;
                x = (long) LONG.get(a, p);
                t = special(x);
            }
            int plain = Long.numberOfTrailingZeros(t) >>> 3; // little-endian: the lowest flag is the first special byte
            LONG.set(o, w, x); // the plain bytes, and some after them that later writes replace
            p += plain;
            w += plain;
            if (a[p] == '"') {
                this.p = p + 1;
                return w;
            }
            this.p = p;
            w = unusual(a, o, w);
            if (w < 0) {
                return -1;
            }
            p = this.p;
        }
    }

    /**
     * Copies the escape or multi-byte UTF-8 sequence at the cursor to {@code o[w...]} and moves the
     * cursor past it; returns the end in {@code o}, or -1 (a raw control character, the end of input,
     * a bad escape or sequence). Kept out of {@link #string} so that stays small enough to inline.
     */
    private int unusual(byte[] a, byte[] o, int w) {
        int p = this.p;
        byte b = a[p];
        if (b == '\\' && a[p + 1] == 'u' && a[p + 2] == '0' && a[p + 3] == '0'
            && HEX_VALUE[a[p + 4] & 0xFF] >= 0 && HEX_VALUE[a[p + 5] & 0xFF] >= 0) {
            // a u00XX escape: how fastjson writes control characters (the properties' separators among them)
            this.p = p + 6;
            return Utf8.put(o, w, HEX_VALUE[a[p + 4] & 0xFF] << 4 | HEX_VALUE[a[p + 5] & 0xFF]);
        }
        if (b == '\\') {
            int c = escape(a[p + 1]);
            if (c < 0) {
                return fail(p + 1 >= end ? Stop.END_OF_INPUT : Stop.BAD_ESCAPE, p);
            }
            p += 2;
            if (c == 'u') {
                int cp = hex4(a, p);
                if (cp < 0) {
                    return fail(Stop.BAD_UNICODE_ESCAPE, p - 2);
                }
                p += 4;
                if (cp >= 0xD800 && cp <= 0xDFFF) {
                    int low = cp <= 0xDBFF && a[p] == '\\' && a[p + 1] == 'u' ? hex4(a, p + 2) : -1;
                    if (low >= 0xDC00 && low <= 0xDFFF) {
                        p += 6;
                        cp = Character.toCodePoint((char) cp, (char) low);
                    } else {
                        cp = '?'; // an unpaired surrogate, as String.getBytes(UTF_8) writes it
                    }
                }
                w = Utf8.put(o, w, cp);
            } else {
                o[w++] = (byte) c;
            }
        } else if (b < 0) {
            int n = Utf8.sequenceLength(a, p, end);
            if (n < 0) {
                return fail(Stop.INVALID_UTF8, p);
            }
            System.arraycopy(a, p, o, w, n);
            p += n;
            w += n;
        } else {
            return fail(p >= end ? Stop.END_OF_INPUT : Stop.CONTROL_CHARACTER, p);
        }
        this.p = p;
        return w;
    }

    /**
     * The high bit of each byte of {@code x} (little-endian) that is a quote, a backslash, a control
     * character or non-ASCII, exact up to the first such byte (bytes after it may be flagged too); 0
     * when there is none.
     */
    private static long special(long x) {
        long quote = x ^ 0x2222222222222222L;
        long backslash = x ^ 0x5C5C5C5C5C5C5C5CL;
        // a zero byte in quote or backslash ((v - 1s) & ~v), a byte below 0x20 (borrows into its high
        // bit), or a high bit already set; a borrow only runs upward, past the first flagged byte
        return (((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash) | (x - 0x2020202020202020L) | x) & HIGHS;
    }

    /** The character an escape letter stands for ('u' for \\u), or -1. */
    private static int escape(byte letter) {
        return switch (letter) {
            case '"' -> '"';
            case '\\' -> '\\';
            case '/' -> '/';
            case 'b' -> '\b';
            case 'f' -> '\f';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case 'u' -> 'u';
            default -> -1;
        };
    }

    /** The four hex digits at {@code a[at]} as a number, or -1 (stops at the first non-digit). */
    private static int hex4(byte[] a, int at) {
        int v = 0;
        for (int i = at; i < at + 4; i++) {
            int d = HEX_VALUE[a[i] & 0xFF];
            if (d < 0) {
                return -1;
            }
            v = v << 4 | d;
        }
        return v;
    }

    /**
     * After a key (the cursor at what follows its closing quote): the colon and a scalar value, written
     * at {@code o[w...]}; returns its end in {@code o}, {@link #NULL_VALUE}, or -1.
     */
    int memberValue(byte[] o, int w) {
        byte[] a = this.a;
        int p = ws(a, this.p);
        if (a[p] != ':') {
            return fail(Stop.EXPECTED_COLON, p);
        }
        p = ws(a, p + 1);
        this.p = p;
        return switch (a[p]) {
            case '"' -> {
                this.p = p + 1;
                yield string(o, w);
            }
            case 't' -> literal(TRUE) ? put(o, w, TRUE) : -1;
            case 'f' -> literal(FALSE) ? put(o, w, FALSE) : -1;
            case 'n' -> literal(NULL) ? NULL_VALUE : -1;
            default -> number(o, w);
        };
    }

    /** Copies a JSON number's text at the cursor to {@code o[w...]}; returns the end in {@code o}, or -1. */
    int number(byte[] o, int w) {
        int start = this.p;
        int q = numberEnd(start);
        if (q < 0) {
            return -1;
        }
        int n = q - start;
        System.arraycopy(a, start, o, w, n);
        this.p = q;
        return w + n;
    }

    /** The end of the JSON number starting at {@code a[p]}, or -1. */
    private int numberEnd(int p) {
        byte[] a = this.a;
        int start = p;
        if (a[p] == '-') {
            p++;
        }
        if (a[p] == '0') {
            p++;
        } else if (isDigit(a[p])) {
            while (isDigit(a[p])) {
                p++;
            }
        } else {
            return notNumber(start, p);
        }
        if (a[p] == '.') {
            p++;
            if (!isDigit(a[p])) {
                return notNumber(start, p);
            }
            while (isDigit(a[p])) {
                p++;
            }
        }
        if (a[p] == 'e' || a[p] == 'E') {
            p++;
            if (a[p] == '+' || a[p] == '-') {
                p++;
            }
            if (!isDigit(a[p])) {
                return notNumber(start, p);
            }
            while (isDigit(a[p])) {
                p++;
            }
        }
        return p - start > MAX_NUMBER_LENGTH ? fail(Stop.NUMBER_TOO_LONG, start) : p;
    }

    /** The failure of a number that starts at {@code start} and goes wrong at {@code at}. */
    private int notNumber(int start, int at) {
        byte b = a[start];
        if (at == start && (b == '{' || b == '[')) {
            return fail(Stop.NESTED_VALUE, start);
        }
        return fail(at >= end ? Stop.END_OF_INPUT : Stop.BAD_NUMBER, at);
    }

    /** An integer that fits an int at the cursor (no fraction, no exponent), or {@link #BAIL}. */
    long intValue() {
        byte[] a = this.a;
        int p = this.p;
        boolean negative = a[p] == '-';
        if (negative) {
            p++;
        }
        int start = p;
        // up to seven digits (code, flag, version and most opaques) read as one word: the digits counted by
        // the first byte that is not one, their value by three multiplies (bytes past the input are padding)
        long x = (long) LONG.get(a, p);
        long nonDigit = ((x & 0xF0F0F0F0F0F0F0F0L) ^ 0x3030303030303030L)
            | (((x + 0x0606060606060606L) & 0xF0F0F0F0F0F0F0F0L) ^ 0x3030303030303030L);
        long v;
        int digits = Long.numberOfTrailingZeros(nonDigit) >>> 3; // 8 when all eight are digits
        if (digits < 8) {
            if (digits == 0) {
                fail(Stop.NOT_AN_INT, this.p);
                return BAIL;
            }
            long d = (x - 0x3030303030303030L) << (64 - 8 * digits); // the digits, most significant first, in the high bytes
            d = d * 10 + (d >>> 8);
            d = ((d & 0x000000FF000000FFL) * (100 + (1000000L << 32))
                + ((d >>> 16) & 0x000000FF000000FFL) * (1 + (10000L << 32))) >>> 32;
            v = d;
            p += digits;
        } else {
            v = 0;
            int d;
            while ((d = a[p] - '0') >= 0 && d <= 9) {
                v = v * 10 + d;
                p++;
                if (p - start > 10) {
                    fail(Stop.NOT_AN_INT, this.p);
                    return BAIL;
                }
            }
            digits = p - start;
        }
        v = negative ? -v : v;
        if ((digits > 1 && a[start] == '0') || a[p] == '.' || (a[p] | 0x20) == 'e'
            || v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            fail(Stop.NOT_AN_INT, this.p);
            return BAIL;
        }
        this.p = p;
        return v;
    }

    /** Steps over a string, number or literal at the cursor (a string is copied to the free space at {@code o[w...]}). */
    boolean skipScalar(byte[] o, int w) {
        byte b = a[this.p];
        if (b == '"') {
            this.p++;
            return string(o, w) >= 0;
        }
        if (b == 't') {
            return literal(TRUE);
        }
        if (b == 'f') {
            return literal(FALSE);
        }
        if (b == 'n') {
            return literal(NULL);
        }
        int q = numberEnd(this.p);
        if (q < 0) {
            return false;
        }
        this.p = q;
        return true;
    }

    /** Steps over {@code word} at the cursor; false when it is not there. */
    boolean literal(byte[] word) {
        int p = this.p;
        if (!same(a, p, word)) {
            return refuse(Stop.BAD_LITERAL, p);
        }
        this.p = p + word.length;
        return true;
    }

    static int put(byte[] o, int w, byte[] word) {
        System.arraycopy(word, 0, o, w, word.length);
        return w + word.length;
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    /** Whether {@code word} is at {@code a[at]} (short words: a plain loop beats Arrays.equals' range checks). */
    static boolean same(byte[] a, int at, byte[] word) {
        for (int i = 0; i < word.length; i++) {
            if (a[at + i] != word[i]) {
                return false;
            }
        }
        return true;
    }
}
