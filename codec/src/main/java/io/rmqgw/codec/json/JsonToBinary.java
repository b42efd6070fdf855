package io.rmqgw.codec.json;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.rocketmq.remoting.protocol.LanguageCode;

/**
 * Single-pass transcoder of a remoting JSON header into the ROCKETMQ binary header: one scan of the
 * header bytes reads the envelope (code, language, version, opaque, flag, remark) and writes every
 * extFields entry in the binary entry layout ({@code short keyLength, key, int valueLength, value}) as
 * it goes. Value bytes are copied, not decoded into Strings; escapes are decoded to UTF-8 exactly as
 * jackson and {@code String.getBytes(UTF_8)} together would (an unpaired surrogate becomes '?').
 *
 * <p>It accepts a strict subset of JSON: what fastjson 1 and fastjson2 write for a RemotingCommand
 * (any field order, any escapes, raw UTF-8, whitespace) plus scalar values where strings are expected.
 * Anything else (nested values where scalars belong, escaped field names, a byte order mark, invalid
 * UTF-8, malformed input) makes {@link #transcode} return false, and the caller reads the header with
 * the general (jackson) reader, which either reads it the same way or refuses it with a reason. The
 * subset is chosen so that whatever is accepted here reads exactly as the general reader reads it.
 *
 * <p>The binary header ({@link #bytes()}[{@link #HEAD_ROOM}, {@link #HEAD_ROOM} + {@link #length()})) is
 * complete: code and version are
 * written as 16-bit fields (check {@link #code()} and {@link #version()} before sending it: codes such
 * as POP_MESSAGE do not fit), an absent language as JAVA (RemotingCommand's default). Empty strings
 * are written as zero-length values, which a binary reader takes for null, as rocketmq-remoting does.
 *
 * <p>One per thread ({@link #get()}); not reentrant. The result stays valid until the next call on the
 * thread. The input buffer is only read (its bytes are copied once into a thread-local array), never
 * retained or released. A result can be noted as the one for a frame ({@link #hold(Object)}), so that
 * a decode right after the frame decoder's read (same thread, same frame object) uses it instead of
 * reading the header again; the note is a plain reference to the frame object, not a reference count
 * on its buffer, and is dropped by the thread's next transcode. The result's array can also be given
 * away whole ({@link #handOver}), so that a typed header keeps it as its own without a copy.
 */
public final class JsonToBinary {

    /** code(2) language(1) version(2) opaque(4) flag(4). */
    public static final int FIXED_LENGTH = 13;
    /** The fixed fields, the remark length and the extFields length. */
    public static final int MIN_LENGTH = 21;
    /**
     * Bytes of {@link #bytes()} in front of the binary header, free for the caller: room for the frame
     * prefix (total length, serialize type and header length), so a binary frame head goes out in one copy.
     */
    public static final int HEAD_ROOM = 8;

    private static final int KEEP_LIMIT = 64 * 1024;
    /** Zero bytes after the input: any read past the end meets a 0, which nothing here accepts. */
    private static final int PAD = 8;
    /** jackson's default limit on a number's length (StreamReadConstraints). */
    private static final int MAX_NUMBER_LENGTH = 1000;
    private static final int MAX_KEY_LENGTH = Short.MAX_VALUE;
    private static final long BAIL = Long.MIN_VALUE;
    /** Eight bytes at a time, for runs of plain string bytes. */
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    private static final byte[][] LANGUAGE_NAMES;
    private static final byte[] LANGUAGE_CODES;

    static {
        LanguageCode[] languages = LanguageCode.values();
        LANGUAGE_NAMES = new byte[languages.length][];
        LANGUAGE_CODES = new byte[languages.length];
        for (int i = 0; i < languages.length; i++) {
            LANGUAGE_NAMES[i] = ascii(languages[i].name());
            LANGUAGE_CODES[i] = languages[i].getCode();
        }
    }

    /** Per byte: its value as a hex digit, or -1. */
    private static final byte[] HEX_VALUE = new byte[256];
    /** Per byte: whether it is a letter (every top-level name RemotingCommand has is letters only). */
    private static final boolean[] NAME_BYTE = new boolean[256];
    /** Per byte: whether it can be a one-byte key as it stands (printable ASCII, not a quote or a backslash). */
    private static final boolean[] PLAIN_KEY_BYTE = new boolean[256];
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
        for (int c = 'a'; c <= 'z'; c++) {
            NAME_BYTE[c] = true;
            NAME_BYTE[c - 'a' + 'A'] = true;
        }
        for (int c = 0x20; c < 0x80; c++) {
            PLAIN_KEY_BYTE[c] = c != '"' && c != '\\';
        }
        WHITESPACE[' '] = true;
        WHITESPACE['\t'] = true;
        WHITESPACE['\n'] = true;
        WHITESPACE['\r'] = true;
    }

    /** The one extFields key whose value's place in the input a scan notes ({@link #locatedValue()}). */
    private static final byte[] LOCATED_KEY = ascii("msgId");
    /** {@link #locatedValue()}'s answer when the value is not certainly located. */
    public static final long NOT_LOCATED = -1L;

    private static final byte[] TRUE = ascii("true");
    private static final byte[] FALSE = ascii("false");
    private static final byte[] NULL = ascii("null");

    // top-level field names
    private static final byte[] CODE = ascii("code");
    private static final byte[] EXT_FIELDS = ascii("extFields");
    private static final byte[] FLAG = ascii("flag");
    private static final byte[] LANGUAGE = ascii("language");
    private static final byte[] OPAQUE = ascii("opaque");
    private static final byte[] REMARK = ascii("remark");
    private static final byte[] VERSION = ascii("version");

    // top-level fields, by what the scan does with their values
    private static final int F_OTHER = 0;
    private static final int F_CODE = 1;
    private static final int F_EXT_FIELDS = 2;
    private static final int F_FLAG = 3;
    private static final int F_LANGUAGE = 4;
    private static final int F_OPAQUE = 5;
    private static final int F_REMARK = 6;
    private static final int F_VERSION = 7;
    /** {@code "serializeTypeCurrentRPC":"JSON"} matched whole, value included: nothing left to read. */
    private static final int F_DONE = 8;

    /*
     * The top-level names as fastjson 1 and fastjson2 write them (quotes and colon, no whitespace),
     * packed little-endian eight bytes to a word, so that a name is matched with one or two long
     * compares instead of byte by byte. A name written any other way goes the general way.
     */
    private static final long W_CODE = word("\"code\":", 0);
    private static final long W_EXT_FIELDS = word("\"extFields\":", 0);
    private static final long W_EXT_FIELDS_2 = word("\"extFields\":", 8);
    private static final long W_FLAG = word("\"flag\":", 0);
    private static final long W_LANGUAGE = word("\"language\":", 0);
    private static final long W_LANGUAGE_2 = word("\"language\":", 8);
    private static final long W_OPAQUE = word("\"opaque\":", 0);
    private static final long W_REMARK = word("\"remark\":", 0);
    private static final long W_VERSION = word("\"version\":", 0);
    private static final long W_VERSION_2 = word("\"version\":", 8);
    private static final long W_SERIALIZE_TYPE = word("\"serializeTypeCurrentRPC\":\"JSON\"", 0);
    private static final long W_SERIALIZE_TYPE_2 = word("\"serializeTypeCurrentRPC\":\"JSON\"", 8);
    private static final long W_SERIALIZE_TYPE_3 = word("\"serializeTypeCurrentRPC\":\"JSON\"", 16);
    private static final long W_SERIALIZE_TYPE_4 = word("\"serializeTypeCurrentRPC\":\"JSON\"", 24);
    private static final long W_JAVA = word("\"JAVA\"", 0);
    private static final byte JAVA_CODE = LanguageCode.JAVA.getCode();
    /** {@code "k":"} with any k: bytes 0, 2, 3 and 4 of a word. */
    private static final long ONE_BYTE_KEY_MASK = 0xFF_FF_FF_00_FFL;
    private static final long ONE_BYTE_KEY = word("\"?\":\"", 0) & ONE_BYTE_KEY_MASK;
    private static final long COMMA_QUOTE = word(",\"", 0);

    private static final FastThreadLocal<JsonToBinary> LOCAL = new FastThreadLocal<>() {
        @Override
        protected JsonToBinary initialValue() {
            return new JsonToBinary();
        }
    };

    private byte[] in = new byte[2048];
    /** The last header's input: {@link #in}, or a one-off larger array. */
    private byte[] lastInput = in;
    private static final int OUT_SIZE = 2048;

    private byte[] out = new byte[OUT_SIZE];
    /** Whatever the last taker of an array left with {@link #out} when it handed it in (a view of it), or null. */
    private Object outView;
    /** The view that went with the array last given away by {@link #handOver}. */
    private Object handedView;
    private byte[] remarkBuf = new byte[256];
    /**
     * Per one-byte key (always ASCII): where its last entry starts, counted from the first entry; valid
     * for the keys flagged in {@link #oneByteKeysLow} (bytes 0-63) and {@link #oneByteKeysHigh} (64-127).
     * Lets a typed header fill its slots without walking the entries again.
     */
    private final int[] oneByteKeyAt = new int[128];
    private long oneByteKeysLow;
    private long oneByteKeysHigh;
    /** Entries whose key is not one byte long (a typed header walks the entries for those). */
    private int longKeyCount;
    /** The array holding the last result (the kept one, or a one-off larger one). */
    private byte[] result = out;
    private int length;
    private Object heldFor;
    /** What another package keeps per thread with this transcoder (see {@link #attachment()}). */
    private Object attachment;

    /** Input cursor shared by the scanning helpers. */
    private int p;
    private int code;
    private byte language;
    private boolean languageGiven;
    private int version;
    private int opaque;
    private int flag;
    private boolean extFieldsGiven;
    private boolean remarkGiven;
    private int remarkLength;
    private int entryCount;
    /** Entries with the key {@link #LOCATED_KEY} in the last header, and where the value of one sits (packed) or -1. */
    private int locatedCount;
    private long located;

    private JsonToBinary() {
    }

    /** This thread's transcoder. */
    public static JsonToBinary get() {
        return LOCAL.get();
    }

    /**
     * Transcodes the JSON header in {@code buf[index, index + length)}; true when done, false when the
     * header needs the general reader (see the class doc). The buffer is only read.
     */
    public boolean transcode(ByteBuf buf, int index, int length) {
        heldFor = null;
        byte[] a = length + PAD <= in.length ? in : new byte[length + PAD];
        if (a.length <= KEEP_LIMIT) {
            in = a;
        }
        buf.getBytes(index, a, 0, length);
        lastInput = a;
        LONG.set(a, length, 0L); // the zero padding (PAD bytes)
        int bound = 2 * length + 64 + HEAD_ROOM;
        byte[] o = bound <= out.length ? out : new byte[bound];
        if (o != out && o.length <= KEEP_LIMIT) {
            out = o;
            outView = null;
        }
        if (length + PAD > remarkBuf.length) {
            byte[] r = new byte[length + PAD];
            if (r.length <= KEEP_LIMIT) {
                remarkBuf = r;
            }
            return scan(a, length, o, r);
        }
        return scan(a, length, o, remarkBuf);
    }

    /**
     * Per-thread state of the caller's own, kept here so that a caller that already holds this thread's
     * transcoder needs no thread-local lookup of its own (the header package's spare headers); null
     * until {@link #attach}ed.
     */
    public Object attachment() {
        return attachment;
    }

    public void attach(Object attachment) {
        this.attachment = attachment;
    }

    /** Notes the last result as the header of {@code frame} (identity), for {@link #holds(Object)}. */
    public void hold(Object frame) {
        heldFor = frame;
    }

    /** Whether the last result is the header of {@code frame}, noted by {@link #hold(Object)}. */
    public boolean holds(Object frame) {
        return frame != null && heldFor == frame;
    }

    /** The array holding the binary header from {@link #HEAD_ROOM} on; valid until the next call on this thread. */
    public byte[] bytes() {
        return result;
    }

    /**
     * Gives the result's array away: the caller may keep it and write to it (the binary header stays at
     * {@link #HEAD_ROOM}, entries at {@link #entriesStart}). {@code replacement} (may be null), with
     * {@code view} (whatever the caller keeps with it, handed back with it by a later call through
     * {@link #handedView()}), becomes the output array of the next transcodes, so arrays circulate
     * between this transcoder and their takers instead of being copied or allocated. The result is
     * forgotten: a frame it was held for is transcoded again when asked. Read the result's fields
     * ({@link #oneByteKeyOffset}, {@link #code()}, ...) before: they stay until the next transcode, the
     * array's contents are the taker's.
     */
    public byte[] handOver(byte[] replacement, Object view) {
        byte[] given = result;
        if (given == out) {
            handedView = outView;
            out = replacement != null ? replacement : new byte[OUT_SIZE];
            outView = replacement != null ? view : null;
        } else {
            handedView = null; // a one-off larger array: nobody left a view of it
        }
        result = out;
        heldFor = null;
        return given;
    }

    /** The view that went with the array the last {@link #handOver} gave (null: none; make one). */
    public Object handedView() {
        return handedView;
    }

    /** Length of the binary header in {@link #bytes()}. */
    public int length() {
        return length;
    }

    public int code() {
        return code;
    }

    /** The language's wire code: JAVA when the header had none, OTHER for a name no LanguageCode has. */
    public byte languageCode() {
        return language;
    }

    /** Whether the header named a language. */
    public boolean languageGiven() {
        return languageGiven;
    }

    public int version() {
        return version;
    }

    public int opaque() {
        return opaque;
    }

    public int flag() {
        return flag;
    }

    /** Whether the header had an extFields object (an empty one included). */
    public boolean extFieldsGiven() {
        return extFieldsGiven;
    }

    /** Whether the header had a remark string (an empty one, zero-length here, included). */
    public boolean remarkGiven() {
        return remarkGiven;
    }

    public int remarkLength() {
        return remarkLength;
    }

    /** Index in {@link #bytes()} of the first extFields entry. */
    public int entriesStart() {
        return HEAD_ROOM + MIN_LENGTH + remarkLength;
    }

    public int entryCount() {
        return entryCount;
    }

    /**
     * Whether an entry has the one-byte key {@code b} (0-127; a one-byte UTF-8 key is ASCII); its last
     * such entry then starts {@link #oneByteKeyOffset} bytes after the first entry.
     */
    public boolean hasOneByteKey(int b) {
        return ((b < 64 ? oneByteKeysLow : oneByteKeysHigh) >>> b & 1) != 0;
    }

    /** See {@link #hasOneByteKey}: where the last entry with key {@code b} starts, from the first entry. */
    public int oneByteKeyOffset(int b) {
        return oneByteKeyAt[b];
    }

    /** The number of entries whose key is not one byte long. */
    public int longKeyCount() {
        return longKeyCount;
    }

    /**
     * Where the value of the last header's {@code msgId} entry ({@link #LOCATED_KEY}) lies in its JSON bytes, as
     * {@code index << 32 | length} (index 0 is the header's first byte), or {@link #NOT_LOCATED}: the entry is not
     * there, is there more than once, or its value is not a string written as it stands ({@code "msgId":"..."}
     * with no escape in it). A send answer's ids are rewritten there, in the frame ({@code SendAnswerInPlace}),
     * so the scan that read the header also finds them.
     */
    public long locatedValue() {
        return locatedCount == 1 ? located : NOT_LOCATED;
    }

    /**
     * The last header's JSON bytes as read, from index 0; valid until the next transcode on this thread. A caller
     * may write to them (a same-length rewrite of the {@link #locatedValue()}), and must then {@link #forget()}
     * the result, which no longer matches them.
     */
    public byte[] input() {
        return lastInput;
    }

    /** Drops the note of {@link #hold}: a later ask for the frame's header transcodes it again. */
    public void forget() {
        heldFor = null;
    }

    private void noteLocated(int raw, int value, int valueEnd) {
        // every escape is longer than what it decodes to, so a value decoded to its own length had none
        boolean asItStands = raw >= 0 && valueEnd >= 0 && this.p - 1 - raw == valueEnd - value;
        located = locatedCount++ == 0 && asItStands ? (long) raw << 32 | (valueEnd - value) : NOT_LOCATED;
    }

    // ---- the scan ----

    private boolean scan(byte[] a, int end, byte[] o, byte[] r) {
        length = 0;
        code = 0;
        language = LanguageCode.JAVA.getCode();
        languageGiven = false;
        version = 0;
        opaque = 0;
        flag = 0;
        extFieldsGiven = false;
        remarkGiven = false;
        remarkLength = 0;
        entryCount = 0;
        locatedCount = 0;
        located = NOT_LOCATED;
        oneByteKeysLow = 0;
        oneByteKeysHigh = 0;
        longKeyCount = 0;
        boolean sawCode = false;
        int w = HEAD_ROOM + MIN_LENGTH; // entries are written from here; a remark is moved in front of them at the end
        int p = ws(a, 0);
        if (a[p] != '{') {
            return false;
        }
        p = ws(a, p + 1);
        if (a[p] == '}') {
            p++;
        } else {
            while (true) {
                if (a[p] != '"') {
                    return false;
                }
                int field = knownField(a, p);
                if (field < 0) {
                    field = otherField(a, p, o, w);
                    if (field < 0) {
                        return false;
                    }
                }
                p = ws(a, this.p);
                this.p = p;
                switch (field) {
                    case F_CODE -> {
                        long v = intValue(a);
                        if (v == BAIL) {
                            return false;
                        }
                        code = (int) v;
                        sawCode = true;
                    }
                    case F_EXT_FIELDS -> {
                        if (a[p] == '{') {
                            extFieldsGiven = true;
                            this.p = p + 1;
                            w = entries(a, o, w);
                            if (w < 0) {
                                return false;
                            }
                        } else if (!literal(a, NULL)) {
                            return false;
                        }
                    }
                    case F_FLAG -> {
                        long v = intValue(a);
                        if (v == BAIL) {
                            return false;
                        }
                        flag = (int) v;
                    }
                    case F_LANGUAGE -> {
                        if (!language(a)) {
                            return false;
                        }
                    }
                    case F_OPAQUE -> {
                        long v = intValue(a);
                        if (v == BAIL) {
                            return false;
                        }
                        opaque = (int) v;
                    }
                    case F_REMARK -> {
                        if (a[p] == '"') {
                            this.p = p + 1;
                            int n = copyString(a, r, 0);
                            if (n < 0) {
                                return false;
                            }
                            remarkLength = n;
                            remarkGiven = true;
                        } else if (literal(a, NULL)) {
                            remarkLength = 0;
                            remarkGiven = false;
                        } else {
                            return false;
                        }
                    }
                    case F_VERSION -> {
                        long v = intValue(a);
                        if (v == BAIL) {
                            return false;
                        }
                        version = (int) v;
                    }
                    case F_DONE -> {
                    }
                    default -> {
                        if (!skipScalar(a, o, w)) {
                            // serializeTypeCurrentRPC and unknown fields; nested values go to the general reader
                            return false;
                        }
                    }
                }
                p = ws(a, this.p);
                if (a[p] == ',') {
                    p = ws(a, p + 1);
                } else if (a[p] == '}') {
                    p++;
                    break;
                } else {
                    return false;
                }
            }
        }
        if (ws(a, p) != end || !sawCode) {
            return false; // trailing content, or no code: the general reader says which
        }
        int h = HEAD_ROOM;
        int extLength = w - h - MIN_LENGTH;
        int remark = remarkLength;
        if (remark > 0) {
            System.arraycopy(o, h + MIN_LENGTH, o, h + MIN_LENGTH + remark, extLength);
            System.arraycopy(r, 0, o, h + 17, remark);
        }
        putFixedFields(o, h, code, language, version, opaque, flag);
        putInt(o, h + 13, remark);
        putInt(o, h + 17 + remark, extLength);
        result = o;
        length = MIN_LENGTH + remark + extLength;
        return true;
    }

    /**
     * The top-level field whose name is at {@code a[p]} (its opening quote) exactly as fastjson writes
     * it, colon included, matched as whole words; moves the cursor past the colon (past the value for
     * {@link #F_DONE}). -1 when the name is written otherwise or is not one of them. Every word read
     * after the first follows a fully matched one, so it lies within the input and its zero padding.
     */
    private int knownField(byte[] a, int p) {
        long x = (long) LONG.get(a, p);
        int field = -1;
        int next = p;
        switch ((int) (x >>> 8) & 0xFF) { // the name's first letter
            case 'c' -> {
                if ((x & 0x00FFFFFFFFFFFFFFL) == W_CODE) {
                    field = F_CODE;
                    next = p + 7;
                }
            }
            case 'e' -> {
                if (x == W_EXT_FIELDS && ((long) LONG.get(a, p + 8) & 0xFFFFFFFFL) == W_EXT_FIELDS_2) {
                    field = F_EXT_FIELDS;
                    next = p + 12;
                }
            }
            case 'f' -> {
                if ((x & 0x00FFFFFFFFFFFFFFL) == W_FLAG) {
                    field = F_FLAG;
                    next = p + 7;
                }
            }
            case 'l' -> {
                if (x == W_LANGUAGE && ((long) LONG.get(a, p + 8) & 0xFFFFFFL) == W_LANGUAGE_2) {
                    field = F_LANGUAGE;
                    next = p + 11;
                }
            }
            case 'o' -> {
                if (x == W_OPAQUE && a[p + 8] == ':') {
                    field = F_OPAQUE;
                    next = p + 9;
                }
            }
            case 'r' -> {
                if (x == W_REMARK && a[p + 8] == ':') {
                    field = F_REMARK;
                    next = p + 9;
                }
            }
            case 's' -> {
                if (x == W_SERIALIZE_TYPE && (long) LONG.get(a, p + 8) == W_SERIALIZE_TYPE_2
                    && (long) LONG.get(a, p + 16) == W_SERIALIZE_TYPE_3 && (long) LONG.get(a, p + 24) == W_SERIALIZE_TYPE_4) {
                    field = F_DONE;
                    next = p + 32;
                }
            }
            case 'v' -> {
                if (x == W_VERSION && ((long) LONG.get(a, p + 8) & 0xFFFFL) == W_VERSION_2) {
                    field = F_VERSION;
                    next = p + 10;
                }
            }
            default -> {
            }
        }
        this.p = next;
        return field;
    }

    /**
     * The general way to a top-level name at {@code a[p]} (its opening quote): any name, whitespace
     * before the colon. Moves the cursor past the colon and returns the field ({@link #F_OTHER} for
     * names the scan does not read), or -1 (an escaped name, malformed input).
     */
    private int otherField(byte[] a, int p, byte[] o, int w) {
        int name = p + 1;
        int q = name;
        while (NAME_BYTE[a[q] & 0xFF]) {
            q++;
        }
        int nameLength = q - name;
        if (a[q] != '"') {
            // some other name: skipped as a string (written to the free space past the entries)
            this.p = name;
            if (copyString(a, o, w) < 0) {
                return -1;
            }
            q = this.p - 1;
            for (int i = name; i < q; i++) {
                if (a[i] == '\\') {
                    return -1; // an escaped name may spell a known one: the general reader decodes it
                }
            }
            nameLength = -1;
        }
        p = ws(a, q + 1);
        if (a[p] != ':') {
            return -1;
        }
        this.p = p + 1;
        if (nameLength == 4 && same(a, name, CODE)) {
            return F_CODE;
        } else if (nameLength == 9 && same(a, name, EXT_FIELDS)) {
            return F_EXT_FIELDS;
        } else if (nameLength == 4 && same(a, name, FLAG)) {
            return F_FLAG;
        } else if (nameLength == 8 && same(a, name, LANGUAGE)) {
            return F_LANGUAGE;
        } else if (nameLength == 6 && same(a, name, OPAQUE)) {
            return F_OPAQUE;
        } else if (nameLength == 6 && same(a, name, REMARK)) {
            return F_REMARK;
        } else if (nameLength == 7 && same(a, name, VERSION)) {
            return F_VERSION;
        }
        return F_OTHER;
    }

    /**
     * Reads the members of an extFields object (the cursor just past its '{') and writes each as a
     * binary entry from {@code w} on; returns the end of the entries, or -1.
     */
    private int entries(byte[] a, byte[] o, int w) {
        int p = ws(a, this.p);
        if (a[p] == '}') {
            this.p = p + 1;
            return w;
        }
        int first = HEAD_ROOM + MIN_LENGTH; // where the first entry is written (of all extFields objects: they add up)
        long x = (long) LONG.get(a, p);
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
                this.p = p + 5;
                valueEnd = copyString(a, o, value);
            } else {
                if (a[p] != '"') {
                    return -1;
                }
                this.p = p + 1;
                keyEnd = copyString(a, o, key);
                if (keyEnd < 0 || keyEnd - key > MAX_KEY_LENGTH) {
                    return -1;
                }
                p = this.p;
                value = keyEnd + 4;
                int raw = -1; // where the value's bytes start in the input, when written as fastjson writes it
                if (a[p] == ':' && a[p + 1] == '"') { // "key":"value", as fastjson writes it
                    raw = p + 2;
                    this.p = raw;
                    valueEnd = copyString(a, o, value);
                } else {
                    valueEnd = anyValue(a, o, value);
                }
                int keyLength = keyEnd - key;
                o[w] = (byte) (keyLength >> 8);
                o[w + 1] = (byte) keyLength;
                k = keyLength == 1 ? o[key] : -1; // a one-byte UTF-8 key is ASCII
                if (keyLength == LOCATED_KEY.length && Arrays.equals(o, key, keyEnd, LOCATED_KEY, 0, keyLength)) {
                    noteLocated(raw, value, valueEnd);
                }
            }
            if (valueEnd >= 0) {
                putInt(o, keyEnd, valueEnd - value);
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
            } else if (valueEnd != DROPPED) {
                return -1;
            }
            p = this.p;
            x = (long) LONG.get(a, p);
            if ((x & 0xFFFF) == COMMA_QUOTE) { // ,"next as fastjson writes it: the separator and the next key in one read
                p++;
                x >>>= 8;
                continue;
            }
            p = ws(a, p);
            if (a[p] == ',') {
                p = ws(a, p + 1);
                x = (long) LONG.get(a, p);
            } else if (a[p] == '}') {
                this.p = p + 1;
                return w;
            } else {
                return -1;
            }
        }
    }

    /** {@link #anyValue}'s answer for a null value: no entry (RemotingCommand drops null values). */
    private static final int DROPPED = -2;

    /**
     * After a key (the cursor at what follows its closing quote): the colon and a scalar value, written
     * at {@code o[value...]}; returns its end in {@code o}, {@link #DROPPED} for null, or -1.
     */
    private int anyValue(byte[] a, byte[] o, int value) {
        int p = ws(a, this.p);
        if (a[p] != ':') {
            return -1;
        }
        p = ws(a, p + 1);
        this.p = p;
        return switch (a[p]) {
            case '"' -> {
                this.p = p + 1;
                yield copyString(a, o, value);
            }
            case 't' -> literal(a, TRUE) ? put(o, value, TRUE) : -1;
            case 'f' -> literal(a, FALSE) ? put(o, value, FALSE) : -1;
            case 'n' -> literal(a, NULL) ? DROPPED : -1;
            default -> copyNumber(a, o, value);
        };
    }

    /**
     * Copies the JSON string whose content starts at the cursor to {@code o[w...]} as UTF-8, escapes
     * decoded; leaves the cursor past the closing quote and returns the end in {@code o}, or -1.
     */
    private int copyString(byte[] a, byte[] o, int w) {
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
            byte b = a[p];
            if (b == '"') {
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
     * a bad escape or sequence). Kept out of {@link #copyString} so that stays small enough to inline.
     */
    private int unusual(byte[] a, byte[] o, int w) {
        int p = this.p;
        byte b = a[p];
        if (b == '\\' && a[p + 1] == 'u' && a[p + 2] == '0' && a[p + 3] == '0'
            && HEX_VALUE[a[p + 4] & 0xFF] >= 0 && HEX_VALUE[a[p + 5] & 0xFF] >= 0) {
            // a u00XX escape: how fastjson writes control characters (the properties' separators among them)
            this.p = p + 6;
            return putUtf8(o, w, HEX_VALUE[a[p + 4] & 0xFF] << 4 | HEX_VALUE[a[p + 5] & 0xFF]);
        }
        if (b == '\\') {
            int c = escape(a, p + 1);
            if (c < 0) {
                return -1;
            }
            p += 2;
            if (c == 'u') {
                int cp = hex4(a, p);
                if (cp < 0) {
                    return -1;
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
                w = putUtf8(o, w, cp);
            } else {
                o[w++] = (byte) c;
            }
        } else if (b < 0) {
            int n = utf8Length(a, p);
            if (n < 0) {
                return -1;
            }
            System.arraycopy(a, p, o, w, n);
            p += n;
            w += n;
        } else {
            return -1; // a raw control character (or the end of input)
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
    private static int escape(byte[] a, int at) {
        return switch (a[at]) {
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

    private static int putUtf8(byte[] o, int w, int cp) {
        if (cp < 0x80) {
            o[w] = (byte) cp;
            return w + 1;
        }
        if (cp < 0x800) {
            o[w] = (byte) (0xC0 | cp >> 6);
            o[w + 1] = (byte) (0x80 | cp & 0x3F);
            return w + 2;
        }
        if (cp < 0x10000) {
            o[w] = (byte) (0xE0 | cp >> 12);
            o[w + 1] = (byte) (0x80 | cp >> 6 & 0x3F);
            o[w + 2] = (byte) (0x80 | cp & 0x3F);
            return w + 3;
        }
        o[w] = (byte) (0xF0 | cp >> 18);
        o[w + 1] = (byte) (0x80 | cp >> 12 & 0x3F);
        o[w + 2] = (byte) (0x80 | cp >> 6 & 0x3F);
        o[w + 3] = (byte) (0x80 | cp & 0x3F);
        return w + 4;
    }

    /**
     * Length of the well-formed UTF-8 sequence starting at {@code a[p]} (a byte >= 0x80), or -1: no
     * overlong forms, no surrogates, nothing past U+10FFFF (the general reader decides those).
     */
    private static int utf8Length(byte[] a, int p) {
        int b0 = a[p] & 0xFF;
        int b1 = a[p + 1] & 0xFF;
        if (b0 >= 0xC2 && b0 <= 0xDF) {
            return cont(b1) ? 2 : -1;
        }
        int b2 = a[p + 2] & 0xFF;
        if (b0 >= 0xE0 && b0 <= 0xEF) {
            int lo = b0 == 0xE0 ? 0xA0 : 0x80;
            int hi = b0 == 0xED ? 0x9F : 0xBF;
            return b1 >= lo && b1 <= hi && cont(b2) ? 3 : -1;
        }
        if (b0 >= 0xF0 && b0 <= 0xF4) {
            int lo = b0 == 0xF0 ? 0x90 : 0x80;
            int hi = b0 == 0xF4 ? 0x8F : 0xBF;
            return b1 >= lo && b1 <= hi && cont(b2) && cont(a[p + 3] & 0xFF) ? 4 : -1;
        }
        return -1;
    }

    private static boolean cont(int b) {
        return (b & 0xC0) == 0x80;
    }

    /** Copies a JSON number's text at the cursor to {@code o[w...]}; returns the end in {@code o}, or -1. */
    private int copyNumber(byte[] a, byte[] o, int w) {
        int start = this.p;
        int q = numberEnd(a, start);
        if (q < 0) {
            return -1;
        }
        int n = q - start;
        System.arraycopy(a, start, o, w, n);
        this.p = q;
        return w + n;
    }

    /** The end of the JSON number starting at {@code a[p]}, or -1. */
    private static int numberEnd(byte[] a, int p) {
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
            return -1;
        }
        if (a[p] == '.') {
            p++;
            if (!isDigit(a[p])) {
                return -1;
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
                return -1;
            }
            while (isDigit(a[p])) {
                p++;
            }
        }
        return p - start > MAX_NUMBER_LENGTH ? -1 : p;
    }

    /** An integer that fits an int at the cursor (no fraction, no exponent), or BAIL. */
    private long intValue(byte[] a) {
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
                    return BAIL;
                }
            }
            digits = p - start;
        }
        if ((digits > 1 && a[start] == '0') || a[p] == '.' || (a[p] | 0x20) == 'e') {
            return BAIL;
        }
        v = negative ? -v : v;
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            return BAIL;
        }
        this.p = p;
        return v;
    }

    /** The language string at the cursor: a LanguageCode name, or OTHER for another plain name. */
    private boolean language(byte[] a) {
        int p = this.p;
        if (((long) LONG.get(a, p) & 0xFFFFFFFFFFFFL) == W_JAVA) { // what Java clients and brokers send
            language = JAVA_CODE;
            languageGiven = true;
            this.p = p + 6;
            return true;
        }
        if (a[p] != '"') {
            return false;
        }
        int start = p + 1;
        int q = start;
        while (a[q] >= 0x20 && a[q] != '"' && a[q] != '\\') {
            q++;
        }
        if (a[q] != '"') {
            return false; // escapes or non-ASCII: the general reader compares decoded names
        }
        int n = q - start;
        byte found = LanguageCode.OTHER.getCode();
        for (int i = 0; i < LANGUAGE_NAMES.length; i++) {
            byte[] name = LANGUAGE_NAMES[i];
            if (name.length == n && same(a, start, name)) {
                found = LANGUAGE_CODES[i];
                break;
            }
        }
        language = found;
        languageGiven = true;
        this.p = q + 1;
        return true;
    }

    /** Steps over a string, number or literal at the cursor (a string is copied to the free space at {@code o[w...]}). */
    private boolean skipScalar(byte[] a, byte[] o, int w) {
        byte b = a[this.p];
        if (b == '"') {
            this.p++;
            return copyString(a, o, w) >= 0;
        }
        if (b == 't') {
            return literal(a, TRUE);
        }
        if (b == 'f') {
            return literal(a, FALSE);
        }
        if (b == 'n') {
            return literal(a, NULL);
        }
        int q = numberEnd(a, this.p);
        if (q < 0) {
            return false;
        }
        this.p = q;
        return true;
    }

    /** Steps over {@code word} at the cursor; false when it is not there. */
    private boolean literal(byte[] a, byte[] word) {
        int p = this.p;
        if (!same(a, p, word)) {
            return false;
        }
        this.p = p + word.length;
        return true;
    }

    private static int put(byte[] o, int w, byte[] word) {
        System.arraycopy(word, 0, o, w, word.length);
        return w + word.length;
    }

    private static int ws(byte[] a, int p) {
        while (WHITESPACE[a[p] & 0xFF]) {
            p++;
        }
        return p;
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    /** Whether {@code word} is at {@code a[at]} (short words: a plain loop beats Arrays.equals' range checks). */
    private static boolean same(byte[] a, int at, byte[] word) {
        for (int i = 0; i < word.length; i++) {
            if (a[at + i] != word[i]) {
                return false;
            }
        }
        return true;
    }

    private static void putInt(byte[] o, int at, int v) {
        INT.set(o, at, v);
    }

    /** Writes the binary header's fixed fields (code, language, version, opaque, flag: 13 bytes) at {@code a[at]}. */
    public static void putFixedFields(byte[] a, int at, int code, byte language, int version, int opaque, int flag) {
        a[at] = (byte) (code >> 8);
        a[at + 1] = (byte) code;
        a[at + 2] = language;
        a[at + 3] = (byte) (version >> 8);
        a[at + 4] = (byte) version;
        INT.set(a, at + 5, opaque);
        INT.set(a, at + 9, flag);
    }

    /** Up to eight bytes of {@code s} from {@code from}, little-endian, zero-filled past its end. */
    private static long word(String s, int from) {
        long w = 0;
        for (int i = Math.min(s.length(), from + 8) - 1; i >= from; i--) {
            w = w << 8 | (s.charAt(i) & 0xFF);
        }
        return w;
    }

    private static byte[] ascii(String s) {
        byte[] b = new byte[s.length()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) s.charAt(i);
        }
        return b;
    }
}
