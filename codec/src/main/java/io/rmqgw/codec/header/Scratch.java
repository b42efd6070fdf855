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
    /** The array the last JSON entries read wrote into (may be a one-off larger array). */
    byte[] lastIn;
    /**
     * Per kind, which typed key followed which in the last JSON header of that kind read on this
     * thread ([0]: the first key; [slot + 1]: the key after {@code slot}; -1: no guess). Senders write
     * extFields in a stable order (their map's iteration order), so the guess lets jackson match the
     * next name byte for byte instead of looking it up.
     */
    private final int[][] follows = new int[HeaderKind.values().length][];

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

    int[] follows(HeaderKind kind) {
        int[] f = follows[kind.ordinal()];
        if (f == null) {
            f = new int[kind.keys.size() + 1];
            java.util.Arrays.fill(f, -1);
            follows[kind.ordinal()] = f;
        }
        return f;
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
