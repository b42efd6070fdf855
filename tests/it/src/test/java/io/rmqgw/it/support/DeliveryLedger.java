package io.rmqgw.it.support;

import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The loss checker of a run: the key of every send the broker acknowledged (recorded by the producer) and how
 * often each key was received (recorded by the consumers, in this JVM or read from a forked consumer's
 * "received" lines). Lost: acknowledged and never received. Duplicates: deliveries past a key's first.
 */
public final class DeliveryLedger {

    private final Set<String> sent = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicInteger> received = new ConcurrentHashMap<>();

    public void sent(String key) {
        sent.add(key);
    }

    public void received(String key) {
        received.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }

    public void receivedAll(Collection<String> keys) {
        keys.forEach(this::received);
    }

    public int sentCount() {
        return sent.size();
    }

    /** Acknowledged sends never received (so far). */
    public Set<String> missing() {
        Set<String> missing = new HashSet<>(sent);
        missing.removeAll(received.keySet());
        return missing;
    }

    /** Keys received that were never acknowledged: sends answered as failed (or timed out) that were stored. */
    public Set<String> receivedUnacknowledged() {
        Set<String> extra = new HashSet<>(received.keySet());
        extra.removeAll(sent);
        return extra;
    }

    /** Deliveries past each key's first, summed. */
    public long duplicates() {
        return received.values().stream().mapToLong(n -> Math.max(0, n.get() - 1)).sum();
    }

    /** Keys received more than once. */
    public long duplicatedKeys() {
        return received.values().stream().filter(n -> n.get() > 1).count();
    }

    public long deliveries() {
        return received.values().stream().mapToLong(AtomicInteger::get).sum();
    }

    /** A ledger with this one's sends and no receipts (to add the receipts of processes read at the end). */
    public DeliveryLedger sendsOnly() {
        DeliveryLedger copy = new DeliveryLedger();
        copy.sent.addAll(sent);
        return copy;
    }

    /** Adds every receipt of {@code other}. */
    public void add(DeliveryLedger other) {
        other.received.forEach((k, n) -> received.computeIfAbsent(k, x -> new AtomicInteger()).addAndGet(n.get()));
    }

    @Override
    public String toString() {
        return "sent " + sent.size() + ", received " + received.size() + " distinct in " + deliveries()
            + " deliveries, missing " + missing().size() + ", duplicates " + duplicates();
    }
}
