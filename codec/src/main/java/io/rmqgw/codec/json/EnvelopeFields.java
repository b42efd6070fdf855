package io.rmqgw.codec.json;

import org.apache.rocketmq.remoting.protocol.LanguageCode;

/**
 * The schema of a remoting header's envelope, as the single pass ({@link JsonToBinary}) reads it from
 * JSON and writes it in the ROCKETMQ binary encoding: which top-level JSON fields there are, what their
 * values are, and where each lands in the binary header
 * ({@code short code | byte language | short version | int opaque | int flag | int remarkLength + remark |
 * int extFieldsLength + entries}, big-endian).
 *
 * <table>
 *   <caption>Top-level fields</caption>
 *   <tr><th>JSON name</th><th>value</th><th>binary</th></tr>
 *   <tr><td>code</td><td>int</td><td>short at {@link #CODE_AT}</td></tr>
 *   <tr><td>language</td><td>a LanguageCode name</td><td>byte at {@link #LANGUAGE_AT} (absent: JAVA)</td></tr>
 *   <tr><td>version</td><td>int</td><td>short at {@link #VERSION_AT}</td></tr>
 *   <tr><td>opaque</td><td>int</td><td>int at {@link #OPAQUE_AT}</td></tr>
 *   <tr><td>flag</td><td>int</td><td>int at {@link #FLAG_AT}</td></tr>
 *   <tr><td>remark</td><td>string or null</td><td>length at {@link #REMARK_LENGTH_AT}, UTF-8 after it</td></tr>
 *   <tr><td>extFields</td><td>object of scalars, or null</td><td>length, then the entries, after the remark</td></tr>
 *   <tr><td>serializeTypeCurrentRPC</td><td>"JSON"</td><td>not written (the frame prefix says it)</td></tr>
 * </table>
 * Any other top-level field is stepped over when its value is a scalar.
 *
 * <p>Names are matched as fastjson 1 and fastjson2 write them first (quotes and colon, no whitespace,
 * packed eight bytes to a word: one or two long compares, {@link #known}), then in general
 * ({@link #named}). Static only.
 */
final class EnvelopeFields {

    /** The binary fixed fields: code(2) language(1) version(2) opaque(4) flag(4). */
    static final int FIXED_LENGTH = 13;
    /** The fixed fields, the remark length and the extFields length. */
    static final int MIN_LENGTH = 21;
    static final int CODE_AT = 0;
    static final int LANGUAGE_AT = 2;
    static final int VERSION_AT = 3;
    static final int OPAQUE_AT = 5;
    static final int FLAG_AT = 9;
    static final int REMARK_LENGTH_AT = 13;
    static final int REMARK_AT = 17;

    // top-level fields, by what the scan does with their values
    static final int OTHER = 0;
    static final int CODE = 1;
    static final int EXT_FIELDS = 2;
    static final int FLAG = 3;
    static final int LANGUAGE = 4;
    static final int OPAQUE = 5;
    static final int REMARK = 6;
    static final int VERSION = 7;
    /** {@code "serializeTypeCurrentRPC":"JSON"} matched whole, value included: nothing left to read. */
    static final int DONE = 8;

    static final byte JAVA_CODE = LanguageCode.JAVA.getCode();
    static final byte OTHER_CODE = LanguageCode.OTHER.getCode();

    private static final byte[] N_CODE = ascii("code");
    private static final byte[] N_EXT_FIELDS = ascii("extFields");
    private static final byte[] N_FLAG = ascii("flag");
    private static final byte[] N_LANGUAGE = ascii("language");
    private static final byte[] N_OPAQUE = ascii("opaque");
    private static final byte[] N_REMARK = ascii("remark");
    private static final byte[] N_VERSION = ascii("version");

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

    private static final byte[][] LANGUAGE_NAMES;
    private static final byte[] LANGUAGE_CODES;
    /** Per byte: whether it is a letter (every top-level name RemotingCommand has is letters only). */
    private static final boolean[] NAME_BYTE = new boolean[256];

    static {
        LanguageCode[] languages = LanguageCode.values();
        LANGUAGE_NAMES = new byte[languages.length][];
        LANGUAGE_CODES = new byte[languages.length];
        for (int i = 0; i < languages.length; i++) {
            LANGUAGE_NAMES[i] = ascii(languages[i].name());
            LANGUAGE_CODES[i] = languages[i].getCode();
        }
        for (int c = 'a'; c <= 'z'; c++) {
            NAME_BYTE[c] = true;
            NAME_BYTE[c - 'a' + 'A'] = true;
        }
    }

    private EnvelopeFields() {
    }

    /**
     * The top-level field whose name is at {@code p} (its opening quote) exactly as fastjson writes it,
     * colon included, matched as whole words; moves the cursor past the colon (past the value for
     * {@link #DONE}). -1 when the name is written otherwise or is not one of them. Every word read after
     * the first follows a fully matched one, so it lies within the input and its zero padding.
     */
    static int known(JsonScanner s, int p) {
        long x = s.word(p);
        int field = -1;
        int next = p;
        switch ((int) (x >>> 8) & 0xFF) { // the name's first letter
            case 'c' -> {
                if ((x & 0x00FFFFFFFFFFFFFFL) == W_CODE) {
                    field = CODE;
                    next = p + 7;
                }
            }
            case 'e' -> {
                if (x == W_EXT_FIELDS && (s.word(p + 8) & 0xFFFFFFFFL) == W_EXT_FIELDS_2) {
                    field = EXT_FIELDS;
                    next = p + 12;
                }
            }
            case 'f' -> {
                if ((x & 0x00FFFFFFFFFFFFFFL) == W_FLAG) {
                    field = FLAG;
                    next = p + 7;
                }
            }
            case 'l' -> {
                if (x == W_LANGUAGE && (s.word(p + 8) & 0xFFFFFFL) == W_LANGUAGE_2) {
                    field = LANGUAGE;
                    next = p + 11;
                }
            }
            case 'o' -> {
                if (x == W_OPAQUE && s.a[p + 8] == ':') {
                    field = OPAQUE;
                    next = p + 9;
                }
            }
            case 'r' -> {
                if (x == W_REMARK && s.a[p + 8] == ':') {
                    field = REMARK;
                    next = p + 9;
                }
            }
            case 's' -> {
                if (x == W_SERIALIZE_TYPE && s.word(p + 8) == W_SERIALIZE_TYPE_2
                    && s.word(p + 16) == W_SERIALIZE_TYPE_3 && s.word(p + 24) == W_SERIALIZE_TYPE_4) {
                    field = DONE;
                    next = p + 32;
                }
            }
            case 'v' -> {
                if (x == W_VERSION && (s.word(p + 8) & 0xFFFFL) == W_VERSION_2) {
                    field = VERSION;
                    next = p + 10;
                }
            }
            default -> {
            }
        }
        s.p = next;
        return field;
    }

    /**
     * The general way to a top-level name at {@code p} (its opening quote): any name, whitespace before
     * the colon. Moves the cursor past the colon and returns the field ({@link #OTHER} for names the
     * scan does not read), or -1 (an escaped name, malformed input). A name that is not letters only is
     * stepped over as a string, written to the free space at {@code o[w...]}.
     */
    static int named(JsonScanner s, int p, byte[] o, int w) {
        byte[] a = s.a;
        int name = p + 1;
        int q = name;
        while (NAME_BYTE[a[q] & 0xFF]) {
            q++;
        }
        int nameLength = q - name;
        if (a[q] != '"') {
            s.p = name;
            if (s.string(o, w) < 0) {
                return -1;
            }
            q = s.p - 1;
            for (int i = name; i < q; i++) {
                if (a[i] == '\\') {
                    // an escaped name may spell a known one: the general reader decodes it
                    return s.fail(JsonScanner.Stop.ESCAPED_NAME, p);
                }
            }
            nameLength = -1;
        }
        p = JsonScanner.ws(a, q + 1);
        if (a[p] != ':') {
            return s.fail(JsonScanner.Stop.EXPECTED_COLON, p);
        }
        s.p = p + 1;
        if (nameLength == 4 && JsonScanner.same(a, name, N_CODE)) {
            return CODE;
        } else if (nameLength == 9 && JsonScanner.same(a, name, N_EXT_FIELDS)) {
            return EXT_FIELDS;
        } else if (nameLength == 4 && JsonScanner.same(a, name, N_FLAG)) {
            return FLAG;
        } else if (nameLength == 8 && JsonScanner.same(a, name, N_LANGUAGE)) {
            return LANGUAGE;
        } else if (nameLength == 6 && JsonScanner.same(a, name, N_OPAQUE)) {
            return OPAQUE;
        } else if (nameLength == 6 && JsonScanner.same(a, name, N_REMARK)) {
            return REMARK;
        } else if (nameLength == 7 && JsonScanner.same(a, name, N_VERSION)) {
            return VERSION;
        }
        return OTHER;
    }

    /**
     * The language string at the cursor as its wire code: a LanguageCode name's, or OTHER's for another
     * plain name; moves the cursor past it. -1 when it is not a plain string (escapes or non-ASCII: the
     * general reader compares decoded names).
     */
    static int language(JsonScanner s) {
        byte[] a = s.a;
        int p = s.p;
        if ((s.word(p) & 0xFFFFFFFFFFFFL) == W_JAVA) { // what Java clients and brokers send
            s.p = p + 6;
            return JAVA_CODE;
        }
        if (a[p] != '"') {
            return s.fail(JsonScanner.Stop.LANGUAGE_NOT_PLAIN, p);
        }
        int start = p + 1;
        int q = start;
        while (a[q] >= 0x20 && a[q] != '"' && a[q] != '\\') {
            q++;
        }
        if (a[q] != '"') {
            return s.fail(JsonScanner.Stop.LANGUAGE_NOT_PLAIN, p);
        }
        int n = q - start;
        byte found = OTHER_CODE;
        for (int i = 0; i < LANGUAGE_NAMES.length; i++) {
            byte[] name = LANGUAGE_NAMES[i];
            if (name.length == n && JsonScanner.same(a, start, name)) {
                found = LANGUAGE_CODES[i];
                break;
            }
        }
        s.p = q + 1;
        return found & 0xFF;
    }

    /** Up to eight bytes of {@code s} from {@code from}, little-endian, zero-filled past its end. */
    static long word(String s, int from) {
        long w = 0;
        for (int i = Math.min(s.length(), from + 8) - 1; i >= from; i--) {
            w = w << 8 | (s.charAt(i) & 0xFF);
        }
        return w;
    }

    static byte[] ascii(String s) {
        byte[] b = new byte[s.length()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) s.charAt(i);
        }
        return b;
    }
}
