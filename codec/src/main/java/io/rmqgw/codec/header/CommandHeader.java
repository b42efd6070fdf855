package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCounted;
import io.netty.util.internal.ObjectPool;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.json.BinaryToJson;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * A decoded remoting header: the envelope (code, language, version, opaque, flag, remark) and every
 * extFields entry exactly as it arrived, in order, unknown keys included (ACL signatures,
 * {@code bname}, {@code lo}, {@code ns}, ...). Subclasses add typed, allocation-free access to the
 * fields the gateway needs; {@link #encode(SerializeType, ByteBuf)} writes the header in either
 * encoding, so a header read as JSON can go out as ROCKETMQ binary and back without losing an entry.
 *
 * <h2>Storage</h2>
 * The entries are kept as raw bytes in the ROCKETMQ binary layout ({@code short keyLength, key,
 * int valueLength, value}) in one buffer, the <em>image</em>: for a binary header a retained slice of
 * the frame itself (nothing copied), for a JSON header a pooled buffer the streaming parser wrote
 * them into. Re-encoding to binary is then one bulk copy. Strings are made only when asked for.
 *
 * <p>Reference counted: a decoded header holds one reference to its image (and, for a binary header,
 * so to the frame's memory) until its own count drops to zero. A header transcoded from JSON keeps its
 * image in an array of its own instead (no buffer to allocate or release; it goes back to the pool
 * with the header, unless it grew large). The count is a plain field, not an
 * atomic one: a header has one owner at a time (an event loop), like the frame it came from. When the
 * count reaches zero the header object goes back to its kind's pool (a Netty recycler, like pooled
 * buffers), so the hot path allocates none: a released header must not be touched again.
 *
 * <h2>Null and empty values</h2>
 * As in rocketmq-remoting: in the binary encoding a zero length means null, so an empty JSON string
 * goes out as a zero-length binary value, and a zero-length binary value (or key) is omitted from
 * JSON output, exactly as {@code RemotingCommand} does after decoding it to null. A JSON
 * {@code null} value is dropped on decode (RemotingCommand drops it on encode). A header decoded from
 * JSON writes its empty strings back to JSON as {@code ""}.
 */
public abstract class CommandHeader implements ReferenceCounted {

    /** Returned by int accessors when the field is absent or not a valid number. */
    public static final int ABSENT_INT = Integer.MIN_VALUE;
    /** Returned by long accessors when the field is absent or not a valid number. */
    public static final long ABSENT_LONG = Long.MIN_VALUE;

    /** code(2) language(1) version(2) opaque(4) flag(4) remarkLength(4) extFieldsLength(4). */
    static final int BINARY_FIXED_LENGTH = 21;

    /**
     * The start of a response frame in binary, up to its extFields: the prefix (the frame's length for a header of
     * {@code headerLength} and a body of {@code bodyLength} bytes), then code, language JAVA, version 0, opaque,
     * the response flag and the remark ({@code remark} UTF-8, null or empty for none), as the general encoder
     * writes them.
     */
    static void writeBinaryResponseStart(ByteBuf out, int headerLength, int bodyLength, int code, int opaque,
                                         byte[] remark) {
        if (headerLength > 0xFFFFFF) {
            throw new IllegalStateException("header of " + headerLength + " bytes does not fit the 24-bit header length");
        }
        out.writeInt(4 + headerLength + bodyLength);
        out.writeInt((SerializeType.ROCKETMQ.getCode() << 24) | headerLength);
        out.writeShort(code);
        out.writeByte(LanguageCode.JAVA.getCode());
        out.writeShort(0); // version
        out.writeInt(opaque);
        out.writeInt(RemotingHeader.RESPONSE_FLAG);
        int remarkLength = remark == null ? 0 : remark.length;
        out.writeInt(remarkLength);
        if (remarkLength > 0) {
            out.writeBytes(remark);
        }
    }
    /** code(2) language(1) version(2) opaque(4) flag(4): what precedes the remark length. */
    static final int FIXED_FIELDS_LENGTH = 13;

    private static final int RESPONSE_BIT = 1;
    private static final int ONEWAY_BIT = 1 << 1;

    private static final byte[][] LANGUAGE_NAMES = new byte[256][];
    private static final LanguageCode[] LANGUAGES = LanguageCode.values();

    static {
        for (LanguageCode language : LANGUAGES) {
            LANGUAGE_NAMES[language.getCode() & 0xFF] = Ascii.bytes(language.name());
        }
    }

    final HeaderKind kind;
    final int[] slots;
    private final ObjectPool.Handle<CommandHeader> handle;
    /** The decoding thread's spares this header goes back to when released there, or null (recycler only). */
    SpareHeaders home;

    SerializeType source;
    int code;
    /** The language byte as on the wire; names map to codes, unknown names to OTHER. */
    byte language;
    int version;
    int opaque;
    int flag;

    /** The remark as a String (JSON source, or set); null when absent or still raw in the image. */
    String remark;
    /** Raw remark bytes in the image (binary source), or -1. */
    int remarkIndex = -1;
    int remarkLength;

    /** Whether the header has an extFields object/section at all (written back as such). */
    boolean extPresent;
    /**
     * Whether the image is the binary header from its remark length on, unchanged (as read from a
     * binary frame, or as transcoded from JSON): then the binary encoding is the fixed fields and the
     * image, one bulk copy.
     */
    boolean imageIsTail;
    ByteBuf image;
    int entriesStart;
    int entriesEnd;
    int entryCount;
    private int[] offsets;
    private int refs = 1;
    /** This header's own image storage (reused with the header from the pool), and its buffer view. */
    private byte[] ownArray;
    private ByteBuf ownImage;
    /**
     * The own array while it is the image, else null: typed reads then index it directly (image index
     * i is {@code imageArray[OWN_HEAD_ROOM + i]}) instead of going through the buffer's checked accessors.
     */
    byte[] imageArray;

    /**
     * Bytes of the own array in front of the image: room for the frame prefix and the fixed fields (as
     * the single pass leaves them), so that a header transcoded from JSON goes out as a binary frame head
     * in one bulk copy.
     */
    static final int OWN_HEAD_ROOM = io.rmqgw.codec.json.JsonToBinary.HEAD_ROOM + FIXED_FIELDS_LENGTH;

    CommandHeader(HeaderKind kind, ObjectPool.Handle<CommandHeader> handle) {
        this.kind = kind;
        this.handle = handle;
        this.slots = kind.keys.size() == 0 ? NO_SLOTS : new int[kind.keys.size()];
    }

    /**
     * Takes the array holding {@code t}'s result as this header's own image storage (no copy) and makes
     * its {@code length} bytes from {@link #OWN_HEAD_ROOM} on the image; the array this header held
     * before, and its buffer view, go to {@code t} in its place.
     */
    final void takeImage(io.rmqgw.codec.json.JsonToBinary t, int length) {
        byte[] a = t.handOver(ownArray, ownImage);
        ByteBuf view = t.handedView() instanceof ByteBuf b && b.array() == a ? b : null;
        if (view == null) { // an array seen for the first time: its view is made once and then travels with it
            view = Unpooled.wrappedBuffer(a, OWN_HEAD_ROOM, a.length - OWN_HEAD_ROOM);
        }
        ownArray = a;
        ownImage = view;
        image = view.setIndex(0, length);
        imageArray = a;
    }

    /** The big-endian short at image index {@code i}. */
    private int shortAt(int i) {
        byte[] a = imageArray;
        if (a != null) {
            int j = OWN_HEAD_ROOM + i;
            return (short) ((a[j] & 0xFF) << 8 | a[j + 1] & 0xFF);
        }
        return image.getShort(i);
    }

    /** The big-endian int at image index {@code i}. */
    private int intAt(int i) {
        byte[] a = imageArray;
        if (a != null) {
            int j = OWN_HEAD_ROOM + i;
            return (a[j] & 0xFF) << 24 | (a[j + 1] & 0xFF) << 16 | (a[j + 2] & 0xFF) << 8 | a[j + 3] & 0xFF;
        }
        return image.getInt(i);
    }

    /** Releases the image unless it is the header's own array. */
    private void releaseImage(ByteBuf img) {
        if (img != ownImage) {
            img.release();
        }
    }

    /** Readies a header taken from the pool: one reference, nothing decoded yet. */
    final CommandHeader reuse() {
        refs = 1;
        return this;
    }

    private static final int[] NO_SLOTS = new int[0];
    private static final int OWN_ARRAY_KEEP_LIMIT = 8 * 1024;

    // ---- envelope ----

    public HeaderKind kind() {
        return kind;
    }

    /** The encoding this header was decoded from; decides how zero-length values read (see class doc). */
    public SerializeType sourceEncoding() {
        return source;
    }

    public int code() {
        return code;
    }

    /** The language byte as on the wire. */
    public byte languageCode() {
        return language;
    }

    /** The language, or null for a byte no {@link LanguageCode} has. */
    public LanguageCode language() {
        for (LanguageCode l : LANGUAGES) {
            if (l.getCode() == language) {
                return l;
            }
        }
        return null;
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

    public boolean isResponse() {
        return (flag & RESPONSE_BIT) != 0;
    }

    public boolean isOneway() {
        return (flag & ONEWAY_BIT) != 0;
    }

    /** The remark; null when absent (a zero-length binary remark is absent, as in rocketmq-remoting). */
    public String remark() {
        if (remark == null && remarkIndex >= 0) {
            remark = image.toString(remarkIndex, remarkLength, StandardCharsets.UTF_8);
            remarkIndex = -1;
        }
        return remark;
    }

    public CommandHeader setCode(int code) {
        this.code = code;
        return this;
    }

    public CommandHeader setOpaque(int opaque) {
        this.opaque = opaque;
        return this;
    }

    public CommandHeader setFlag(int flag) {
        this.flag = flag;
        return this;
    }

    public CommandHeader setVersion(int version) {
        this.version = version;
        return this;
    }

    public CommandHeader setLanguage(LanguageCode language) {
        this.language = language.getCode();
        return this;
    }

    public CommandHeader setRemark(String remark) {
        this.remark = remark;
        this.remarkIndex = -1;
        this.imageIsTail = false;
        return this;
    }

    // ---- entries ----

    /** Whether the header carries an extFields section (possibly empty). */
    public boolean hasExtFields() {
        return extPresent;
    }

    /** The number of extFields entries, duplicates and empty ones included. */
    public int entryCount() {
        return entryCount;
    }

    /** The key of entry {@code index} (in wire order); null for a zero-length binary key. */
    public String key(int index) {
        int e = entryOffset(index);
        int keyLength = shortAt(e);
        return stringOrNull(e + 2, keyLength);
    }

    /** The value of entry {@code index} (in wire order); see the class doc for empty values. */
    public String value(int index) {
        int e = entryOffset(index);
        int v = e + 2 + shortAt(e);
        return stringOrNull(v + 4, intAt(v));
    }

    /** The value of the last entry named {@code key} (the one a receiver's map keeps), or null. */
    public String get(String key) {
        int e = find(key);
        if (e < 0) {
            return null;
        }
        int v = e + 2 + shortAt(e);
        return stringOrNull(v + 4, intAt(v));
    }

    public boolean contains(String key) {
        return find(key) >= 0;
    }

    /**
     * Every entry in wire order as a new map (a later duplicate key replaces the earlier value, as in
     * any receiver's map). For tests, logging and the generic path; the hot path uses the typed views.
     */
    public Map<String, String> extFields() {
        if (!extPresent) {
            return null;
        }
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < entryCount; i++) {
            map.put(key(i), value(i));
        }
        return map;
    }

    /** Sets {@code key} to {@code value}: replaces the entry in place (dropping later duplicates) or appends it. */
    public CommandHeader put(String key, CharSequence value) {
        rebuild(key, value.toString().getBytes(StandardCharsets.UTF_8));
        return this;
    }

    /** {@link #put(String, CharSequence)} with a decimal number. */
    public CommandHeader putLong(String key, long value) {
        byte[] digits = new byte[Ascii.decimalLength(value)];
        Ascii.putDecimal(digits, 0, value);
        rebuild(key, digits);
        return this;
    }

    /** Removes every entry named {@code key}. */
    public CommandHeader remove(String key) {
        if (find(key) >= 0) {
            rebuild(key, null);
        }
        return this;
    }

    // ---- typed access for subclasses ----

    /** Whether the typed field in {@code slot} is present. */
    final boolean has(int slot) {
        return slots[slot] >= 0;
    }

    /** Index of the value bytes of the field in {@code slot} in {@link #image()}, or -1. */
    final int valueIndex(int slot) {
        int e = slots[slot];
        return e < 0 ? -1 : e + 2 + shortAt(e) + 4;
    }

    /** Length of the value bytes of the field in {@code slot}, or -1 when absent. */
    final int valueLength(int slot) {
        int e = slots[slot];
        return e < 0 ? -1 : intAt(e + 2 + shortAt(e));
    }

    /** The broker's topic check (a send's, with the forbidden system topics, when {@code send}) on the raw bytes of the field in {@code slot}. */
    final NameCheck checkTopic(int slot, NameValidator validator, boolean send) {
        int length = valueLength(slot);
        byte[] a = imageArray;
        if (a != null) {
            int at = OWN_HEAD_ROOM + valueIndex(slot);
            return send ? validator.checkSendTopic(a, at, length) : validator.checkTopic(a, at, length);
        }
        int at = valueIndex(slot);
        return send ? validator.checkSendTopic(image, at, length) : validator.checkTopic(image, at, length);
    }

    /** The broker's group check on the raw bytes of the field in {@code slot}. */
    final NameCheck checkGroup(int slot, NameValidator validator) {
        int length = valueLength(slot);
        byte[] a = imageArray;
        return a != null ? validator.checkGroup(a, OWN_HEAD_ROOM + valueIndex(slot), length)
            : validator.checkGroup(image, valueIndex(slot), length);
    }

    final String string(int slot) {
        int e = slots[slot];
        if (e < 0) {
            return null;
        }
        int v = e + 2 + shortAt(e);
        return stringOrNull(v + 4, intAt(v));
    }

    final long longValue(int slot) {
        int e = slots[slot];
        if (e < 0) {
            return ABSENT_LONG;
        }
        int v = e + 2 + shortAt(e);
        return Ascii.parseLong(image, v + 4, intAt(v), ABSENT_LONG);
    }

    final int intValue(int slot) {
        long v = longValue(slot);
        return v < Integer.MIN_VALUE || v > Integer.MAX_VALUE ? ABSENT_INT : (int) v;
    }

    /** Boolean.parseBoolean of the field: absent or anything but "true" is false. */
    final boolean booleanValue(int slot) {
        int e = slots[slot];
        if (e < 0) {
            return false;
        }
        int v = e + 2 + shortAt(e);
        return Ascii.parseBoolean(image, v + 4, intAt(v));
    }

    final CommandHeader putSlot(int slot, long value) {
        return putLong(requireKey(slot), value);
    }

    final CommandHeader putSlot(int slot, CharSequence value) {
        return put(requireKey(slot), value);
    }

    private String requireKey(int slot) {
        String key = kind.keys.name(slot);
        if (key == null) {
            throw new UnsupportedOperationException(kind + " has no key for this field");
        }
        return key;
    }

    /**
     * The buffer holding the raw entries (and, for binary headers, the remark), for zero-copy checks
     * of a value's bytes with {@link #valueIndex(int)}-style offsets. Not retained.
     */
    public ByteBuf image() {
        return image;
    }

    // ---- encoding ----

    /**
     * Whether this header can be written in {@code type}. The binary encoding holds code and version
     * in 16 bits: a code such as POP_MESSAGE (200050) cannot be sent as ROCKETMQ (rocketmq-remoting
     * would silently truncate it), so such a header must stay JSON.
     */
    public boolean canEncode(SerializeType type) {
        return type != SerializeType.ROCKETMQ
            || (code == (short) code && version == (short) version);
    }

    /** Exact bytes of the ROCKETMQ binary encoding. */
    public int binaryLength() {
        if (imageIsTail) {
            return FIXED_FIELDS_LENGTH + entriesEnd;
        }
        return BINARY_FIXED_LENGTH + remarkBinaryLength() + (entriesEnd - entriesStart);
    }

    /** Writes the header in {@code type} to {@code out} (made writable for it); returns the bytes written. */
    public int encode(SerializeType type, ByteBuf out) {
        if (type == SerializeType.ROCKETMQ) {
            return writeBinary(out);
        }
        BinaryToJson json = renderJson();
        out.writeBytes(json.bytes(), 0, json.length());
        return json.length();
    }

    /** Bytes of the encoding in {@code type} (for JSON this renders the header once). */
    public int encodedLength(SerializeType type) {
        return type == SerializeType.ROCKETMQ ? binaryLength() : renderJson().length();
    }

    private int remarkBinaryLength() {
        if (remarkIndex >= 0) {
            return remarkLength;
        }
        return remark == null || remark.isEmpty() ? 0 : ByteBufUtil.utf8Bytes(remark);
    }

    /** Throws {@link IllegalStateException} unless {@link #canEncode(SerializeType)}. */
    final void requireEncodable(SerializeType type) {
        if (!canEncode(type)) {
            throw new IllegalStateException("code " + code + " / version " + version + " does not fit the binary header");
        }
    }

    /**
     * Writes the frame prefix ({@code totalLength}, {@code typeAndLength}) and the binary header to
     * {@code out}; returns the bytes written. A header transcoded from JSON and not changed since is
     * written from its own array in one copy, the prefix and fixed fields put in front of its image.
     */
    final int writeBinaryFrameHead(ByteBuf out, int totalLength, int typeAndLength) {
        requireEncodable(SerializeType.ROCKETMQ);
        byte[] a = imageArray;
        if (imageIsTail && a != null) {
            putInt(a, 0, totalLength);
            putInt(a, 4, typeAndLength);
            io.rmqgw.codec.json.JsonToBinary.putFixedFields(a, 8, code, language, version, opaque, flag);
            int n = OWN_HEAD_ROOM + entriesEnd;
            out.writeBytes(a, 0, n);
            return n;
        }
        out.ensureWritable(8 + binaryLength());
        out.writeInt(totalLength);
        out.writeInt(typeAndLength);
        return 8 + writeBinary(out);
    }


    private static void putInt(byte[] a, int at, int v) {
        a[at] = (byte) (v >>> 24);
        a[at + 1] = (byte) (v >>> 16);
        a[at + 2] = (byte) (v >>> 8);
        a[at + 3] = (byte) v;
    }

    int writeBinary(ByteBuf out) {
        requireEncodable(SerializeType.ROCKETMQ);
        int length = binaryLength();
        out.ensureWritable(length);
        // code(2) language(1) version(2) and the first three bytes of opaque, then its last, then flag
        out.writeLong((long) (code & 0xFFFF) << 48 | (long) (language & 0xFF) << 40 | (long) (version & 0xFFFF) << 24
            | (opaque >>> 8) & 0xFFFFFFL);
        out.writeByte(opaque);
        out.writeInt(flag);
        if (imageIsTail) {
            out.writeBytes(image, 0, entriesEnd); // remark length, remark, extFields length, entries
            return length;
        }
        if (remarkIndex >= 0) {
            out.writeInt(remarkLength);
            out.writeBytes(image, remarkIndex, remarkLength);
        } else if (remark == null || remark.isEmpty()) {
            out.writeInt(0);
        } else {
            out.writeInt(ByteBufUtil.utf8Bytes(remark));
            out.writeCharSequence(remark, StandardCharsets.UTF_8);
        }
        int extLength = entriesEnd - entriesStart;
        out.writeInt(extLength);
        if (extLength > 0) {
            out.writeBytes(image, entriesStart, extLength);
        }
        return length;
    }

    /**
     * Renders the JSON encoding with the thread's {@link BinaryToJson}; the result is in its
     * {@code bytes()[0, length())} until the next render on this thread. Field order and names are those
     * of fastjson's RemotingCommand output.
     */
    BinaryToJson renderJson() {
        int extLength = entriesEnd - entriesStart;
        int rawRemark = remarkIndex >= 0 ? remarkLength : 0;
        byte[] in = Scratch.get().in(extLength + rawRemark);
        if (extLength > 0) {
            image.getBytes(entriesStart, in, 0, extLength);
        }
        byte[] remarkBytes = in;
        int remarkOff = extLength;
        int remarkLen = -1;
        if (rawRemark > 0) {
            image.getBytes(remarkIndex, in, extLength, rawRemark);
            remarkLen = rawRemark;
        } else if (remark != null) {
            remarkBytes = remark.getBytes(StandardCharsets.UTF_8);
            remarkOff = 0;
            remarkLen = remarkBytes.length;
        }
        BinaryToJson json = BinaryToJson.get();
        if (!json.render(code, language, version, opaque, flag, remarkBytes, remarkOff, remarkLen, in, 0, extLength,
            extPresent, source == SerializeType.ROCKETMQ)) {
            throw new IllegalStateException("extFields entries no longer match their lengths"); // index() checked them
        }
        return json;
    }

    /** The generic decoded form (extFields copied into a map), for code that works with {@link RemotingHeader}. */
    public RemotingHeader toRemotingHeader() {
        LanguageCode l = language();
        return new RemotingHeader(code, l == null ? LanguageCode.OTHER : l, version, opaque, flag, remark(), extFields());
    }

    // ---- internals ----

    private String stringOrNull(int index, int length) {
        if (length == 0) {
            return source == SerializeType.ROCKETMQ ? null : "";
        }
        return image.toString(index, length, StandardCharsets.UTF_8);
    }

    private int entryOffset(int index) {
        if (index < 0 || index >= entryCount) {
            throw new IndexOutOfBoundsException("entry " + index + " of " + entryCount);
        }
        if (offsets == null) {
            int[] o = new int[entryCount];
            int e = entriesStart;
            for (int i = 0; i < entryCount; i++) {
                o[i] = e;
                int v = e + 2 + shortAt(e);
                e = v + 4 + intAt(v);
            }
            offsets = o;
        }
        return offsets[index];
    }

    /** Image index of the last entry named {@code key}, or -1. */
    private int find(String key) {
        int slot = kind.keys.find(key);
        if (slot >= 0) {
            return slots[slot];
        }
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        int found = -1;
        int e = entriesStart;
        while (e < entriesEnd) {
            int keyLength = shortAt(e);
            if (keyLength == k.length && keyEquals(e + 2, k)) {
                found = e;
            }
            int v = e + 2 + keyLength;
            e = v + 4 + intAt(v);
        }
        return found;
    }

    private boolean keyEquals(int index, byte[] k) {
        for (int i = 0; i < k.length; i++) {
            if (image.getByte(index + i) != k[i]) {
                return false;
            }
        }
        return true;
    }

    /** Rewrites the entries with {@code key} set to {@code value} (null: removed) into a new image. */
    private void rebuild(String key, byte[] value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        if (k.length > Short.MAX_VALUE) {
            throw new IllegalArgumentException("key longer than " + Short.MAX_VALUE + " bytes");
        }
        remark(); // the new image holds entries only
        int extLength = entriesEnd - entriesStart;
        byte[] old = new byte[extLength];
        image.getBytes(entriesStart, old);
        // the new image is a heap array, indexed as it is: no buffer to allocate from the old image's allocator
        // (an unpooled direct one for an image wrapped around an array) and no second copy to index
        byte[] next = new byte[extLength + k.length + (value == null ? 0 : value.length) + 6];
        int w = 0;
        boolean written = false;
        int pos = 0;
        while (pos < extLength) {
            int keyLength = ((old[pos] & 0xFF) << 8) | (old[pos + 1] & 0xFF);
            int v = pos + 2 + keyLength;
            int valueLength = ((old[v] & 0xFF) << 24) | ((old[v + 1] & 0xFF) << 16) | ((old[v + 2] & 0xFF) << 8) | (old[v + 3] & 0xFF);
            int end = v + 4 + valueLength;
            boolean match = keyLength == k.length && java.util.Arrays.equals(old, pos + 2, v, k, 0, k.length);
            if (!match) {
                System.arraycopy(old, pos, next, w, end - pos);
                w += end - pos;
            } else if (value != null && !written) {
                w = writeEntry(next, w, k, value);
                written = true;
            }
            pos = end;
        }
        if (value != null && !written) {
            w = writeEntry(next, w, k, value);
        }
        ByteBuf previous = image;
        image = Unpooled.wrappedBuffer(next, 0, w);
        imageArray = null;
        releaseImage(previous);
        imageIsTail = false;
        entriesStart = 0;
        entriesEnd = w;
        extPresent = true;
        offsets = null;
        index(next, 0, w, 0);
    }

    /** Writes one binary entry at {@code w} of {@code out}; returns the index after it. */
    private static int writeEntry(byte[] out, int w, byte[] key, byte[] value) {
        out[w++] = (byte) (key.length >>> 8);
        out[w++] = (byte) key.length;
        System.arraycopy(key, 0, out, w, key.length);
        w += key.length;
        out[w++] = (byte) (value.length >>> 24);
        out[w++] = (byte) (value.length >>> 16);
        out[w++] = (byte) (value.length >>> 8);
        out[w++] = (byte) value.length;
        System.arraycopy(value, 0, out, w, value.length);
        return w + value.length;
    }

    /**
     * Walks the entries in {@code a[off, end)}, checking every length against the section, and fills
     * the typed slots with image indexes ({@code base} + offset from {@code off}); the last occurrence
     * of a key wins, as in the receiver's map.
     */
    final void index(byte[] a, int off, int end, int base) {
        java.util.Arrays.fill(slots, -1);
        KeyTable keys = kind.keys;
        boolean typed = keys.size() > 0;
        int count = 0;
        int pos = off;
        while (pos < end) {
            if (end - pos < 6) {
                throw truncatedEntry(pos - off);
            }
            int keyLength = (short) (((a[pos] & 0xFF) << 8) | (a[pos + 1] & 0xFF));
            if (keyLength < 0 || keyLength > end - pos - 6) {
                throw truncatedEntry(pos - off);
            }
            int v = pos + 2 + keyLength;
            int valueLength = ((a[v] & 0xFF) << 24) | ((a[v + 1] & 0xFF) << 16) | ((a[v + 2] & 0xFF) << 8) | (a[v + 3] & 0xFF);
            if (valueLength < 0 || valueLength > end - v - 4) {
                throw truncatedEntry(pos - off);
            }
            if (typed) {
                int slot = keys.find(a, pos + 2, keyLength);
                if (slot >= 0) {
                    slots[slot] = base + (pos - off);
                }
            }
            count++;
            pos = v + 4 + valueLength;
        }
        entryCount = count;
    }

    /**
     * Fills the typed slots of a header transcoded by {@code t} from what the pass noted: the last
     * entry of each one-byte key; entries with longer keys (known to be well formed: the pass wrote
     * them) are walked only when there are some and this kind has such keys. {@code first} is the
     * image index of the first entry, {@code a[at]} the first entry in the pass's array.
     */
    final void index(io.rmqgw.codec.json.JsonToBinary t, int first, byte[] a, int at) {
        KeyTable keys = kind.keys;
        int[] s = slots;
        for (int slot = 0; slot < s.length; slot++) {
            int b = keys.oneByteKey(slot);
            s[slot] = b >= 0 && t.hasOneByteKey(b) ? first + t.oneByteKeyOffset(b) : -1;
        }
        int count = t.entryCount();
        if (t.longKeyCount() > 0 && keys.hasLongKeys()) {
            int e = at;
            for (int i = 0; i < count; i++) {
                int keyLength = (a[e] & 0xFF) << 8 | a[e + 1] & 0xFF;
                if (keyLength != 1) {
                    int slot = keys.find(a, e + 2, keyLength);
                    if (slot >= 0) {
                        s[slot] = first + (e - at);
                    }
                }
                int v = e + 2 + keyLength;
                e = v + 4 + ((a[v] & 0xFF) << 24 | (a[v + 1] & 0xFF) << 16 | (a[v + 2] & 0xFF) << 8 | a[v + 3] & 0xFF);
            }
        }
        entryCount = count;
    }

    private static MalformedFrameException truncatedEntry(int offset) {
        return new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
            "extFields entry at offset " + offset + " runs past its field");
    }

    @Override
    public int refCnt() {
        return refs;
    }

    @Override
    public CommandHeader retain() {
        return retain(1);
    }

    @Override
    public CommandHeader retain(int increment) {
        if (increment <= 0 || refs <= 0) {
            throw new io.netty.util.IllegalReferenceCountException(refs, increment);
        }
        refs += increment;
        return this;
    }

    @Override
    public CommandHeader touch() {
        image.touch();
        return this;
    }

    @Override
    public CommandHeader touch(Object hint) {
        image.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return release(1);
    }

    @Override
    public boolean release(int decrement) {
        if (decrement <= 0 || decrement > refs) {
            throw new io.netty.util.IllegalReferenceCountException(refs, -decrement);
        }
        refs -= decrement;
        if (refs == 0) {
            ByteBuf last = image;
            recycle();
            releaseImage(last);
            return true;
        }
        return false;
    }

    /** Forgets everything decoded and returns the object to its kind's pool. */
    private void recycle() {
        image = null;
        imageArray = null;
        if (ownArray != null && ownArray.length > OWN_ARRAY_KEEP_LIMIT) {
            ownArray = null; // a rare huge header does not stay pinned in the pool
            ownImage = null;
        }
        remark = null;
        remarkIndex = -1;
        remarkLength = 0;
        extPresent = false;
        imageIsTail = false;
        entriesStart = 0;
        entriesEnd = 0;
        entryCount = 0;
        offsets = null;
        source = null;
        code = 0;
        language = 0;
        version = 0;
        opaque = 0;
        flag = 0;
        SpareHeaders spares = home;
        home = null;
        if (spares == null || !spares.keep(this)) {
            handle.recycle(this);
        }
    }

    /** For subclasses' and tests' toString: envelope plus entries. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(64 + 2 * (entriesEnd - entriesStart));
        sb.append(getClass().getSimpleName()).append("{code=").append(code).append(", opaque=").append(opaque)
            .append(", flag=").append(flag).append(", language=").append(language).append(", version=").append(version)
            .append(", source=").append(source);
        if (refCnt() > 0) {
            sb.append(", remark=").append(remark()).append(", extFields=").append(extFields());
        }
        return sb.append('}').toString();
    }
}
