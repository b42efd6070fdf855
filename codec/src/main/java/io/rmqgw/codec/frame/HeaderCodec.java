package io.rmqgw.codec.frame;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Reads and writes the two header encodings directly on ByteBufs. JSON is read with a streaming
 * parser straight from the buffer; ROCKETMQ binary by fixed offsets. Every length is checked
 * against the header's own length, so a lying field is a {@link MalformedFrameException}, never an
 * out-of-bounds read of the next frame's bytes.
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

    static Envelope decodeEnvelope(SerializeType type, ByteBuf header) {
        return type == SerializeType.ROCKETMQ ? binaryEnvelope(header) : jsonEnvelope(header);
    }

    /** Decodes remark and extFields too. The frame is not released. */
    public static RemotingHeader decodeHeader(RemotingFrame frame) {
        ByteBuf header = frame.headerSlice();
        return frame.encoding() == SerializeType.ROCKETMQ ? decodeBinary(header) : decodeJson(header);
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
        int base = header.readerIndex();
        int length = header.readableBytes();
        if (length < BINARY_MIN_LENGTH) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
                "binary header of " + length + " bytes is shorter than the fixed fields (" + BINARY_MIN_LENGTH + ")");
        }
        validateBinaryVariableFields(header, base, length);
        return new Envelope(header.getShort(base), language(header.getByte(base + 2)), header.getShort(base + 3),
            header.getInt(base + 5), header.getInt(base + 9));
    }

    /** Walks remark and every extFields entry by length only: no strings are built. */
    private static void validateBinaryVariableFields(ByteBuf header, int base, int length) {
        int end = base + length;
        int pos = base + BINARY_REMARK_OFFSET;
        int remarkLength = header.getInt(pos);
        pos += 4;
        if (remarkLength < 0 || remarkLength > end - pos - 4) {
            throw new MalformedFrameException(MalformedReason.TRUNCATED_BINARY_FIELD,
                "remark length " + remarkLength + " runs past the header (" + length + " bytes)");
        }
        pos += remarkLength;
        int extLength = header.getInt(pos);
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
            int keyLength = header.getShort(pos);
            pos += 2;
            if (keyLength < 0 || keyLength > extEnd - pos - 4) {
                throw truncatedEntry(pos - base);
            }
            pos += keyLength;
            int valueLength = header.getInt(pos);
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

    private static LanguageCode language(byte code) {
        LanguageCode language = LanguageCode.valueOf(code);
        return language == null ? LanguageCode.OTHER : language;
    }

    // ---- JSON ----

    private static JsonParser parser(ByteBuf header) throws IOException {
        if (header.hasArray()) {
            return JSON.createParser(header.array(), header.arrayOffset() + header.readerIndex(), header.readableBytes());
        }
        return JSON.createParser((java.io.InputStream) new ByteBufInputStream(header.duplicate()));
    }

    private static Envelope jsonEnvelope(ByteBuf header) {
        int code = -1;
        LanguageCode language = LanguageCode.OTHER;
        int version = 0;
        int opaque = 0;
        int flag = 0;
        boolean sawCode = false;
        try (JsonParser p = parser(header)) {
            expectObjectStart(p);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
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
                    default -> p.skipChildren();
                }
            }
            expectEnd(p);
        } catch (IOException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, describe(e), e);
        } catch (IllegalStateException e) {
            // Jackson's symbol table refuses field names flooding one hash bucket
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
        }
        if (!sawCode) {
            throw new MalformedFrameException(MalformedReason.MISSING_FIELD, "JSON header has no \"code\"");
        }
        return new Envelope(code, language, version, opaque, flag);
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
        try (JsonParser p = parser(header)) {
            expectObjectStart(p);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
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
            expectEnd(p);
        } catch (IOException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, describe(e), e);
        } catch (IllegalStateException e) {
            // Jackson's symbol table refuses field names flooding one hash bucket
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
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
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
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
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, "JSON header is not an object");
        }
    }

    private static void expectEnd(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
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
        String name = p.getText();
        for (LanguageCode language : LanguageCode.values()) {
            if (language.name().equals(name)) {
                return language;
            }
        }
        return LanguageCode.OTHER;
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
