package io.rmqgw.codec.json;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.remoting.protocol.LanguageCode;

/**
 * Single-pass renderer of a remoting header as JSON, from the ROCKETMQ binary layout: the fields in
 * the order and with the names fastjson writes for a RemotingCommand ({@code code, extFields, flag,
 * language, opaque, remark, serializeTypeCurrentRPC, version}), strings escaped as JSON requires
 * (quote, backslash, control characters) and every other byte, multi-byte UTF-8 included, copied.
 * Nothing is decoded into Strings.
 *
 * <p>One per thread ({@link #get()}); not reentrant. The result ({@link #bytes()}[0, {@link #length()}))
 * stays valid until the next call on the thread. Input buffers and arrays are only read. The frame
 * decoder loads each binary header it checks ({@link #load}) and the frame keeps this renderer with the
 * load's {@link #stamp()}, so a render of that frame while the load is still the thread's last one copies
 * nothing more ({@link #renderLoaded()}; see {@code HeaderCodec.loaded}).
 */
public final class BinaryToJson extends ThreadScratch {

    private static final int KEEP_LIMIT = 64 * 1024;
    /** Eight bytes at a time, for runs that need no escape. */
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final int REMARK_LENGTH_AT = EnvelopeFields.REMARK_LENGTH_AT;
    private static final byte[] HEX = EnvelopeFields.ascii("0123456789abcdef");
    /** Per ASCII byte: 0 copied, 'u' written as \\u00XX, otherwise the letter of its short escape. */
    private static final byte[] ESCAPE = new byte[128];
    private static final byte[][] LANGUAGE_NAMES = new byte[256][];

    static {
        for (int c = 0; c < 0x20; c++) {
            ESCAPE[c] = 'u';
        }
        ESCAPE['\b'] = 'b';
        ESCAPE['\t'] = 't';
        ESCAPE['\n'] = 'n';
        ESCAPE['\f'] = 'f';
        ESCAPE['\r'] = 'r';
        ESCAPE['"'] = '"';
        ESCAPE['\\'] = '\\';
        for (LanguageCode language : LanguageCode.values()) {
            if (LANGUAGE_NAMES[language.getCode() & 0xFF] == null) { // the first with a code, as LanguageCode.valueOf
                LANGUAGE_NAMES[language.getCode() & 0xFF] = EnvelopeFields.ascii(language.name());
            }
        }
    }

    private static final byte[] J_CODE = EnvelopeFields.ascii("{\"code\":");
    private static final byte[] J_EXT = EnvelopeFields.ascii(",\"extFields\":{");
    private static final byte[] J_FLAG = EnvelopeFields.ascii(",\"flag\":");
    private static final byte[] J_LANGUAGE = EnvelopeFields.ascii(",\"language\":\"");
    private static final byte[] J_OPAQUE = EnvelopeFields.ascii(",\"opaque\":");
    private static final byte[] J_REMARK = EnvelopeFields.ascii(",\"remark\":\"");
    private static final byte[] J_TAIL = EnvelopeFields.ascii(",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");

    // per-thread scratch, not a memo: the input and output arrays are reused by every header this event loop
    // renders, so the hot path allocates nothing
    private static final FastThreadLocal<BinaryToJson> LOCAL = new FastThreadLocal<>() {
        @Override
        protected BinaryToJson initialValue() {
            return new BinaryToJson();
        }
    };

    private byte[] in = new byte[2048];
    private byte[] out = new byte[4096];
    private byte[] result = out;
    private int length;
    /** Bytes of the loaded header in {@code in} (or a one-off larger array). */
    private byte[] loadedIn = in;
    private int loaded;

    private BinaryToJson() {
    }

    /** This thread's renderer. */
    public static BinaryToJson get() {
        return LOCAL.get();
    }

    /** The array holding the JSON header from index 0; valid until the next call on this thread. */
    public byte[] bytes() {
        return result;
    }

    /** Length of the JSON header in {@link #bytes()}. */
    public int length() {
        return length;
    }

    /**
     * Renders the binary header read from the wire in {@code buf[index, index + length)}, as
     * rocketmq-remoting would after decoding it (zero-length remark, keys and values are null there,
     * and left out). False when a length field runs past the header.
     */
    public boolean transcode(ByteBuf buf, int index, int length) {
        load(buf, index, length);
        return renderLoaded();
    }

    /**
     * Copies the binary header in {@code buf[index, index + length)} into this thread's input array and
     * returns it (valid until the next call on the thread); the buffer is only read. A new {@link #stamp()}.
     */
    public byte[] load(ByteBuf buf, int index, int length) {
        renew();
        byte[] a = length <= in.length ? in : new byte[length];
        if (a.length <= KEEP_LIMIT) {
            in = a;
        }
        buf.getBytes(index, a, 0, length);
        loadedIn = a;
        loaded = length;
        return a;
    }

    /** Renders the loaded header, as {@link #transcode}; false when a length field runs past it. */
    public boolean renderLoaded() {
        int length = loaded;
        byte[] a = loadedIn;
        if (length < EnvelopeFields.MIN_LENGTH) {
            return false;
        }
        int remarkLength = getInt(a, REMARK_LENGTH_AT);
        if (remarkLength < 0 || remarkLength > length - EnvelopeFields.MIN_LENGTH) {
            return false;
        }
        int extAt = REMARK_LENGTH_AT + 4 + remarkLength;
        int extLength = getInt(a, extAt);
        if (extLength < 0 || extLength > length - EnvelopeFields.MIN_LENGTH - remarkLength) {
            return false;
        }
        return render((short) ((a[0] & 0xFF) << 8 | a[1] & 0xFF), a[2], (short) ((a[3] & 0xFF) << 8 | a[4] & 0xFF),
            getInt(a, 5), getInt(a, 9), a, REMARK_LENGTH_AT + 4, remarkLength == 0 ? -1 : remarkLength,
            a, extAt + 4, extLength, extLength > 0, true);
    }

    /**
     * Renders a header from its parts: the remark in {@code remark[remarkOff, +remarkLength)} (-1: none),
     * the binary extFields entries in {@code ext[extOff, +extLength)}. {@code extGiven} writes an
     * extFields object even when no entry is written; {@code zeroIsNull} leaves out entries with a
     * zero-length key or value (a binary source), else they are written as {@code ""}. False when an
     * entry's length runs past the entries.
     */
    public boolean render(int code, byte language, int version, int opaque, int flag, byte[] remark, int remarkOff,
                          int remarkLength, byte[] ext, int extOff, int extLength, boolean extGiven, boolean zeroIsNull) {
        length = 0;
        int bound = 160 + 6 * (Math.max(remarkLength, 0) + extLength);
        byte[] o = bound <= out.length ? out : new byte[bound];
        if (o.length <= KEEP_LIMIT) {
            out = o;
        }
        int w = put(o, 0, J_CODE);
        w = putDecimal(o, w, code);
        if (extGiven || extLength > 0) {
            w = put(o, w, J_EXT);
            w = entries(ext, extOff, extOff + extLength, o, w, zeroIsNull);
            if (w < 0) {
                return false;
            }
            o[w++] = '}';
        }
        w = put(o, w, J_FLAG);
        w = putDecimal(o, w, flag);
        byte[] name = LANGUAGE_NAMES[language & 0xFF];
        if (name != null) {
            w = put(o, w, J_LANGUAGE);
            w = put(o, w, name);
            o[w++] = '"';
        }
        w = put(o, w, J_OPAQUE);
        w = putDecimal(o, w, opaque);
        if (remarkLength >= 0) {
            w = put(o, w, J_REMARK);
            w = escaped(remark, remarkOff, remarkLength, o, w);
            o[w++] = '"';
        }
        w = put(o, w, J_TAIL);
        w = putDecimal(o, w, version);
        o[w++] = '}';
        result = o;
        length = w;
        return true;
    }

    /**
     * The binary extFields entries in {@code ext[off, off + length)} as JSON object members
     * ({@code "k":"v","k2":"v2"}, no braces), escaped as {@link #render} writes them; null when an entry's
     * length runs past the entries. For parts of a header built once and written many times.
     */
    public static byte[] members(byte[] ext, int off, int length, boolean zeroIsNull) {
        byte[] o = new byte[6 * length + 8];
        int w = entries(ext, off, off + length, o, 0, zeroIsNull);
        return w < 0 ? null : java.util.Arrays.copyOf(o, w);
    }

    /** UTF-8 bytes {@code a[off, off + length)} as the inside of a JSON string, escaped as {@link #render} does. */
    public static byte[] escapedCopy(byte[] a, int off, int length) {
        byte[] o = new byte[6 * length + 8];
        return java.util.Arrays.copyOf(o, escaped(a, off, length, o, 0));
    }

    private static int entries(byte[] a, int pos, int end, byte[] o, int w, boolean zeroIsNull) {
        boolean first = true;
        while (pos < end) {
            if (end - pos < 6) {
                return -1;
            }
            int keyLength = (short) ((a[pos] & 0xFF) << 8 | a[pos + 1] & 0xFF);
            int key = pos + 2;
            if (keyLength < 0 || keyLength > end - key - 4) {
                return -1;
            }
            int valueLength = getInt(a, key + keyLength);
            int value = key + keyLength + 4;
            if (valueLength < 0 || valueLength > end - value) {
                return -1;
            }
            pos = value + valueLength;
            if (zeroIsNull && (keyLength == 0 || valueLength == 0)) {
                continue; // null in rocketmq-remoting's map: fastjson leaves it out
            }
            if (!first) {
                o[w++] = ',';
            }
            first = false;
            o[w++] = '"';
            w = escaped(a, key, keyLength, o, w);
            o[w++] = '"';
            o[w++] = ':';
            o[w++] = '"';
            w = escaped(a, value, valueLength, o, w);
            o[w++] = '"';
        }
        return w;
    }

    /**
     * Writes UTF-8 bytes as the inside of a JSON string; returns the end. Runs without a quote,
     * backslash or control character go eight bytes at a time ({@code o} has room for eight bytes
     * past what is written: see the bound in {@link #render}).
     */
    private static int escaped(byte[] a, int off, int len, byte[] o, int w) {
        int start = w;
        int i = off;
        int end = off + len;
        long high = 0;
        while (true) {
            while (end - i >= 8) {
                long x = (long) LONG.get(a, i);
                long t = needsEscape(x);
                high |= x;
                LONG.set(o, w, x);
                if (t != 0) {
                    int plain = Long.numberOfTrailingZeros(t) >>> 3; // little-endian: the first flagged byte
                    i += plain;
                    w += plain;
                    break;
                }
                i += 8;
                w += 8;
            }
            if (i >= end) {
                break;
            }
            if (a.length - i >= 8) {
                // the last one to seven bytes as one word too (whatever follows them in the array masked off)
                long keep = -1L >>> (64 - 8 * (end - i));
                long x = (long) LONG.get(a, i) & keep;
                long t = needsEscape(x) & keep;
                high |= x;
                LONG.set(o, w, x);
                if (t == 0) {
                    w += end - i;
                    break;
                }
                int plain = Long.numberOfTrailingZeros(t) >>> 3;
                i += plain;
                w += plain;
            }
            high |= a[i];
            w = escapedByte(a[i++], o, w);
        }
        if ((high & HIGHS) != 0 && !Utf8.wellFormed(a, off, end)) {
            // copied as they are, malformed bytes would make JSON no one can read; rocketmq-remoting reads
            // binary fields into Strings, each malformed sequence a U+FFFD: write what it would have read
            byte[] decoded = new String(a, off, len, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
            return escaped(decoded, 0, decoded.length, o, start);
        }
        return w;
    }

    /**
     * The high bit of each byte of {@code x} that is a quote, a backslash or a control character, exact
     * up to the first one (bytes of multi-byte UTF-8 are not flagged: they are copied).
     */
    private static long needsEscape(long x) {
        long quote = x ^ 0x2222222222222222L;
        long backslash = x ^ 0x5C5C5C5C5C5C5C5CL;
        return (((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash) | ((x - 0x2020202020202020L) & ~x)) & HIGHS;
    }

    /** Writes one byte as JSON string content. */
    private static int escapedByte(byte b, byte[] o, int w) {
        byte e = b >= 0 ? ESCAPE[b] : 0;
        if (e == 0) {
            o[w] = b;
            return w + 1;
        }
        if (e == 'u') {
            o[w] = '\\';
            o[w + 1] = 'u';
            o[w + 2] = '0';
            o[w + 3] = '0';
            o[w + 4] = HEX[b >> 4];
            o[w + 5] = HEX[b & 0xF];
            return w + 6;
        }
        o[w] = '\\';
        o[w + 1] = e;
        return w + 2;
    }

    private static int putDecimal(byte[] o, int w, int v) {
        long x = v;
        if (x < 0) {
            o[w++] = '-';
            x = -x;
        }
        int digits = 1;
        for (long limit = 10; digits < 10 && x >= limit; limit *= 10) {
            digits++;
        }
        int end = w + digits;
        for (int at = end - 1; at >= w; at--) {
            o[at] = (byte) ('0' + x % 10);
            x /= 10;
        }
        return end;
    }

    private static int put(byte[] o, int w, byte[] word) {
        System.arraycopy(word, 0, o, w, word.length);
        return w + word.length;
    }

    private static int getInt(byte[] a, int at) {
        return (int) INT.get(a, at); // one load, not four byte loads and shifts
    }

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
}
