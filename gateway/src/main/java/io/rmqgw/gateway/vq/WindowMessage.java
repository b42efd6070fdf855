package io.rmqgw.gateway.vq;

/** One message of a window; mutable, owned by the group's event loop. */
final class WindowMessage {

    enum State {
        /** Waiting for a pull: never delivered (in its window's fresh queue) or to be redelivered. */
        AVAILABLE,
        /** Delivered on a virtual queue, not acknowledged yet. */
        LEASED,
        /** Delivered too often: waiting for, or in, its send to the DLQ. */
        DEAD_LETTER,
        /** Acknowledged (or dead-lettered): holds no bytes, only its place until the window slides past it. */
        ACKED,
        /** Its window was dropped (queue removed, group closed). */
        DROPPED
    }

    final Window window;
    final long offset;
    final int size;
    final long fetchedAtNanos;
    final int storedReconsumeTimes;
    /** Where RECONSUMETIMES is in the record (found when the record was checked). */
    final int reconsumeTimesAt;
    final long commitLogOffset;
    /** The fetch answer holding the stored record, at {@link #at}; null once acknowledged or dropped. */
    FetchedRecords source;
    /** The record's index in {@code source.buffer}. */
    final int at;
    State state = State.AVAILABLE;
    int deliveries;

    // the current lease, while LEASED
    VirtualQueue leasedOn;
    long virtualOffset;
    long holder;
    long deadlineNanos;

    // its place in the group's LeaseList, while LEASED
    WindowMessage olderLease;
    WindowMessage newerLease;
    boolean inLeaseList;

    /** DEAD_LETTER only: handed to the wiring by takeDeadLetters, outcome not reported yet. */
    boolean deadLetterReported;

    /** The record of {@code size} bytes at {@code at} of {@code source}, which it holds from now on. */
    WindowMessage(Window window, long offset, FetchedRecords source, int at, int size, int reconsumeTimesAt,
                  long fetchedAtNanos, int storedReconsumeTimes, long commitLogOffset) {
        this.window = window;
        this.offset = offset;
        source.hold();
        this.source = source;
        this.at = at;
        this.size = size;
        this.reconsumeTimesAt = reconsumeTimesAt;
        this.fetchedAtNanos = fetchedAtNanos;
        this.storedReconsumeTimes = storedReconsumeTimes;
        this.commitLogOffset = commitLogOffset;
    }

    /** Gives the record's bytes back; idempotent. */
    void releaseRecord() {
        if (source != null) {
            source.letGo();
            source = null;
            window.heldBytes -= size;
        }
    }

    @Override
    public String toString() {
        return window.queue + "@" + offset + " " + state + (state == State.LEASED
            ? " on " + leasedOn.id + "@" + virtualOffset + " by " + holder : "") + " x" + deliveries;
    }
}
