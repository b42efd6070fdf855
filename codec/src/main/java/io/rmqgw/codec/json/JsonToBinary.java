package io.rmqgw.codec.json;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * Single-pass transcoder of a remoting JSON header into the ROCKETMQ binary header: one scan of the
 * header bytes reads the envelope (code, language, version, opaque, flag, remark) and writes every
 * extFields entry in the binary entry layout ({@code short keyLength, key, int valueLength, value}) as
 * it goes. Value bytes are copied, not decoded into Strings; escapes are decoded to UTF-8 exactly as
 * jackson and {@code String.getBytes(UTF_8)} together would (an unpaired surrogate becomes '?'). The
 * parts: {@link JsonScanner} (the lexing), {@link EnvelopeFields} (the top-level fields and their binary
 * places), {@link BinaryHeaderWriter} (the binary header and the notes taken while writing it); this
 * class runs the top-level object and keeps the envelope it read.
 *
 * <p>It accepts a strict subset of JSON: what fastjson 1 and fastjson2 write for a RemotingCommand
 * (any field order, any escapes, raw UTF-8, whitespace) plus scalar values where strings are expected.
 * Anything else (nested values where scalars belong, escaped field names, a byte order mark, invalid
 * UTF-8, malformed input) makes {@link #transcode} return false, and the caller reads the header with
 * the general (jackson) reader, which either reads it the same way or refuses it with a reason. The
 * subset is chosen so that whatever is accepted here reads exactly as the general reader reads it.
 *
 * <p>The binary header ({@link #bytes()}[{@link #HEAD_ROOM}, {@link #HEAD_ROOM} + {@link #length()})) is
 * complete: code and version are written as 16-bit fields (check {@link #code()} and {@link #version()}
 * before sending it: codes such as POP_MESSAGE do not fit), an absent language as JAVA (RemotingCommand's
 * default). Empty strings are written as zero-length values, which a binary reader takes for null, as
 * rocketmq-remoting does.
 *
 * <p>One per thread ({@link #get()}); not reentrant. The result stays valid until the next call on the
 * thread; each result has its own {@link #stamp()}, which a frame keeps with this transcoder when its
 * header is transcoded, so a later step on the frame finds the result without transcoding again (see
 * {@code HeaderCodec.transcoded}). The input buffer is only read (its bytes are copied once into a
 * thread-local array), never retained or released. The result's array can be given away whole
 * ({@link #handOver}), so that a typed header keeps it as its own without a copy.
 */
public final class JsonToBinary extends ThreadScratch {

    /** code(2) language(1) version(2) opaque(4) flag(4). */
    public static final int FIXED_LENGTH = EnvelopeFields.FIXED_LENGTH;
    /** The fixed fields, the remark length and the extFields length. */
    public static final int MIN_LENGTH = EnvelopeFields.MIN_LENGTH;
    /**
     * Bytes of {@link #bytes()} in front of the binary header, free for the caller: room for the frame
     * prefix (total length, serialize type and header length), so a binary frame head goes out in one copy.
     */
    public static final int HEAD_ROOM = BinaryHeaderWriter.HEAD_ROOM;
    /** {@link #locatedValue()}'s answer when the value is not certainly located. */
    public static final long NOT_LOCATED = BinaryHeaderWriter.NOT_LOCATED;

    // per-thread scratch, not a memo: the scanner's and writer's arrays are reused by every header this
    // event loop transcodes, so the hot path allocates nothing
    private static final FastThreadLocal<JsonToBinary> LOCAL = new FastThreadLocal<>() {
        @Override
        protected JsonToBinary initialValue() {
            return new JsonToBinary();
        }
    };

    private final JsonScanner scanner = new JsonScanner();
    private final BinaryHeaderWriter writer = new BinaryHeaderWriter();
    /** What another package keeps per thread with this transcoder (see {@link #attachment()}). */
    private Object attachment;

    private int code;
    private byte language;
    private boolean languageGiven;
    private int version;
    private int opaque;
    private int flag;
    private boolean extFieldsGiven;
    private boolean remarkGiven;
    private int remarkLength;

    private JsonToBinary() {
    }

    /** This thread's transcoder. */
    public static JsonToBinary get() {
        return LOCAL.get();
    }

    /**
     * Transcodes the JSON header in {@code buf[index, index + length)}; true when done, false when the
     * header needs the general reader (see the class doc). The buffer is only read. Starts a new result
     * (a new {@link #stamp()}) either way.
     */
    public boolean transcode(ByteBuf buf, int index, int length) {
        renew();
        scanner.load(buf, index, length);
        byte[] o = writer.begin(length);
        return scan(length, o, writer.remarkArray(length));
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

    /** The array holding the binary header from {@link #HEAD_ROOM} on; valid until the next call on this thread. */
    public byte[] bytes() {
        return writer.bytes();
    }

    /**
     * Gives the result's array away: the caller may keep it and write to it (the binary header stays at
     * {@link #HEAD_ROOM}, entries at {@link #entriesStart}). {@code replacement} (may be null), with
     * {@code view} (whatever the caller keeps with it, handed back with it by a later call through
     * {@link #handedView()}), becomes the output array of the next transcodes, so arrays circulate
     * between this transcoder and their takers instead of being copied or allocated. The result is
     * forgotten (a new {@link #stamp()}): a frame it was transcoded for is transcoded again when asked.
     * Read the result's fields ({@link #oneByteKeyOffset}, {@link #code()}, ...) before: they stay until
     * the next transcode, the array's contents are the taker's.
     */
    public byte[] handOver(byte[] replacement, Object view) {
        renew();
        return writer.handOver(replacement, view);
    }

    /** The view that went with the array the last {@link #handOver} gave (null: none; make one). */
    public Object handedView() {
        return writer.handedView();
    }

    /** Length of the binary header in {@link #bytes()}. */
    public int length() {
        return writer.length();
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
        return BinaryHeaderWriter.ENTRIES_AT + remarkLength;
    }

    public int entryCount() {
        return writer.entryCount();
    }

    /**
     * Whether an entry has the one-byte key {@code b} (0-127; a one-byte UTF-8 key is ASCII); its last
     * such entry then starts {@link #oneByteKeyOffset} bytes after the first entry.
     */
    public boolean hasOneByteKey(int b) {
        return writer.hasOneByteKey(b);
    }

    /** See {@link #hasOneByteKey}: where the last entry with key {@code b} starts, from the first entry. */
    public int oneByteKeyOffset(int b) {
        return writer.oneByteKeyOffset(b);
    }

    /** The number of entries whose key is not one byte long. */
    public int longKeyCount() {
        return writer.longKeyCount();
    }

    /**
     * Where the value of the last header's {@code msgId} entry lies in its JSON bytes, as
     * {@code index << 32 | length} (index 0 is the header's first byte), or {@link #NOT_LOCATED}: the entry is not
     * there, is there more than once, or its value is not a string written as it stands ({@code "msgId":"..."}
     * with no escape in it). A send answer's ids are rewritten there, in the frame ({@code SendAnswerInPlace}),
     * so the scan that read the header also finds them.
     */
    public long locatedValue() {
        return writer.locatedValue();
    }

    /**
     * The last header's JSON bytes as read, from index 0; valid until the next transcode on this thread. A caller
     * may write to them (a same-length rewrite of the {@link #locatedValue()}), and must then {@link #forget()}
     * the result, which no longer matches them.
     */
    public byte[] input() {
        return scanner.a;
    }

    /** Drops the result (a new {@link #stamp()}): a later ask for its frame's header transcodes it again. */
    public void forget() {
        renew();
    }

    /** Writes the binary header's fixed fields (code, language, version, opaque, flag: 13 bytes) at {@code a[at]}. */
    public static void putFixedFields(byte[] a, int at, int code, byte language, int version, int opaque, int flag) {
        BinaryHeaderWriter.putFixedFields(a, at, code, language, version, opaque, flag);
    }

    /** The scanner: its {@code stop()} and {@code stopAt()} say why the last transcode returned false, and where (tests, diagnostics). */
    JsonScanner scanner() {
        return scanner;
    }

    // ---- the top-level object ----

    private boolean scan(int end, byte[] o, byte[] r) {
        JsonScanner s = scanner;
        byte[] a = s.a;
        code = 0;
        language = EnvelopeFields.JAVA_CODE;
        languageGiven = false;
        version = 0;
        opaque = 0;
        flag = 0;
        extFieldsGiven = false;
        remarkGiven = false;
        remarkLength = 0;
        boolean sawCode = false;
        int w = BinaryHeaderWriter.ENTRIES_AT; // entries are written from here; a remark is moved in front of them at the end
        int p = JsonScanner.ws(a, 0);
        if (a[p] != '{') {
            return s.refuse(JsonScanner.Stop.EXPECTED_OBJECT, p);
        }
        p = JsonScanner.ws(a, p + 1);
        if (a[p] == '}') {
            p++;
        } else {
            while (true) {
                if (a[p] != '"') {
                    return s.refuse(JsonScanner.Stop.EXPECTED_NAME, p);
                }
                int field = EnvelopeFields.known(s, p);
                if (field < 0 && (field = EnvelopeFields.named(s, p, o, w)) < 0) {
                    return false;
                }
                s.p = JsonScanner.ws(a, s.p);
                switch (field) {
                    case EnvelopeFields.CODE -> {
                        long v = s.intValue();
                        if (v == JsonScanner.BAIL) {
                            return false;
                        }
                        code = (int) v;
                        sawCode = true;
                    }
                    case EnvelopeFields.EXT_FIELDS -> {
                        if (a[s.p] == '{') {
                            extFieldsGiven = true;
                            s.p++;
                            w = writer.entries(s, o, w);
                            if (w < 0) {
                                return false;
                            }
                        } else if (!s.literal(JsonScanner.NULL)) {
                            return false;
                        }
                    }
                    case EnvelopeFields.FLAG -> {
                        long v = s.intValue();
                        if (v == JsonScanner.BAIL) {
                            return false;
                        }
                        flag = (int) v;
                    }
                    case EnvelopeFields.LANGUAGE -> {
                        int c = EnvelopeFields.language(s);
                        if (c < 0) {
                            return false;
                        }
                        language = (byte) c;
                        languageGiven = true;
                    }
                    case EnvelopeFields.OPAQUE -> {
                        long v = s.intValue();
                        if (v == JsonScanner.BAIL) {
                            return false;
                        }
                        opaque = (int) v;
                    }
                    case EnvelopeFields.REMARK -> {
                        if (a[s.p] == '"') {
                            s.p++;
                            int n = s.string(r, 0);
                            if (n < 0) {
                                return false;
                            }
                            remarkLength = n;
                            remarkGiven = true;
                        } else if (s.literal(JsonScanner.NULL)) {
                            remarkLength = 0;
                            remarkGiven = false;
                        } else {
                            return false;
                        }
                    }
                    case EnvelopeFields.VERSION -> {
                        long v = s.intValue();
                        if (v == JsonScanner.BAIL) {
                            return false;
                        }
                        version = (int) v;
                    }
                    case EnvelopeFields.DONE -> {
                    }
                    default -> {
                        if (!s.skipScalar(o, w)) {
                            // serializeTypeCurrentRPC and unknown fields; nested values go to the general reader
                            return false;
                        }
                    }
                }
                p = JsonScanner.ws(a, s.p);
                if (a[p] == ',') {
                    p = JsonScanner.ws(a, p + 1);
                } else if (a[p] == '}') {
                    p++;
                    break;
                } else {
                    return s.refuse(JsonScanner.Stop.EXPECTED_COMMA_OR_END, p);
                }
            }
        }
        // trailing content, or no code: the general reader says which
        if (JsonScanner.ws(a, p) != end) {
            return s.refuse(JsonScanner.Stop.TRAILING_CONTENT, JsonScanner.ws(a, p));
        }
        if (!sawCode) {
            return s.refuse(JsonScanner.Stop.NO_CODE, 0);
        }
        writer.finish(o, w, r, remarkLength, code, language, version, opaque, flag);
        return true;
    }
}
