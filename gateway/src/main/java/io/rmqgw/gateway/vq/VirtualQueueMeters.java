package io.rmqgw.gateway.vq;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * One virtual-queue group's meters ({@code rmqgw_vq_*}, tagged group and topic), read from a snapshot the
 * group's event loop refreshes every second: a scrape never touches the group's state from another thread.
 */
final class VirtualQueueMeters implements AutoCloseable {

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private volatile VirtualQueueStats snapshot;
    private volatile FlowCounters flow = new FlowCounters();

    VirtualQueueMeters(MeterRegistry registry, String group, String topic, VirtualQueueStats initial) {
        this.registry = registry;
        this.snapshot = initial;
        Tags tags = Tags.of("group", group, "topic", topic);
        gauge("rmqgw.vq.real.queues", "Real queues this gateway owns and consumes for the group", tags,
            VirtualQueueStats::realQueues);
        gauge("rmqgw.vq.virtual.queues", "Virtual queues offered to the group's clients", tags,
            VirtualQueueStats::virtualQueues);
        gauge("rmqgw.vq.window.messages", "Messages held in the windows (at most window-size per real queue: the "
            + "redelivery bound after a crash)", tags, VirtualQueueStats::windowMessages);
        gauge("rmqgw.vq.window.bytes", "Record bytes held for unacknowledged messages", tags,
            VirtualQueueStats::windowBytes);
        gauge("rmqgw.vq.available.messages", "Messages waiting for a client's pull (the backlog in the gateway)", tags,
            VirtualQueueStats::available);
        gauge("rmqgw.vq.leases", "Messages leased to clients and not acknowledged yet", tags, VirtualQueueStats::leased);
        gauge("rmqgw.vq.dead.letter.pending", "Messages waiting for their send to the group's DLQ", tags,
            VirtualQueueStats::deadLetterPending);
        gauge("rmqgw.vq.oldest.unacknowledged.seconds", "Age of the oldest unacknowledged message in the windows",
            tags, s -> s.oldestUnacknowledgedAgeNanos() / 1e9);
        gauge("rmqgw.vq.lag.messages", "Messages of the owned real queues not acknowledged yet: the brokers' max "
            + "offsets (as last heard, at most 5 s old) minus the real commits", tags, VirtualQueueStats::lag);
        counter("rmqgw.vq.deliveries", "Messages delivered on virtual queues, once per delivery", tags,
            VirtualQueueStats::deliveries);
        counter("rmqgw.vq.acknowledged", "Messages acknowledged by a client's commit", tags,
            VirtualQueueStats::acknowledged);
        counter("rmqgw.vq.dead.lettered", "Messages sent to the group's DLQ after max-deliveries", tags,
            VirtualQueueStats::deadLettered);
        for (RedeliveryReason reason : RedeliveryReason.values()) {
            counter("rmqgw.vq.redeliveries", "Leases ended without an acknowledgement, by reason",
                tags.and("reason", reason.label()), s -> s.redeliveries().getOrDefault(reason, 0L));
        }
        flowCounter("rmqgw.vq.fetches", "Fetches (PULL_MESSAGE) sent to the brokers", tags, f -> f.fetches);
        flowCounter("rmqgw.vq.fetched.messages", "Messages fetches brought into the windows", tags,
            f -> f.fetchedMessages);
        flowCounter("rmqgw.vq.fetches.short", "Fetches answered with fewer messages than asked", tags,
            f -> f.fetchesShort);
        flowCounter("rmqgw.vq.fetches.empty", "Fetches answered with no message", tags, f -> f.fetchesEmpty);
        flowCounter("rmqgw.vq.fetch.seconds", "Time fetches answered with messages were in flight, summed", tags,
            f -> f.fetchNanos / 1e9);
        flowCounter("rmqgw.vq.window.full.seconds", "Time real queues went unfetched because their window was full, "
            + "summed over queues (also while no client consumes)", tags, f -> f.windowFullNanos / 1e9);
        flowCounter("rmqgw.vq.pulls.found", "Client pulls answered with messages", tags, f -> f.pullsFound);
        flowCounter("rmqgw.vq.pulled.messages", "Messages in the answers to client pulls", tags, f -> f.pulledMessages);
        flowCounter("rmqgw.vq.pulls.held", "Client pulls held for lack of messages", tags, f -> f.pullsHeld);
        flowCounter("rmqgw.vq.held.woken", "Held pulls answered with messages", tags, f -> f.heldWoken);
        flowCounter("rmqgw.vq.held.woken.seconds", "Time held pulls answered with messages were held, summed", tags,
            f -> f.heldWokenNanos / 1e9);
        flowCounter("rmqgw.vq.held.refreshed", "Held pulls answered empty to bring their clients' commits", tags,
            f -> f.heldRefreshed);
        flowCounter("rmqgw.vq.held.expired", "Held pulls answered empty at the end of their hold", tags,
            f -> f.heldExpired);
        flowCounter("rmqgw.vq.pulls.refused", "Client pulls answered empty at once: another client owns the queue",
            tags, f -> f.pullsRefused);
        flowCounter("rmqgw.vq.starts", "Clients starting on a virtual queue (its offset queried)", tags, f -> f.starts);
        flowCounter("rmqgw.vq.owner.changes", "Starts that took a virtual queue from another client", tags,
            f -> f.ownerChanges);
        flowCounter("rmqgw.vq.claims", "Virtual queues taken by a client that kept pulling while their owner was quiet",
            tags, f -> f.claims);
        counter("rmqgw.vq.invariant.violations", "Breaks of the virtual queues' own rules: must stay 0", tags,
            VirtualQueueStats::invariantViolationCount);
    }

    /** A new snapshot (on the group's event loop). */
    void update(VirtualQueueStats stats, FlowCounters flowCopy) {
        snapshot = stats;
        flow = flowCopy;
    }

    private void gauge(String name, String help, Tags tags, ToDoubleFunction<VirtualQueueStats> read) {
        meters.add(Gauge.builder(name, this, m -> read.applyAsDouble(m.snapshot)).description(help).tags(tags)
            .register(registry));
    }

    private void counter(String name, String help, Tags tags, ToDoubleFunction<VirtualQueueStats> read) {
        meters.add(FunctionCounter.builder(name, this, m -> read.applyAsDouble(m.snapshot)).description(help)
            .tags(tags).register(registry));
    }

    private void flowCounter(String name, String help, Tags tags, ToDoubleFunction<FlowCounters> read) {
        meters.add(FunctionCounter.builder(name, this, m -> read.applyAsDouble(m.flow)).description(help)
            .tags(tags).register(registry));
    }

    /** Removes the meters (the group stopped or was taken out by a reload). */
    @Override
    public void close() {
        meters.forEach(registry::remove);
        meters.clear();
    }
}
