package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;

/**
 * A fetch answer's records, held by the window messages taken from it: one reference to the buffer for all of
 * them, released when the last lets go. Counted here, on the group's event loop, instead of a slice and an
 * atomic retain and release per message (a slice kept the whole buffer alive too, so memory is held as before).
 */
final class FetchedRecords {

    final ByteBuf buffer;
    private int holders;
    /** The thread that counts (the group's event loop): the count is a plain int. Checked with assertions on. */
    private final Thread countingThread = Thread.currentThread();

    /** Takes over one reference to {@code buffer}. */
    FetchedRecords(ByteBuf buffer) {
        this.buffer = buffer;
    }

    void hold() {
        assert Thread.currentThread() == countingThread : offLoop();
        holders++;
    }

    /** One holder is done with its record; the buffer is released with the last. */
    void letGo() {
        assert Thread.currentThread() == countingThread : offLoop();
        assert holders > 0 : "let go more often than held";
        if (--holders == 0) {
            buffer.release();
        }
    }

    private String offLoop() {
        return "fetched records counted on " + Thread.currentThread().getName() + ", created on "
            + countingThread.getName();
    }
}
