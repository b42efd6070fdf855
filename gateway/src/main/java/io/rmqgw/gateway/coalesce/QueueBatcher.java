package io.rmqgw.gateway.coalesce;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The sends of one broker queue waiting to be coalesced: "Nagle off, batch while busy". At most
 * {@code maxInFlight} requests per queue are in flight. A send that finds a request slot free asks for a
 * drain ({@link Offer#DRAIN}); the drain, on the sending thread, takes the sends waiting by then as one batch
 * (so sends arriving while the drain is on its way go with it). Sends arriving while every slot is taken wait,
 * and when a request is answered the waiting ones go together, in arrival order, as the next request (up to
 * the limits; the rest wait for the one after). With a linger set, a send to an idle queue (nothing in flight)
 * waits that long for company instead ({@link Offer#LINGER}), but only while the queue is busy: its previous
 * batch held more than one send. So at low load (batches of one) nothing lingers and no delay is added; under
 * load the sends that reach an idle queue close together (sync senders answered by one batch come back
 * together) go as one batch instead of one going alone and the rest waiting for it. Nothing else splits a
 * batch: a slow broker answer makes batches larger, not smaller.
 *
 * <p>Order: each batch is a prefix of the sends waiting, in arrival order, so the batches taken, one after
 * the other, hold the sends in the order they were offered. The caller takes and writes batches on one
 * thread (the pooled connection's event loop), so they reach the connection in the order they were taken.
 * Thread-safe: client connections on any event loop offer; the lock is held only to move items, never while
 * sending.
 *
 * @param <T> a waiting send
 */
final class QueueBatcher<T> {

    /** The limits a batch is taken with; {@code lingerNanos} 0: an idle queue sends at once. */
    record Limits(int maxMessages, int maxBytes, long lingerNanos, int maxWaiting, int maxInFlight) {
    }

    /** What an offer asks of the caller. */
    enum Offer {
        /** Not taken: {@code maxWaiting} sends already wait; the caller refuses it. */
        REFUSED,
        /** Taken; it waits for a request slot or for a drain or linger already on its way: nothing to do. */
        WAITS,
        /** Taken, and a slot is free: the caller has {@link #take} called on the sending thread (a drain). */
        DRAIN,
        /**
         * Taken into a linger it opened (an idle queue whose last batch held more than one send): after the linger
         * the caller calls {@link #lingerEnded}, then drains.
         */
        LINGER
    }

    private final ToIntFunction<T> bytes;
    private final ArrayDeque<T> waiting = new ArrayDeque<>();
    private int inFlight;
    /** A drain was asked for and has not run yet: later sends wait for it instead of asking again. */
    private boolean drainOwed;
    private boolean lingering;
    /** The last batch taken held more than one send: the queue is busy, and a send to it when idle lingers. */
    private boolean lastBatchShared;

    QueueBatcher(ToIntFunction<T> bytes) {
        this.bytes = bytes;
    }

    /** Takes {@code send} (or refuses it) and says what the caller must do; see {@link Offer}. */
    synchronized Offer offer(T send, Limits limits) {
        if (waiting.size() >= limits.maxWaiting()) {
            return Offer.REFUSED;
        }
        waiting.add(send);
        // invariant: while sends wait and a slot is free, a drain or a linger is on its way
        if (drainOwed || lingering || inFlight >= limits.maxInFlight()) {
            return Offer.WAITS;
        }
        if (inFlight == 0 && limits.lingerNanos() > 0 && lastBatchShared) {
            lingering = true;
            return Offer.LINGER;
        }
        drainOwed = true;
        return Offer.DRAIN;
    }

    /**
     * A drain, on the sending thread: the next batch to send now (a request slot is then taken, to be given
     * back with {@link #answered}), or an empty list when nothing waits or no slot is free. The caller sends
     * each batch before taking the next, until this returns empty.
     */
    synchronized List<T> take(Limits limits) {
        drainOwed = false;
        if (lingering || waiting.isEmpty() || inFlight >= limits.maxInFlight()) {
            return List.of();
        }
        T first = waiting.poll();
        List<T> batch = new ArrayList<>(Math.min(limits.maxMessages(), waiting.size() + 1));
        batch.add(first);
        long size = bytes.applyAsInt(first);
        for (T next = waiting.peek(); next != null && batch.size() < limits.maxMessages(); next = waiting.peek()) {
            int b = bytes.applyAsInt(next);
            if (size + b > limits.maxBytes()) {
                break;
            }
            size += b;
            batch.add(waiting.poll());
        }
        inFlight++;
        lastBatchShared = batch.size() > 1;
        return batch;
    }

    /** A request of this queue was answered (or failed): its slot is free. The caller then drains. */
    synchronized void answered() {
        if (inFlight == 0) {
            throw new IllegalStateException("no request in flight");
        }
        inFlight--;
    }

    /** The linger ended: the sends waiting may go. The caller then drains. */
    synchronized void lingerEnded() {
        if (!lingering) {
            throw new IllegalStateException("no linger running");
        }
        lingering = false;
    }

    /** Sends waiting (not in flight). */
    synchronized int waiting() {
        return waiting.size();
    }

    /** Requests of this queue in flight. */
    synchronized int inFlight() {
        return inFlight;
    }
}
