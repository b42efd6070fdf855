package io.rmqgw.codec.header;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.async.ByteArrayFeeder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.MalformedReason;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Reads a JSON header with jackson-core's streaming parser straight from the frame's bytes: no
 * String of the header, no tree. Field names come back canonicalized (no allocation once seen);
 * values are read as char runs from the parser's own buffer and written as UTF-8 straight into the
 * binary entry layout, so a value becomes a String only if someone asks for it.
 *
 * <p>A heap header is parsed in place; a direct one is first copied (one bulk copy) into a per-thread
 * array, which is cheaper than a ByteBuffer view of a pooled derived buffer (two objects per call).
 * One non-blocking parser per thread is reused from header to header: each header is fed as the
 * next root-level value of an endless stream, which saves the parser, context and buffer
 * allocations a fresh parser costs per frame. A header that fails to parse discards the parser (its
 * state is unknown), and the parser is renewed after {@link #RENEW_AFTER_BYTES} of input so that
 * its field-name table cannot grow without bound from unknown keys.
 */
final class JsonHeaderReader {

    static final long RENEW_AFTER_BYTES = 1L << 20;

    private static final JsonFactory FACTORY = JsonFactory.builder().build();
    private static final byte[] NO_INPUT = new byte[0];
    private static final OutputStream DISCARD = OutputStream.nullOutputStream();
    private static final char[] TRUE = {'t', 'r', 'u', 'e'};
    private static final char[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final LanguageCode[] LANGUAGES = LanguageCode.values();

    private static final FastThreadLocal<JsonHeaderReader> LOCAL = new FastThreadLocal<>() {
        @Override
        protected JsonHeaderReader initialValue() {
            return new JsonHeaderReader();
        }

        @Override
        protected void onRemoval(JsonHeaderReader reader) {
            reader.discard();
        }
    };

    private final Scratch scratch = Scratch.get();
    private JsonParser parser;
    private ByteArrayFeeder feeder;
    private long fed;
    /** Parsers created by this thread's reader so far (tests check renewal and recovery). */
    int generation;

    private JsonHeaderReader() {
    }

    static JsonHeaderReader get() {
        return LOCAL.get();
    }

    static CommandHeader read(ByteBuf header, HeaderKind kind, ByteBufAllocator alloc) {
        return LOCAL.get().decode(header, header.readerIndex(), header.readableBytes(), kind, alloc);
    }

    static CommandHeader read(ByteBuf header, int index, int length, HeaderKind kind, ByteBufAllocator alloc) {
        return LOCAL.get().decode(header, index, length, kind, alloc);
    }

    CommandHeader decode(ByteBuf header, int index, int length, HeaderKind kind, ByteBufAllocator alloc) {
        if (parser == null || fed > RENEW_AFTER_BYTES) {
            renew();
        }
        boolean clean = false;
        try {
            if (header.hasArray()) {
                int start = header.arrayOffset() + index;
                feeder.feedInput(header.array(), start, start + length);
            } else {
                // direct memory: one bulk copy into a per-thread array; jackson then reads a plain byte[]
                byte[] src = scratch.src(length);
                header.getBytes(index, src, 0, length);
                feeder.feedInput(src, 0, length);
            }
            fed += length;
            CommandHeader h = parse(parser, scratch, header, index, length, kind, alloc);
            feeder.feedInput(NO_INPUT, 0, 0); // drop the reference to the input
            clean = true;
            return h;
        } catch (JsonProcessingException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
        } catch (IllegalStateException e) {
            // jackson's symbol table refuses field names flooding one hash bucket
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
        } finally {
            if (!clean) {
                discard();
            }
        }
    }

    private void renew() {
        discard();
        try {
            parser = FACTORY.createNonBlockingByteArrayParser();
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a JSON parser", e);
        }
        feeder = (ByteArrayFeeder) parser.getNonBlockingInputFeeder();
        fed = 0;
        generation++;
    }

    private void discard() {
        if (parser != null) {
            try {
                parser.close();
            } catch (IOException ignored) {
                // nothing is written anywhere: closing only returns buffers
            }
            parser = null;
            feeder = null;
        }
    }

    private static CommandHeader parse(JsonParser p, Scratch scratch, ByteBuf header, int index, int length,
                                       HeaderKind kind, ByteBufAllocator alloc) throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.START_OBJECT) {
            throw malformed(t == JsonToken.NOT_AVAILABLE ? "JSON header is empty" : "JSON header is not an object");
        }
        byte[] a = scratch.in(Math.max(256, length + 64));
        int n = 0;
        int code = 0;
        boolean sawCode = false;
        byte language = LanguageCode.JAVA.getCode(); // RemotingCommand's default when the field is absent
        int version = 0;
        int opaque = 0;
        int flag = 0;
        String remark = null;
        boolean extPresent = false;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            t = p.nextToken();
            switch (name) {
                case "code" -> {
                    code = intValue(p, t, name);
                    sawCode = true;
                }
                case "opaque" -> opaque = intValue(p, t, name);
                case "flag" -> flag = intValue(p, t, name);
                case "version" -> version = intValue(p, t, name);
                case "language" -> language = language(p, t);
                case "remark" -> remark = remark(p, t);
                case "extFields" -> {
                    if (t == JsonToken.VALUE_NULL) {
                        break;
                    }
                    if (t != JsonToken.START_OBJECT) {
                        throw malformed(t == JsonToken.NOT_AVAILABLE ? "JSON header is truncated" : "\"extFields\" is not an object");
                    }
                    extPresent = true;
                    while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                        String key = p.currentName();
                        t = p.nextToken();
                        char[] chars;
                        int off;
                        int len;
                        switch (t) {
                            case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                                chars = p.getTextCharacters();
                                off = p.getTextOffset();
                                len = p.getTextLength();
                            }
                            case VALUE_TRUE -> {
                                chars = TRUE;
                                off = 0;
                                len = TRUE.length;
                            }
                            case VALUE_FALSE -> {
                                chars = FALSE;
                                off = 0;
                                len = FALSE.length;
                            }
                            case VALUE_NULL -> {
                                continue; // dropped, as RemotingCommand drops null values
                            }
                            case NOT_AVAILABLE -> throw malformed("JSON header is truncated");
                            default -> throw malformed("extFields." + key + " is not a scalar");
                        }
                        int need = n + 6 + Ascii.maxUtf8(key.length()) + Ascii.maxUtf8(len);
                        if (need > a.length) {
                            a = scratch.growIn(a, n, need);
                        }
                        int keyAt = n;
                        n = Ascii.putUtf8(a, n + 2, key);
                        int keyLength = n - keyAt - 2;
                        if (keyLength > Short.MAX_VALUE) {
                            throw malformed("extFields key of " + keyLength + " bytes cannot be carried (binary limit "
                                + Short.MAX_VALUE + ")");
                        }
                        a[keyAt] = (byte) (keyLength >> 8);
                        a[keyAt + 1] = (byte) keyLength;
                        int valueAt = n;
                        n = Ascii.putUtf8(a, n + 4, chars, off, len);
                        int valueLength = n - valueAt - 4;
                        a[valueAt] = (byte) (valueLength >> 24);
                        a[valueAt + 1] = (byte) (valueLength >> 16);
                        a[valueAt + 2] = (byte) (valueLength >> 8);
                        a[valueAt + 3] = (byte) valueLength;
                    }
                    if (t != JsonToken.END_OBJECT) {
                        throw malformed("JSON header is truncated");
                    }
                }
                default -> skip(p, t);
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw malformed(t == JsonToken.NOT_AVAILABLE ? "JSON header is truncated" : "unexpected " + t);
        }
        checkNothingFollows(p, header, index + length);
        if (!sawCode) {
            throw new MalformedFrameException(MalformedReason.MISSING_FIELD, "JSON header has no \"code\"");
        }
        CommandHeader h = kind.newHeader();
        h.index(a, 0, n, 0);
        ByteBuf image = alloc.heapBuffer(n); // typed reads then index an array
        image.writeBytes(a, 0, n);
        h.source = SerializeType.JSON;
        h.code = code;
        h.language = language;
        h.version = version;
        h.opaque = opaque;
        h.flag = flag;
        h.remark = remark;
        h.extPresent = extPresent;
        h.image = image;
        h.entriesStart = 0;
        h.entriesEnd = n;
        return h;
    }

    /**
     * The root object must end the header: trailing whitespace is consumed, anything else is
     * refused (it would otherwise be read as the start of the next header).
     */
    private static void checkNothingFollows(JsonParser p, ByteBuf header, int end) throws IOException {
        int rest = p.releaseBuffered(DISCARD);
        if (rest == 0) {
            return;
        }
        for (int i = end - rest; i < end; i++) {
            byte b = header.getByte(i);
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                throw malformed("JSON header has trailing content");
            }
        }
        p.nextToken(); // consumes the whitespace; the parser stays at the root, ready for the next header
        if (p.releaseBuffered(DISCARD) != 0) {
            throw malformed("JSON header has trailing content");
        }
    }

    private static void skip(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.NOT_AVAILABLE) {
            throw malformed("JSON header is truncated");
        }
        if (t != JsonToken.START_OBJECT && t != JsonToken.START_ARRAY) {
            return;
        }
        // JsonParser.skipChildren would spin on NOT_AVAILABLE: a truncated header must fail instead
        int depth = 1;
        while (depth > 0) {
            JsonToken next = p.nextToken();
            if (next == JsonToken.NOT_AVAILABLE || next == null) {
                throw malformed("JSON header is truncated");
            }
            if (next == JsonToken.START_OBJECT || next == JsonToken.START_ARRAY) {
                depth++;
            } else if (next == JsonToken.END_OBJECT || next == JsonToken.END_ARRAY) {
                depth--;
            }
        }
    }

    private static int intValue(JsonParser p, JsonToken t, String name) throws IOException {
        if (t != JsonToken.VALUE_NUMBER_INT) {
            throw malformed(t == JsonToken.NOT_AVAILABLE ? "JSON header is truncated" : "\"" + name + "\" is not an integer");
        }
        return p.getIntValue();
    }

    private static byte language(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.VALUE_STRING) {
            skip(p, t);
            return LanguageCode.OTHER.getCode();
        }
        char[] chars = p.getTextCharacters();
        int off = p.getTextOffset();
        int len = p.getTextLength();
        for (LanguageCode l : LANGUAGES) {
            String name = l.name();
            if (name.length() == len && sameChars(name, chars, off)) {
                return l.getCode();
            }
        }
        return LanguageCode.OTHER.getCode();
    }

    private static boolean sameChars(String s, char[] chars, int off) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) != chars[off + i]) {
                return false;
            }
        }
        return true;
    }

    private static String remark(JsonParser p, JsonToken t) throws IOException {
        return switch (t) {
            case VALUE_NULL -> null;
            case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT, VALUE_TRUE, VALUE_FALSE -> p.getText();
            case NOT_AVAILABLE -> throw malformed("JSON header is truncated");
            default -> throw malformed("\"remark\" is not a scalar");
        };
    }

    private static MalformedFrameException malformed(String detail) {
        return new MalformedFrameException(MalformedReason.INVALID_JSON, detail);
    }
}
