package io.rmqgw.gateway.coalesce;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The sends of one broker queue waiting to be coalesced: "Nagle off, batch while busy". At most one
 * request per queue is in flight. A send that finds the queue idle goes at once, alone (no added delay at
 * low load), unless a linger is set: then it waits that long for company, as if a request were in flight.
 * Sends arriving while a request is in flight (or during the linger) wait, and when it is answered (or the
 * linger ends) the waiting ones go together, in arrival order, as the next request (up to the limits; the
 * rest wait for the one after). Nothing else splits a batch: a slow broker answer makes batches larger, not
 * smaller.
 *
 * <p>Because one request per queue is in flight and each takes a prefix of the waiting sends in arrival
 * order, a later batch never overtakes an earlier one and one connection's sends to the queue are stored
 * in the order they were read. Thread-safe: client connections on any event loop offer, the pooled
 * connection's loop reports answers; the lock is held only to move items, never while sending.
 *
 * @param <T> a waiting send
 */
final class QueueBatcher<T> {

    /** The limits a batch is taken with; {@code lingerNanos} 0: an idle queue sends at once. */
    record Limits(int maxMessages, int maxBytes, long lingerNanos, int maxWaiting) {
    }

    /**
     * What an offer asks of the caller: send {@code now} (may be empty), and when {@code linger} is set,
     * call {@link #answered} after the linger (the send opened a linger window and waits in it).
     */
    record Offered<T>(List<T> now, boolean linger) {
    }

    private final ToIntFunction<T> bytes;
    private final ArrayDeque<T> waiting = new ArrayDeque<>();
    private boolean inFlight;

    QueueBatcher(ToIntFunction<T> bytes) {
        this.bytes = bytes;
    }

    /**
     * Takes {@code send}. Returns what the caller must send now (a request is then in flight for the caller
     * to report with {@link #answered}): {@code send} alone when the queue was idle; nothing when it waits
     * (behind the request in flight, or in the linger it opened: {@code linger} set); null when
     * {@code limits.maxWaiting()} sends already wait (the caller refuses it, nothing taken).
     */
    synchronized Offered<T> offer(T send, Limits limits) {
        if (!inFlight) {
            // invariant: nothing waits while nothing is in flight (a linger counts as in flight)
            inFlight = true;
            if (limits.lingerNanos() > 0) {
                waiting.add(send);
                return new Offered<>(List.of(), true);
            }
            return new Offered<>(List.of(send), false);
        }
        if (waiting.size() >= limits.maxWaiting()) {
            return null;
        }
        waiting.add(send);
        return new Offered<>(List.of(), false);
    }

    /**
     * The request in flight was answered (or failed), or the linger ended. Returns the next batch to send (a
     * request is in flight again), or an empty list when nothing waits (the queue is idle).
     */
    synchronized List<T> answered(Limits limits) {
        if (!inFlight) {
            throw new IllegalStateException("no request in flight");
        }
        if (waiting.isEmpty()) {
            inFlight = false;
            return List.of();
        }
        T first = waiting.poll();
        List<T> batch = new ArrayList<>(Math.min(limits.maxMessages(), waiting.size() + 1));
        batch.add(first);
        long size = bytes.applyAsInt(first);
        for (T next = waiting.peek(); next != null && batch.size() < limits.maxMessages(); next = waiting.peek()) {
            if (size + bytes.applyAsInt(next) > limits.maxBytes()) {
                break;
            }
            size += bytes.applyAsInt(next);
            batch.add(waiting.poll());
        }
        return batch;
    }

    /** Sends waiting (not in flight). */
    synchronized int waiting() {
        return waiting.size();
    }

    /** Whether a request of this queue is in flight. */
    synchronized boolean inFlight() {
        return inFlight;
    }
}
