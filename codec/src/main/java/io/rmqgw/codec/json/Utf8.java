package io.rmqgw.codec.json;

/** UTF-8 as the codec's JSON passes read and write it (RFC 3629: no overlong forms, surrogates or past U+10FFFF). Static only. */
final class Utf8 {

    private Utf8() {
    }

    /** Writes code point {@code cp} as UTF-8 at {@code o[w...]}; returns the end. */
    static int put(byte[] o, int w, int cp) {
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

    /** Length of the well-formed sequence at {@code a[p]} (a byte >= 0x80) that ends by {@code end}, or -1. */
    static int sequenceLength(byte[] a, int p, int end) {
        int lead = a[p] & 0xFF;
        int n;
        int min = 0x80;
        int max = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            n = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            n = 3;
            min = lead == 0xE0 ? 0xA0 : 0x80;
            max = lead == 0xED ? 0x9F : 0xBF;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            n = 4;
            min = lead == 0xF0 ? 0x90 : 0x80;
            max = lead == 0xF4 ? 0x8F : 0xBF;
        } else {
            return -1;
        }
        if (end - p < n || (a[p + 1] & 0xFF) < min || (a[p + 1] & 0xFF) > max) {
            return -1;
        }
        for (int k = 2; k < n; k++) {
            if ((a[p + k] & 0xC0) != 0x80) {
                return -1;
            }
        }
        return n;
    }

    /** Whether {@code a[off, end)} is well-formed UTF-8. */
    static boolean wellFormed(byte[] a, int off, int end) {
        for (int i = off; i < end; ) {
            if (a[i] >= 0) {
                i++;
                continue;
            }
            int n = sequenceLength(a, i, end);
            if (n < 0) {
                return false;
            }
            i += n;
        }
        return true;
    }
}
