package io.rmqgw.gateway.vq;

import java.util.Map;

/**
 * A snapshot of one group's virtual-queue state, for gauges and counters.
 *
 * @param realQueues          real queues owned
 * @param virtualQueues       virtual queues offered
 * @param windowMessages      messages held in the windows, every state (the redelivery bound in use)
 * @param windowBytes         record bytes held (acknowledged messages hold none)
 * @param available           messages waiting for a pull (fresh or to be redelivered)
 * @param leased              leases in flight
 * @param deadLetterPending   messages waiting for, or in, their send to the DLQ
 * @param oldestUnacknowledgedAgeNanos how long ago the oldest unacknowledged message was fetched (0: none)
 * @param lag                 messages of the owned real queues not acknowledged yet: the brokers' max offsets
 *                            (as last heard) minus the real commits, what RocketMQ reports as the group's lag
 * @param deliveries          messages delivered, counted once per delivery
 * @param redeliveries        leases ended without an acknowledgement, by reason
 * @param acknowledged        messages acknowledged by a holder's commit
 * @param deadLettered        messages the wiring reported sent to the DLQ
 * @param invariantViolations breaks of the state machine's own rules, by rule: must stay empty
 */
public record VirtualQueueStats(int realQueues, int virtualQueues, int windowMessages, long windowBytes,
                                int available, int leased, int deadLetterPending, long oldestUnacknowledgedAgeNanos, long lag,
                                long deliveries, Map<RedeliveryReason, Long> redeliveries, long acknowledged,
                                long deadLettered, Map<Invariant, Long> invariantViolations) {

    public VirtualQueueStats {
        redeliveries = Map.copyOf(redeliveries);
        invariantViolations = Map.copyOf(invariantViolations);
    }

    /** All invariant breaks together: must be zero. */
    public long invariantViolationCount() {
        return invariantViolations.values().stream().mapToLong(Long::longValue).sum();
    }
}
