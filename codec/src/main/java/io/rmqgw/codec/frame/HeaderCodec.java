package io.rmqgw.codec.frame;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.SerializedString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.json.BinaryToJson;
import io.rmqgw.codec.json.JsonHeaderStream;
import io.rmqgw.codec.json.JsonToBinary;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Reads and writes the two header encodings directly on ByteBufs. A JSON header is read in one pass
 * by the thread's {@link JsonToBinary}, which also transcodes it to binary for the decode that usually
 * follows; headers it leaves to the general reader (unusual or malformed ones) are read with the
 * thread's reused jackson streaming parser ({@link JsonHeaderStream}). ROCKETMQ binary is read by
 * fixed offsets. Every length is checked against the header's own length, so a lying field is a
 * {@link MalformedFrameException}, never an out-of-bounds read of the next frame's bytes.
 */
public final class HeaderCodec {

    /** code(2) language(1) version(2) opaque(4) flag(4) remarkLength(4) extFieldsLength(4). */
    static final int BINARY_MIN_LENGTH = 21;
    private static final int BINARY_REMARK_OFFSET = 13;

    private static final JsonFactory JSON = JsonFactory.builder().build();

    private HeaderCodec() {
    }

    /** The envelope of a header: what every frame needs to be routed. */
    record Envelope(int code, LanguageCode language, int version, int opaque, int flag) {
    }

    /**
     * Reads the envelope of the {@code headerLength} header bytes at {@code headerIndex} of
     * {@code frame} and returns the frame holding it (taking over {@code frame}'s reference). Nothing
     * but the RemotingFrame is allocated.
     */
    static RemotingFrame frame(ByteBuf frame, SerializeType type, int headerIndex, int headerLength) {
        if (type == SerializeType.ROCKETMQ) {
            return binaryFrame(frame, headerIndex, headerLength);
        }
        JsonToBinary t = JsonToBinary.get();
        if (!t.transcode(frame, headerIndex, headerLength)) {
            return jsonFrame(frame, headerIndex, headerLength);
        }
        // the one pass over the header: envelope read, header checked and transcoded, kept for the decode
        RemotingFrame f = new RemotingFrame(frame, SerializeType.JSON, headerLength, t.code(),
            t.languageGiven() ? language(t.languageCode()) : LanguageCode.OTHER, t.version(), t.opaque(), t.flag());
        f.noteScan(t);
        return f;
    }

    /** Decodes remark and extFields too. The frame is not released. */
    public static RemotingHeader decodeHeader(RemotingFrame frame) {
        ByteBuf header = frame.headerSlice();
        if (frame.encoding() == SerializeType.ROCKETMQ) {
            return decodeBinary(header);
        }
        JsonToBinary t = transcoded(frame);
        if (t == null) {
            return decodeJson(header);
        }
        RemotingHeader h = decodeBinary(Unpooled.wrappedBuffer(t.bytes(), JsonToBinary.HEAD_ROOM, t.length()));
        // as the JSON read: code and version whole (the binary fields hold 16 bits), the envelope's
        // language (OTHER when absent), an empty remark and an empty extFields object kept
        return new RemotingHeader(t.code(), frame.language(), t.version(), t.opaque(), t.flag(),
            t.remarkGiven() && h.remark() == null ? "" : h.remark(),
            t.extFieldsGiven() && h.extFields() == null ? new LinkedHashMap<>() : h.extFields());
    }

    /**
     * The JSON frame's header as binary, in the thread's {@link JsonToBinary}: the result the frame carries
     * (the frame decoder's) while it is still that transcoder's last one and this is its thread (the usual
     * case: a frame is handled right after it is read), else transcoded again (and carried from then on).
     * Null when the header needs the general reader. The result is valid until the thread's next transcode.
     */
    public static JsonToBinary transcoded(RemotingFrame frame) {
        if (frame.scan() instanceof JsonToBinary t) {
            return t;
        }
        JsonToBinary t = JsonToBinary.get();
        ByteBuf content = frame.content();
        if (!t.transcode(content, content.readerIndex() + RemotingFrame.PREFIX_LENGTH, frame.headerLength())) {
            return null;
        }
        frame.noteScan(t);
        return t;
    }

    /**
     * The binary frame's header bytes, loaded in the thread's {@link BinaryToJson}: the frame decoder's load
     * while it is still the last one on this thread, else loaded again (and carried from then on). Valid
     * until the thread's next load.
     */
    public static BinaryToJson loaded(RemotingFrame frame) {
        if (frame.scan() instanceof BinaryToJson b) {
            return b;
        }
        BinaryToJson b = BinaryToJson.get();
        ByteBuf content = frame.content();
        b.load(content, content.readerIndex() + RemotingFrame.PREFIX_LENGTH, frame.headerLength());
        frame.noteScan(b);
        return b;
    }

    /** Writes {@code header} in {@code type} encoding to {@code out}; returns the bytes written. */
    public static int encode(RemotingHeader header, SerializeType type, ByteBuf out) {
        int start = out.writerIndex();
        if (type == SerializeType.ROCKETMQ) {
            encodeBinary(header, out);
        } else {
            encodeJson(header, out);
        }
        return out.writerIndex() - start;
    }

    // ---- ROCKETMQ binary ----

    private static Envelope binaryEnvelope(ByteBuf header) {
        int length = header.readableBytes();
        byte[] a = BinaryToJson.get().load(header, header.readerIndex(), length);
        checkBinary(a, length);
        return new Envelope(getShort(a, 0), language(a[2]), getShort(a, 3), getInt(a, 5), getInt(a, 9));
    }

    /**
     * The header's bytes are copied once into the thread's {@link BinaryToJson} (checked there as plain
     * bytes) and the frame carries that load, so a render to JSON right after reads them from there.
     */
    private static RemotingFrame binaryFrame(ByteBuf frame, int base, int length) {
        BinaryToJson json = BinaryToJson.get();
        byte[] a = json.load(frame, base, length);
        checkBinary(a, length);
        RemotingFrame f = new RemotingFrame(frame, SerializeType.ROCKETMQ, length, getShort(a, 0), language(a[2]),
            getShort(a, 3), getInt(a, 5), getInt(a, 9));
        f.noteScan(json);
        return f;
    }

    private static void checkBinary(byte[] header, int length) {
        if (length < BINARY_MIN_LENGTH) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
                "binary header of " + length + " bytes is shorter than the fixed fields (" + BINARY_MIN_LENGTH + ")");
        }
        validateBinaryVariableFields(header, length);
    }

    private static short getShort(byte[] a, int at) {
        return (short) ((a[at] & 0xFF) << 8 | a[at + 1] & 0xFF);
    }

    private static int getInt(byte[] a, int at) {
        return (int) INT.get(a, at); // one load, not four byte loads and shifts
    }

    private static final java.lang.invoke.VarHandle INT =
        java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.BIG_ENDIAN);

    /** Walks remark and every extFields entry of {@code header[0, length)} by length only: no strings are built. */
    private static void validateBinaryVariableFields(byte[] header, int length) {
        int base = 0;
        int end = length;
        int pos = BINARY_REMARK_OFFSET;
        int remarkLength = getInt(header, pos);
        pos += 4;
        if (remarkLength < 0 || remarkLength > end - pos - 4) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
                "remark length " + remarkLength + " runs past the header (" + length + " bytes)");
        }
        pos += remarkLength;
        int extLength = getInt(header, pos);
        pos += 4;
        if (extLength < 0 || extLength > end - pos) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
                "extFields length " + extLength + " runs past the header (" + length + " bytes)");
        }
        int extEnd = pos + extLength;
        while (pos < extEnd) {
            if (extEnd - pos < 2) {
                throw truncatedEntry(pos - base);
            }
            int keyLength = getShort(header, pos);
            pos += 2;
            if (keyLength < 0 || keyLength > extEnd - pos - 4) {
                throw truncatedEntry(pos - base);
            }
            pos += keyLength;
            int valueLength = getInt(header, pos);
            pos += 4;
            if (valueLength < 0 || valueLength > extEnd - pos) {
                throw truncatedEntry(pos - base);
            }
            pos += valueLength;
        }
    }

    private static MalformedFrameException truncatedEntry(int offset) {
        return new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
            "extFields entry at header offset " + offset + " runs past its field");
    }

    private static RemotingHeader decodeBinary(ByteBuf header) {
        Envelope envelope = binaryEnvelope(header);
        int pos = header.readerIndex() + BINARY_REMARK_OFFSET;
        int remarkLength = header.getInt(pos);
        pos += 4;
        String remark = remarkLength == 0 ? null : header.toString(pos, remarkLength, StandardCharsets.UTF_8);
        pos += remarkLength;
        int extLength = header.getInt(pos);
        pos += 4;
        Map<String, String> ext = null;
        if (extLength > 0) {
            ext = new LinkedHashMap<>();
            int extEnd = pos + extLength;
            while (pos < extEnd) {
                int keyLength = header.getShort(pos);
                pos += 2;
                String key = header.toString(pos, keyLength, StandardCharsets.UTF_8);
                pos += keyLength;
                int valueLength = header.getInt(pos);
                pos += 4;
                ext.put(key, header.toString(pos, valueLength, StandardCharsets.UTF_8));
                pos += valueLength;
            }
        }
        return new RemotingHeader(envelope.code(), envelope.language(), envelope.version(), envelope.opaque(),
            envelope.flag(), remark, ext);
    }

    private static void encodeBinary(RemotingHeader header, ByteBuf out) {
        out.writeShort(header.code());
        out.writeByte(header.language().getCode());
        out.writeShort(header.version());
        out.writeInt(header.opaque());
        out.writeInt(header.flag());
        String remark = header.remark();
        if (remark == null || remark.isEmpty()) {
            out.writeInt(0);
        } else {
            int lengthAt = out.writerIndex();
            out.writeInt(0);
            int written = out.writeCharSequence(remark, StandardCharsets.UTF_8);
            out.setInt(lengthAt, written);
        }
        Map<String, String> ext = header.extFields();
        int extLengthAt = out.writerIndex();
        out.writeInt(0);
        if (ext != null) {
            int extStart = out.writerIndex();
            for (Map.Entry<String, String> e : ext.entrySet()) {
                if (e.getKey() == null || e.getValue() == null) {
                    continue;
                }
                int keyAt = out.writerIndex();
                out.writeShort(0);
                out.setShort(keyAt, out.writeCharSequence(e.getKey(), StandardCharsets.UTF_8));
                int valueAt = out.writerIndex();
                out.writeInt(0);
                out.setInt(valueAt, out.writeCharSequence(e.getValue(), StandardCharsets.UTF_8));
            }
            out.setInt(extLengthAt, out.writerIndex() - extStart);
        }
    }

    private static final LanguageCode[] LANGUAGES = LanguageCode.values();
    /** By wire byte; OTHER where no language has the byte (LanguageCode.valueOf copies values() per call). */
    private static final LanguageCode[] LANGUAGE_BY_CODE = new LanguageCode[256];

    static {
        java.util.Arrays.fill(LANGUAGE_BY_CODE, LanguageCode.OTHER);
        for (int i = LANGUAGES.length - 1; i >= 0; i--) { // the first language with a code wins, as in valueOf
            LANGUAGE_BY_CODE[LANGUAGES[i].getCode() & 0xFF] = LANGUAGES[i];
        }
    }

    private static LanguageCode language(byte code) {
        return LANGUAGE_BY_CODE[code & 0xFF];
    }

    // ---- JSON ----

    /**
     * The general reader's envelope, for headers {@link JsonToBinary} leaves to it: reads what routing
     * needs (code, language, version, opaque, flag) with the thread's reused parser, matching the
     * top-level names in the order fastjson writes them, and skips everything else (extFields
     * included: its strings are stepped over, not decoded), so the whole header is checked to be well
     * formed. Allocates nothing but the frame.
     */
    private static RemotingFrame jsonFrame(ByteBuf frame, int headerIndex, int headerLength) {
        int code = -1;
        LanguageCode language = LanguageCode.OTHER;
        int version = 0;
        int opaque = 0;
        int flag = 0;
        boolean sawCode = false;
        JsonHeaderStream in = JsonHeaderStream.get();
        try {
            JsonParser p = in.begin(frame, headerIndex, headerLength);
            expectObjectStart(p);
            int expect = 0;
            while (true) {
                int field;
                boolean matched = false;
                if (expect < ENVELOPE_ORDER.length) {
                    matched = p.nextFieldName(ENVELOPE_ORDER[expect]); // a byte compare, no name lookup
                } else {
                    p.nextToken();
                }
                if (matched) {
                    field = expect++;
                } else if (p.currentToken() == JsonToken.FIELD_NAME) {
                    field = envelopeField(p.currentName());
                    if (field == F_REMARK) {
                        expect = F_SERIALIZE_TYPE; // fastjson writes a remark after opaque
                    } else if (field != F_OTHER) {
                        expect = field + 1; // back in step after a field out of order
                    }
                } else {
                    break;
                }
                JsonToken value = p.nextToken();
                switch (field) {
                    case F_CODE -> {
                        code = intValue(p, value, "code");
                        sawCode = true;
                    }
                    case F_FLAG -> flag = intValue(p, value, "flag");
                    case F_LANGUAGE -> language = jsonLanguage(p, value);
                    case F_OPAQUE -> opaque = intValue(p, value, "opaque");
                    case F_VERSION -> version = intValue(p, value, "version");
                    default -> p.skipChildren();
                }
            }
            expectEnd(p, in);
        } catch (IOException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, describe(e), e);
        } catch (IllegalStateException e) {
            // Jackson's symbol table refuses field names flooding one hash bucket
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
        } finally {
            in.release();
        }
        if (!sawCode) {
            throw new MalformedFrameException(MalformedReason.MISSING_FIELD, "JSON header has no \"code\"");
        }
        return new RemotingFrame(frame, SerializeType.JSON, headerLength, code, language, version, opaque, flag);
    }

    // top-level fields in fastjson's (alphabetical) order; a header in another order still reads, by name
    private static final int F_CODE = 0;
    private static final int F_EXT_FIELDS = 1;
    private static final int F_FLAG = 2;
    private static final int F_LANGUAGE = 3;
    private static final int F_OPAQUE = 4;
    private static final int F_SERIALIZE_TYPE = 5;
    private static final int F_VERSION = 6;
    private static final int F_REMARK = 7;
    private static final int F_OTHER = 8;
    private static final SerializedString[] ENVELOPE_ORDER = {
        new SerializedString("code"), new SerializedString("extFields"), new SerializedString("flag"),
        new SerializedString("language"), new SerializedString("opaque"), new SerializedString("serializeTypeCurrentRPC"),
        new SerializedString("version"),
    };

    private static int envelopeField(String name) {
        return switch (name) {
            case "code" -> F_CODE;
            case "extFields" -> F_EXT_FIELDS;
            case "flag" -> F_FLAG;
            case "language" -> F_LANGUAGE;
            case "opaque" -> F_OPAQUE;
            case "serializeTypeCurrentRPC" -> F_SERIALIZE_TYPE;
            case "version" -> F_VERSION;
            case "remark" -> F_REMARK;
            default -> F_OTHER;
        };
    }

    private static RemotingHeader decodeJson(ByteBuf header) {
        int code = -1;
        LanguageCode language = LanguageCode.OTHER;
        int version = 0;
        int opaque = 0;
        int flag = 0;
        String remark = null;
        Map<String, String> ext = null;
        boolean sawCode = false;
        JsonHeaderStream in = JsonHeaderStream.get();
        try {
            JsonParser p = in.begin(header, header.readerIndex(), header.readableBytes());
            expectObjectStart(p);
            String name;
            while ((name = p.nextFieldName()) != null) {
                JsonToken value = p.nextToken();
                switch (name) {
                    case "code" -> {
                        code = intValue(p, value, name);
                        sawCode = true;
                    }
                    case "version" -> version = intValue(p, value, name);
                    case "opaque" -> opaque = intValue(p, value, name);
                    case "flag" -> flag = intValue(p, value, name);
                    case "language" -> language = jsonLanguage(p, value);
                    case "remark" -> remark = jsonRemark(p, value);
                    case "extFields" -> ext = jsonExtFields(p, value);
                    default -> p.skipChildren();
                }
            }
            expectEnd(p, in);
        } catch (IOException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, describe(e), e);
        } catch (IllegalStateException e) {
            // Jackson's symbol table refuses field names flooding one hash bucket
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
        } finally {
            in.release();
        }
        if (!sawCode) {
            throw new MalformedFrameException(MalformedReason.MISSING_FIELD, "JSON header has no \"code\"");
        }
        return new RemotingHeader(code, language, version, opaque, flag, remark, ext);
    }

    private static String jsonRemark(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
            // getValueAsString would leave the parser inside the value and misread what follows
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, "\"remark\" is not a scalar");
        }
        return p.getText();
    }

    private static Map<String, String> jsonExtFields(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value != JsonToken.START_OBJECT) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, "\"extFields\" is not an object");
        }
        Map<String, String> ext = new LinkedHashMap<>();
        String key;
        while ((key = p.nextFieldName()) != null) {
            JsonToken v = p.nextToken();
            if (v == JsonToken.START_OBJECT || v == JsonToken.START_ARRAY) {
                throw new MalformedFrameException(MalformedReason.INVALID_JSON, "extFields." + key + " is not a scalar");
            }
            ext.put(key, v == JsonToken.VALUE_NULL ? null : p.getText());
        }
        return ext;
    }

    private static String describe(IOException e) {
        return e instanceof com.fasterxml.jackson.core.JsonProcessingException jpe ? jpe.getOriginalMessage() : e.getMessage();
    }

    private static void expectObjectStart(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.START_OBJECT) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON,
                t == null ? "JSON header is empty" : "JSON header is not an object");
        }
    }

    /** After the root object's last field: it must be closed, with nothing but whitespace after it. */
    private static void expectEnd(JsonParser p, JsonHeaderStream in) throws IOException {
        if (p.currentToken() != JsonToken.END_OBJECT) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, "unexpected " + p.currentToken());
        }
        if (!in.end()) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, "JSON header has trailing content");
        }
    }

    private static int intValue(JsonParser p, JsonToken value, String name) throws IOException {
        if (value != JsonToken.VALUE_NUMBER_INT) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, "\"" + name + "\" is not an integer");
        }
        return p.getIntValue();
    }

    private static LanguageCode jsonLanguage(JsonParser p, JsonToken value) throws IOException {
        if (value != JsonToken.VALUE_STRING) {
            p.skipChildren();
            return LanguageCode.OTHER;
        }
        // compared on the parser's chars: no String per header
        char[] chars = p.getTextCharacters();
        int off = p.getTextOffset();
        int len = p.getTextLength();
        for (LanguageCode language : LANGUAGES) {
            String name = language.name();
            if (name.length() == len && sameChars(name, chars, off)) {
                return language;
            }
        }
        return LanguageCode.OTHER;
    }

    private static boolean sameChars(String s, char[] chars, int off) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) != chars[off + i]) {
                return false;
            }
        }
        return true;
    }

    private static void encodeJson(RemotingHeader header, ByteBuf out) {
        try (JsonGenerator g = JSON.createGenerator((java.io.OutputStream) new ByteBufOutputStream(out), JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeNumberField("code", header.code());
            if (header.extFields() != null) {
                g.writeObjectFieldStart("extFields");
                for (Map.Entry<String, String> e : header.extFields().entrySet()) {
                    if (e.getKey() != null && e.getValue() != null) {
                        g.writeStringField(e.getKey(), e.getValue());
                    }
                }
                g.writeEndObject();
            }
            g.writeNumberField("flag", header.flag());
            g.writeStringField("language", header.language().name());
            g.writeNumberField("opaque", header.opaque());
            if (header.remark() != null) {
                g.writeStringField("remark", header.remark());
            }
            g.writeStringField("serializeTypeCurrentRPC", "JSON");
            g.writeNumberField("version", header.version());
            g.writeEndObject();
        } catch (IOException e) {
            // ByteBufOutputStream does not fail short of allocation failure
            throw new IllegalStateException("cannot write JSON header", e);
        }
    }
}
