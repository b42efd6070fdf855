package io.rmqgw.gateway.coalesce;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * The sends of one broker queue waiting to be coalesced: "Nagle off, batch while busy". At most one
 * request per queue is in flight. A send that finds the queue idle goes at once, alone (no added delay at
 * low load); sends arriving while a request is in flight wait, and when it is answered the waiting ones
 * go together, in arrival order, as the next request (up to the limits; the rest wait for the one after).
 *
 * <p>Because one request per queue is in flight and each takes a prefix of the waiting sends in arrival
 * order, a later batch never overtakes an earlier one and one connection's sends to the queue are stored
 * in the order they were read. Thread-safe: client connections on any event loop offer, the pooled
 * connection's loop reports answers; the lock is held only to move items, never while sending.
 *
 * @param <T> a waiting send
 */
final class QueueBatcher<T> {

    /** The limits a batch is taken with. */
    record Limits(int maxMessages, int maxBytes, long maxDelayNanos, int maxWaiting) {
    }

    private final ToIntFunction<T> bytes;
    private final ToLongFunction<T> arrivalNanos;
    private final ArrayDeque<T> waiting = new ArrayDeque<>();
    private boolean inFlight;

    QueueBatcher(ToIntFunction<T> bytes, ToLongFunction<T> arrivalNanos) {
        this.bytes = bytes;
        this.arrivalNanos = arrivalNanos;
    }

    /**
     * Takes {@code send}. Returns what the caller must send now (a request is then in flight for the caller
     * to report with {@link #answered}): {@code send} alone when the queue was idle; an empty list when it
     * waits; null when {@code limits.maxWaiting()} sends already wait (the caller refuses it, nothing taken).
     */
    synchronized List<T> offer(T send, Limits limits) {
        if (!inFlight) {
            // invariant: nothing waits while nothing is in flight
            inFlight = true;
            return List.of(send);
        }
        if (waiting.size() >= limits.maxWaiting()) {
            return null;
        }
        waiting.add(send);
        return List.of();
    }

    /**
     * The request in flight was answered (or failed). Returns the next batch to send (a request is in
     * flight again), or an empty list when nothing waits (the queue is idle).
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
        long firstArrival = arrivalNanos.applyAsLong(first);
        for (T next = waiting.peek(); next != null && batch.size() < limits.maxMessages(); next = waiting.peek()) {
            if (size + bytes.applyAsInt(next) > limits.maxBytes()
                || arrivalNanos.applyAsLong(next) - firstArrival > limits.maxDelayNanos()) {
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
