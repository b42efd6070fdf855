package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;

/**
 * The answer to a pull on a virtual queue.
 *
 * <p>{@code records} belongs to the caller, who passes it on (as the PULL_MESSAGE answer's body) or releases
 * it: the leased messages' stored records, copied and re-addressed (QUEUEID = the virtual queue,
 * QUEUEOFFSET = the virtual offset, RECONSUMETIMES raised by the redeliveries), every other byte as the broker
 * stored it. They are copies because the window keeps its own bytes for a redelivery, and a redelivery's
 * different offsets must never rewrite bytes still queued for another client's socket.
 *
 * @param status       what happened
 * @param virtualQueue the virtual queue pulled
 * @param deliveries   the leased messages, in record order (consecutive virtual offsets)
 * @param nextOffset   where the holder pulls next (the answer's nextBeginOffset); also the queue's head
 * @param records      the re-addressed records, owned by the caller; empty when nothing was leased
 */
public record Pull(Status status, int virtualQueue, List<Delivery> deliveries, long nextOffset, ByteBuf records) {

    /** What a pull found. */
    public enum Status {
        /** Messages were leased. */
        FOUND,
        /** Nothing is available: hold the pull (long polling) and try again when messages arrive. */
        NOTHING_AVAILABLE,
        /** The virtual queue already holds max-leases-per-queue leases: nothing more until some are acknowledged. */
        LEASE_LIMIT,
        /** No such virtual queue (at or past the current count, or negative). */
        NO_SUCH_QUEUE,
        /** The requested offset is negative or beyond any offset this gateway hands out. */
        OFFSET_INVALID
    }

    public Pull {
        // the group's own list is immutable already: copying it would make every Delivery
        deliveries = deliveries instanceof Deliveries ? deliveries : List.copyOf(deliveries);
    }

    static Pull empty(Status status, int virtualQueue, long nextOffset) {
        return new Pull(status, virtualQueue, List.of(), nextOffset, Unpooled.EMPTY_BUFFER);
    }

    /** Releases {@link #records} (for a caller that does not pass them on). */
    public void release() {
        records.release();
    }
}
