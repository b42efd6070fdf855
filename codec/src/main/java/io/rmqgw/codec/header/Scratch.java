package io.rmqgw.codec.header;

import io.netty.util.concurrent.FastThreadLocal;

/**
 * Per-thread byte arrays the codecs render into before one bulk copy into a ByteBuf: the hot loops
 * then run on plain arrays. Arrays larger than {@link #KEEP_LIMIT} are used once and not kept, so a
 * rare huge header does not pin memory on an event loop.
 */
final class Scratch {

    static final int KEEP_LIMIT = 64 * 1024;
    private static final int INITIAL = 2048;

    private static final FastThreadLocal<Scratch> LOCAL = new FastThreadLocal<>() {
        @Override
        protected Scratch initialValue() {
            return new Scratch();
        }
    };

    private byte[] in = new byte[INITIAL];
    private byte[] out = new byte[INITIAL];
    private byte[] src = new byte[INITIAL];
    /** The array the last render wrote into (may be a one-off larger array). */
    byte[] lastOut;

    private Scratch() {
    }

    static Scratch get() {
        return LOCAL.get();
    }

    byte[] in(int size) {
        if (in.length >= size) {
            return in;
        }
        byte[] grown = new byte[grow(in.length, size)];
        if (grown.length <= KEEP_LIMIT) {
            in = grown;
        }
        return grown;
    }

    /** Input copy of a direct header for the JSON parser (distinct from {@link #in}, which it fills). */
    byte[] src(int size) {
        if (src.length >= size) {
            return src;
        }
        byte[] grown = new byte[grow(src.length, size)];
        if (grown.length <= KEEP_LIMIT) {
            src = grown;
        }
        return grown;
    }

    byte[] out(int size) {
        if (out.length >= size) {
            return out;
        }
        byte[] grown = new byte[grow(out.length, size)];
        if (grown.length <= KEEP_LIMIT) {
            out = grown;
        }
        return grown;
    }

    /** Copies {@code a[0, used)} into an array of at least {@code size}, keeping it as "in" when small enough. */
    byte[] growIn(byte[] a, int used, int size) {
        byte[] grown = new byte[grow(a.length, size)];
        System.arraycopy(a, 0, grown, 0, used);
        if (grown.length <= KEEP_LIMIT) {
            in = grown;
        }
        return grown;
    }

    private static int grow(int current, int size) {
        int n = Math.max(current, 16);
        while (n < size && n > 0) {
            n <<= 1;
        }
        return n > 0 ? n : size;
    }
}
