package io.rmqgw.codec.json;

/**
 * A thread's reusable transcoder, whose result (in its arrays) stays valid until its next one. Each result
 * gets a new stamp: whoever keeps the stamp with the transcoder (a frame, for the header it was read from)
 * can later tell, with no lookup, whether the transcoder still holds that result ({@link #holds(long)}).
 */
public abstract class ThreadScratch {

    private final Thread owner = Thread.currentThread();
    private long stamp;

    ThreadScratch() {
    }

    /** Starts a new result (or drops the current one): every stamp taken before no longer holds. */
    final void renew() {
        stamp++;
    }

    /** The current result's stamp. */
    public final long stamp() {
        return stamp;
    }

    /**
     * Whether the result stamped {@code stamp} is still the current one, asked on the owner thread (on any
     * other thread: false, without reading anything the owner writes).
     */
    public final boolean holds(long stamp) {
        return owner == Thread.currentThread() && this.stamp == stamp;
    }
}
