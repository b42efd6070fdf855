package io.rmqgw.codec.header;

/**
 * Released headers kept by the thread that decoded them, per kind, in front of the kind's Netty
 * recycler: a header transcoded from JSON is taken from here and, released on the same thread, goes
 * back here, without the recycler's thread-local lookup and atomic state change. Kept in the thread's
 * {@link io.rmqgw.codec.json.JsonToBinary} (which that decode holds anyway); a header released on
 * another thread, or finding its kind's spares full, goes to the recycler as before.
 */
final class SpareHeaders {

    private static final int PER_KIND = 8;

    private final Thread owner = Thread.currentThread();
    private final CommandHeader[][] spares = new CommandHeader[HeaderKind.values().length][PER_KIND];
    private final int[] counts = new int[spares.length];

    /** The transcoder's spares, made on the first use on its thread. */
    static SpareHeaders of(io.rmqgw.codec.json.JsonToBinary t) {
        Object a = t.attachment();
        if (a instanceof SpareHeaders s) {
            return s;
        }
        SpareHeaders s = new SpareHeaders();
        t.attach(s);
        return s;
    }

    /** A spare header of {@code kind}, or null. */
    CommandHeader take(HeaderKind kind) {
        int k = kind.ordinal();
        int n = counts[k];
        if (n == 0) {
            return null;
        }
        CommandHeader[] stack = spares[k];
        CommandHeader h = stack[--n];
        stack[n] = null;
        counts[k] = n;
        return h;
    }

    /** Keeps {@code h} (recycled) when called on the owner thread with room left; false: recycle it elsewhere. */
    boolean keep(CommandHeader h) {
        if (Thread.currentThread() != owner) {
            return false;
        }
        int k = h.kind.ordinal();
        int n = counts[k];
        if (n == PER_KIND) {
            return false;
        }
        spares[k][n] = h;
        counts[k] = n + 1;
        return true;
    }
}
