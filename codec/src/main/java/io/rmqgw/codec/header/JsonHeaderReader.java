package io.rmqgw.codec.header;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.SerializedString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.json.JsonHeaderStream;
import java.io.IOException;
import java.util.Arrays;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The general JSON reader, for the headers the single-pass {@link io.rmqgw.codec.json.JsonToBinary}
 * leaves to it (unusual or malformed ones): it reads them or refuses them with a reason.
 * Reads a JSON header with jackson-core's streaming parser straight from the frame's bytes: no
 * String of the header, no tree. The parser is the thread's reused one ({@link JsonHeaderStream}).
 * Names are matched without a lookup where they can be: the top-level fields are tried in the order
 * fastjson writes them, and each typed extFields key in the order the last header of its kind had
 * (a sender's map order is stable), with {@code nextFieldName(SerializableString)}, which compares
 * the input bytes directly. Any other name comes back canonicalized and interned (no allocation once
 * seen) and a typed key is then found by a hash probe. Values are read as char runs from the parser's
 * own buffer and written as UTF-8 straight into the binary entry layout, so a value becomes a String
 * only if someone asks for it.
 */
final class JsonHeaderReader {

    private static final char[] TRUE = {'t', 'r', 'u', 'e'};
    private static final char[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final LanguageCode[] LANGUAGES = LanguageCode.values();
    private static final int UNKNOWN_KEY = -2;

    /** Top-level fields in the order fastjson writes them (alphabetical); remark, when present, comes after opaque. */
    private static final SerializedString[] TOP_LEVEL = {
        new SerializedString("code"), new SerializedString("extFields"), new SerializedString("flag"),
        new SerializedString("language"), new SerializedString("opaque"), new SerializedString("serializeTypeCurrentRPC"),
        new SerializedString("version"),
    };

    /** After a field out of the expected order: expect the one that follows it, if it is one of ours. */
    private static int resync(String name, int expect) {
        for (int i = 0; i < TOP_LEVEL.length; i++) {
            if (TOP_LEVEL[i].getValue().equals(name)) {
                return i + 1;
            }
        }
        return expect;
    }

    private JsonHeaderReader() {
    }

    static CommandHeader read(ByteBuf header, HeaderKind kind, ByteBufAllocator alloc) {
        return read(header, header.readerIndex(), header.readableBytes(), kind, alloc);
    }

    static CommandHeader read(ByteBuf header, int index, int length, HeaderKind kind, ByteBufAllocator alloc) {
        JsonHeaderStream in = JsonHeaderStream.get();
        try {
            JsonParser p = in.begin(header, index, length);
            return parse(p, in, length, kind, alloc);
        } catch (JsonProcessingException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
        } catch (IllegalStateException e) {
            // jackson's symbol table refuses field names flooding one hash bucket
            throw new MalformedFrameException(MalformedReason.INVALID_JSON, e.getMessage(), e);
        } finally {
            in.release();
        }
    }

    private static CommandHeader parse(JsonParser p, JsonHeaderStream in, int length, HeaderKind kind,
                                       ByteBufAllocator alloc) throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.START_OBJECT) {
            throw malformed(t == null ? "JSON header is empty" : "JSON header is not an object");
        }
        CommandHeader h = kind.newHeader();
        Arrays.fill(h.slots, -1);
        Scratch scratch = Scratch.get();
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
        int expect = 0;
        while (true) {
            String name;
            if (expect < TOP_LEVEL.length) {
                // fastjson writes the top-level fields in this order: a byte compare each, no name lookup
                if (p.nextFieldName(TOP_LEVEL[expect])) {
                    name = TOP_LEVEL[expect++].getValue();
                } else if (p.currentToken() == JsonToken.FIELD_NAME) {
                    name = p.currentName();
                    expect = resync(name, expect);
                } else {
                    break;
                }
            } else if ((name = p.nextFieldName()) == null) {
                break;
            }
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
                        throw malformed("\"extFields\" is not an object");
                    }
                    extPresent = true;
                    n = entries(p, h, kind, scratch, a, n); // a second extFields object adds to the first
                    a = scratch.lastIn;
                }
                default -> p.skipChildren();
            }
        }
        if (p.currentToken() != JsonToken.END_OBJECT) {
            throw malformed("unexpected " + p.currentToken());
        }
        if (!in.end()) {
            throw malformed("JSON header has trailing content");
        }
        if (!sawCode) {
            throw new MalformedFrameException(MalformedReason.MISSING_FIELD, "JSON header has no \"code\"");
        }
        h.source = SerializeType.JSON;
        h.code = code;
        h.language = language;
        h.version = version;
        h.opaque = opaque;
        h.flag = flag;
        h.remark = remark;
        h.extPresent = extPresent;
        return withImage(h, a, n, alloc);
    }

    /** The entries in {@code a[0, n)} as the header's image: a pooled heap buffer of exactly that size. */
    private static CommandHeader withImage(CommandHeader h, byte[] a, int n, ByteBufAllocator alloc) {
        ByteBuf image = alloc.heapBuffer(n); // typed reads then index an array
        image.writeBytes(a, 0, n);
        h.image = image;
        h.entriesStart = 0;
        h.entriesEnd = n;
        return h;
    }

    /**
     * Reads the fields of the extFields object the parser has just entered, appending each as a binary
     * entry to {@code a} from {@code n} on and filling {@code h}'s typed slots and entry count. Returns
     * the new end; the array written (grown if needed) is left in {@code scratch.lastIn}.
     */
    private static int entries(JsonParser p, CommandHeader h, HeaderKind kind, Scratch scratch, byte[] a, int n)
        throws IOException {
        KeyTable keys = kind.keys;
        int[] slots = h.slots;
        int count = h.entryCount;
        int[] follows = keys.size() > 0 ? scratch.follows(kind) : null;
        int prev = -1; // slot of the previous key (-1: none yet), or UNKNOWN_KEY
        while (true) {
            String key;
            int slot;
            int guess = follows != null && prev != UNKNOWN_KEY ? follows[prev + 1] : -1;
            if (guess >= 0 && p.nextFieldName(keys.serialized(guess))) {
                slot = guess;
                key = null; // known: its bytes are in the table
            } else {
                if (guess >= 0) {
                    if (p.currentToken() != JsonToken.FIELD_NAME) {
                        break;
                    }
                    key = p.currentName();
                } else if ((key = p.nextFieldName()) == null) {
                    break;
                }
                slot = follows != null ? keys.slot(key) : -1;
                if (follows != null && prev != UNKNOWN_KEY && slot >= 0) {
                    follows[prev + 1] = slot; // guess this order next time
                }
            }
            prev = slot >= 0 ? slot : UNKNOWN_KEY;
            JsonToken t = p.nextToken();
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
                default -> throw malformed("extFields." + (key != null ? key : keys.name(slot)) + " is not a scalar");
            }
            byte[] known = slot >= 0 ? keys.keyBytes(slot) : null;
            int need = n + 6 + (known != null ? known.length : Ascii.maxUtf8(key.length())) + Ascii.maxUtf8(len);
            if (need > a.length) {
                a = scratch.growIn(a, n, need);
            }
            int keyAt = n;
            if (known != null) {
                System.arraycopy(known, 0, a, n + 2, known.length);
                n += 2 + known.length;
                slots[slot] = keyAt; // the last occurrence wins, as in the receiver's map
            } else {
                n = Ascii.putUtf8(a, n + 2, key);
            }
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
            count++;
        }
        h.entryCount = count;
        scratch.lastIn = a;
        return n;
    }

    private static int intValue(JsonParser p, JsonToken t, String name) throws IOException {
        if (t != JsonToken.VALUE_NUMBER_INT) {
            throw malformed("\"" + name + "\" is not an integer");
        }
        return p.getIntValue();
    }

    private static byte language(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.VALUE_STRING) {
            p.skipChildren();
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
            default -> throw malformed("\"remark\" is not a scalar");
        };
    }

    private static MalformedFrameException malformed(String detail) {
        return new MalformedFrameException(MalformedReason.INVALID_JSON, detail);
    }
}
