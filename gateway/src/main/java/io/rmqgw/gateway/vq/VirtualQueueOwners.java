package io.rmqgw.gateway.vq;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which client owns each virtual queue of a served group: the holder that last started on it (QUERY_CONSUMER_OFFSET,
 * which a client sends when its rebalance makes the queue its own). Only the owner's pulls lease there; none is known
 * before any start (a client that kept its queues across a gateway restart pulls without asking again). On the
 * virtual queues' loop.
 */
final class VirtualQueueOwners {

    private static final Logger log = LoggerFactory.getLogger(VirtualQueueOwners.class);

    /**
     * A client whose pulls on a virtual queue are refused for this long, while the queue's owner neither pulled nor
     * committed there, becomes its owner: the owner's start was a late one from a rebalance that then dropped the
     * queue again (two clients' starts crossing), and the refused client is the one the queue belongs to. A pull in
     * flight from a client that dropped the queue is a single pull, never a second of them.
     */
    static final long CLAIM_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

    private record Claim(long holder, long sinceNanos) {
    }

    private final VirtualConsumer consumer;
    /** Virtual queue to its owner. */
    private final Map<Integer, Long> owners = new HashMap<>();
    /** Virtual queue to when its owner last started, pulled or committed there (System.nanoTime()). */
    private final Map<Integer, Long> ownerSeen = new HashMap<>();
    /** Virtual queue to the client whose pulls there are refused (not its owner), since its first refusal. */
    private final Map<Integer, Claim> claims = new HashMap<>();

    VirtualQueueOwners(VirtualConsumer consumer) {
        this.consumer = consumer;
    }

    /**
     * Whether a pull of {@code holder} on {@code virtualQueue} may lease: no owner known, or the holder is the owner,
     * or it takes the queue over now from a quiet owner. Refused while the group drains.
     */
    boolean admits(int virtualQueue, long holder, boolean draining, HeldPulls held) {
        Long owner = owners.get(virtualQueue);
        if (!draining && owner != null && owner != holder && claimed(virtualQueue, holder, owner, held)) {
            log.info("vq {} {}: virtual queue {} passes to the client that kept pulling it; its owner by a later start"
                + " was quiet for {} ms", consumer.config().group(), consumer.config().topic(), virtualQueue,
                TimeUnit.NANOSECONDS.toMillis(CLAIM_AFTER_NANOS));
            owners.put(virtualQueue, holder);
            owner = holder;
            consumer.flow().claims++;
        }
        if (owner != null && owner == holder) {
            ownerSeen.put(virtualQueue, System.nanoTime());
        }
        // a pull from a client the queue was taken from (in flight when the rebalance moved it): it has dropped the
        // queue and would throw the messages away
        return !draining && (owner == null || owner == holder);
    }

    /** A commit of {@code holder} on {@code virtualQueue}: the owner is active there. */
    void committed(int virtualQueue, long holder) {
        if (Long.valueOf(holder).equals(owners.get(virtualQueue))) {
            ownerSeen.put(virtualQueue, System.nanoTime());
        }
    }

    /** {@code holder} starts on {@code virtualQueue} and owns it from now on. */
    void started(int virtualQueue, long holder) {
        Long previous = owners.put(virtualQueue, holder);
        consumer.flow().starts++;
        if (previous != null && previous != holder) {
            consumer.flow().ownerChanges++;
        }
        ownerSeen.put(virtualQueue, System.nanoTime());
        claims.remove(virtualQueue);
    }

    /** The holder's connection closed (or it unregistered): it owns nothing and claims nothing. */
    void gone(long holder) {
        owners.values().removeIf(h -> h == holder);
        ownerSeen.keySet().retainAll(owners.keySet());
        claims.values().removeIf(c -> c.holder() == holder);
    }

    /**
     * A pull from {@code holder}, not the queue's owner: whether it now takes the queue over ({@link #CLAIM_AFTER_NANOS}
     * of refused pulls while the owner was quiet there, no pull of the owner's held).
     */
    private boolean claimed(int virtualQueue, long holder, long owner, HeldPulls held) {
        long now = System.nanoTime();
        Claim claim = claims.get(virtualQueue);
        if (claim == null || claim.holder() != holder) {
            claims.put(virtualQueue, new Claim(holder, now));
            return false;
        }
        Long seen = ownerSeen.get(virtualQueue);
        boolean ownerQuiet = (seen == null || now - seen >= CLAIM_AFTER_NANOS) && !held.holds(virtualQueue, owner);
        if (now - claim.sinceNanos() >= CLAIM_AFTER_NANOS && ownerQuiet) {
            claims.remove(virtualQueue);
            return true;
        }
        return false;
    }
}
