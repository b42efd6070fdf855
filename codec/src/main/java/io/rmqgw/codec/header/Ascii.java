package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;

/**
 * Byte-level helpers for the header codecs: UTF-8 encoding of char runs into a byte array, decimal
 * numbers written and parsed without Strings, and JSON string escaping. Nothing here allocates (but
 * the escaping of malformed UTF-8, which is rare).
 */
final class Ascii {

    /** Escape class per ASCII byte for JSON strings: 0 none, 'u' as \\u00XX, otherwise the short escape letter. */
    private static final byte[] JSON_ESCAPE = new byte[128];
    private static final byte[] HEX = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

    static {
        for (int c = 0; c < 0x20; c++) {
            JSON_ESCAPE[c] = 'u';
        }
        JSON_ESCAPE['\b'] = 'b';
        JSON_ESCAPE['\t'] = 't';
        JSON_ESCAPE['\n'] = 'n';
        JSON_ESCAPE['\f'] = 'f';
        JSON_ESCAPE['\r'] = 'r';
        JSON_ESCAPE['"'] = '"';
        JSON_ESCAPE['\\'] = '\\';
    }

    private Ascii() {
    }

    /** The most bytes {@code charCount} UTF-16 chars can take in UTF-8. */
    static int maxUtf8(int charCount) {
        return charCount * 3;
    }

    /**
     * Writes {@code chars[off, off+len)} as UTF-8 at {@code dst[pos]}; returns the position after it.
     * An unpaired surrogate becomes '?', as {@code String.getBytes(UTF_8)} and Netty's
     * {@code writeCharSequence} do, so the bytes equal what rocketmq-remoting writes.
     * {@code dst} must have room for {@link #maxUtf8(int)} bytes.
     */
    static int putUtf8(byte[] dst, int pos, char[] chars, int off, int len) {
        int end = off + len;
        int i = off;
        // ASCII run first: the common case for every header field
        while (i < end) {
            char c = chars[i];
            if (c >= 0x80) {
                break;
            }
            dst[pos++] = (byte) c;
            i++;
        }
        while (i < end) {
            char c = chars[i++];
            if (c < 0x80) {
                dst[pos++] = (byte) c;
            } else if (c < 0x800) {
                dst[pos++] = (byte) (0xC0 | (c >> 6));
                dst[pos++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i < end && Character.isLowSurrogate(chars[i])) {
                    int cp = Character.toCodePoint(c, chars[i++]);
                    dst[pos++] = (byte) (0xF0 | (cp >> 18));
                    dst[pos++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    dst[pos++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    dst[pos++] = (byte) (0x80 | (cp & 0x3F));
                } else {
                    dst[pos++] = '?';
                }
            } else {
                dst[pos++] = (byte) (0xE0 | (c >> 12));
                dst[pos++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                dst[pos++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        return pos;
    }

    /** As {@link #putUtf8(byte[], int, char[], int, int)} for a String (field names). */
    static int putUtf8(byte[] dst, int pos, String s) {
        int len = s.length();
        int i = 0;
        while (i < len) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                break;
            }
            dst[pos++] = (byte) c;
            i++;
        }
        if (i == len) {
            return pos;
        }
        char[] rest = s.substring(i).toCharArray(); // non-ASCII key: rare, allocation accepted
        return putUtf8(dst, pos, rest, 0, rest.length);
    }

    /** Bytes of the decimal form of {@code v}. */
    static int decimalLength(long v) {
        if (v < 0) {
            return v == Long.MIN_VALUE ? 20 : 1 + decimalLength(-v);
        }
        int n = 1;
        long limit = 10;
        while (n < 19 && v >= limit) {
            n++;
            limit *= 10;
        }
        return n;
    }

    /** Writes the decimal form of {@code v} at {@code dst[pos]}; returns the position after it. */
    static int putDecimal(byte[] dst, int pos, long v) {
        if (v == Long.MIN_VALUE) {
            byte[] min = {'-', '9', '2', '2', '3', '3', '7', '2', '0', '3', '6', '8', '5', '4', '7', '7', '5', '8', '0', '8'};
            System.arraycopy(min, 0, dst, pos, min.length);
            return pos + min.length;
        }
        if (v < 0) {
            dst[pos++] = '-';
            v = -v;
        }
        int end = pos + decimalLength(v);
        int at = end;
        do {
            dst[--at] = (byte) ('0' + (int) (v % 10));
            v /= 10;
        } while (v != 0);
        return end;
    }

    /**
     * Parses a decimal long from {@code length} bytes at {@code index} as {@link Long#parseLong} does
     * (optional sign, digits only, no overflow); returns {@code invalid} for anything else.
     */
    static long parseLong(ByteBuf buf, int index, int length, long invalid) {
        if (length <= 0) {
            return invalid;
        }
        int i = index;
        int end = index + length;
        boolean negative = false;
        byte first = buf.getByte(i);
        if (first == '-' || first == '+') {
            negative = first == '-';
            if (++i == end) {
                return invalid;
            }
        }
        // accumulate negatively so Long.MIN_VALUE parses, as Long.parseLong does
        long limit = negative ? Long.MIN_VALUE : -Long.MAX_VALUE;
        long multLimit = limit / 10;
        long result = 0;
        while (i < end) {
            int digit = buf.getByte(i++) - '0';
            if (digit < 0 || digit > 9 || result < multLimit) {
                return invalid;
            }
            result *= 10;
            if (result < limit + digit) {
                return invalid;
            }
            result -= digit;
        }
        return negative ? result : -result;
    }

    /** {@link Boolean#parseBoolean} on bytes: "true" in any case. */
    static boolean parseBoolean(ByteBuf buf, int index, int length) {
        return length == 4
            && (buf.getByte(index) | 0x20) == 't'
            && (buf.getByte(index + 1) | 0x20) == 'r'
            && (buf.getByte(index + 2) | 0x20) == 'u'
            && (buf.getByte(index + 3) | 0x20) == 'e';
    }

    /**
     * Writes UTF-8 bytes as the inside of a JSON string: quote, backslash and control characters
     * escaped, everything else (multi-byte sequences included) copied. Returns the position after it.
     * Bytes that are not well-formed UTF-8 are written as the JDK decodes them, each malformed sequence
     * a U+FFFD, which is what rocketmq-remoting makes of them (it reads binary header fields into
     * Strings): copied as they are, they would make the JSON unreadable. At most 6 bytes per input byte.
     */
    static int putJsonEscaped(byte[] dst, int pos, byte[] src, int off, int len) {
        int start = pos;
        for (int i = off, end = off + len; i < end; ) {
            byte b = src[i];
            if (b < 0) {
                int n = utf8SequenceLength(src, i, end);
                if (n < 0) {
                    byte[] decoded = new String(src, off, len, java.nio.charset.StandardCharsets.UTF_8)
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    return putJsonEscaped(dst, start, decoded, 0, decoded.length);
                }
                System.arraycopy(src, i, dst, pos, n);
                pos += n;
                i += n;
                continue;
            }
            byte e = JSON_ESCAPE[b];
            if (e == 0) {
                dst[pos++] = b;
            } else if (e == 'u') {
                dst[pos++] = '\\';
                dst[pos++] = 'u';
                dst[pos++] = '0';
                dst[pos++] = '0';
                dst[pos++] = HEX[(b >> 4) & 0xF];
                dst[pos++] = HEX[b & 0xF];
            } else {
                dst[pos++] = '\\';
                dst[pos++] = e;
            }
            i++;
        }
        return pos;
    }

    /**
     * Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing past
     * U+10FFFF) whose lead byte, not ASCII, is at {@code src[i]}; -1 when it is malformed or cut short.
     */
    static int utf8SequenceLength(byte[] src, int i, int end) {
        int lead = src[i] & 0xFF;
        int n;
        int min = 0x80;
        int max = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            n = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            n = 3;
            if (lead == 0xE0) {
                min = 0xA0;
            } else if (lead == 0xED) {
                max = 0x9F;
            }
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            n = 4;
            if (lead == 0xF0) {
                min = 0x90;
            } else if (lead == 0xF4) {
                max = 0x8F;
            }
        } else {
            return -1;
        }
        if (end - i < n) {
            return -1;
        }
        int second = src[i + 1] & 0xFF;
        if (second < min || second > max) {
            return -1;
        }
        for (int k = 2; k < n; k++) {
            if ((src[i + k] & 0xC0) != 0x80) {
                return -1;
            }
        }
        return n;
    }

    /** Writes an ASCII constant; returns the position after it. */
    static int put(byte[] dst, int pos, byte[] ascii) {
        System.arraycopy(ascii, 0, dst, pos, ascii.length);
        return pos + ascii.length;
    }

    static byte[] bytes(String ascii) {
        byte[] b = new byte[ascii.length()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) ascii.charAt(i);
        }
        return b;
    }
}
