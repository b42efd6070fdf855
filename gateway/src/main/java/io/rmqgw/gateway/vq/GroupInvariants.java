package io.rmqgw.gateway.vq;

import io.rmqgw.gateway.vq.WindowMessage.State;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;

/** The stats of a {@link VirtualQueueGroup} and the check of its rules over the whole state, read from its fields. */
final class GroupInvariants {

    private GroupInvariants() {
    }

    static VirtualQueueStats stats(VirtualQueueGroup g) {
        long now = g.nanoClock.getAsLong();
        int windowMessages = 0;
        long windowBytes = 0;
        long oldest = 0;
        long lag = 0;
        for (Window w : g.order) {
            windowMessages += w.messages.size();
            windowBytes += w.heldBytes;
            lag += Math.max(0, Math.max(w.brokerEnd, w.fetchOffset) - w.commitOffset());
            WindowMessage head = w.messages.peekFirst();
            if (head != null) {
                oldest = Math.max(oldest, now - head.fetchedAtNanos);
            }
        }
        EnumMap<RedeliveryReason, Long> redelivered = new EnumMap<>(RedeliveryReason.class);
        for (RedeliveryReason r : RedeliveryReason.values()) {
            redelivered.put(r, g.redeliveryCounts.getOrDefault(r, 0L));
        }
        return new VirtualQueueStats(g.windows.size(), g.virtualQueueCount(), windowMessages, windowBytes, g.available,
            g.leased, g.deadLetterPending, oldest, lag, g.deliveries, redelivered, g.acknowledged, g.deadLettered, g.violations);
    }

    static List<String> check(VirtualQueueGroup g) {
        List<String> broken = new ArrayList<>();
        int countedAvailable = 0;
        int countedLeased = 0;
        int countedDead = 0;
        for (Window w : g.order) {
            if (w.messages.size() > g.config.windowSize()) {
                broken.add(w.queue + ": " + w.messages.size() + " messages > window-size " + g.config.windowSize());
            }
            long bytes = 0;
            long previous = Long.MIN_VALUE;
            boolean first = true;
            for (WindowMessage m : w.messages) {
                if (m.offset <= previous) {
                    broken.add(w.queue + ": offsets out of g.order at " + m);
                }
                previous = m.offset;
                if (first && m.state == State.ACKED) {
                    broken.add(w.queue + ": g.acknowledged head " + m);
                }
                first = false;
                if (m.offset >= w.fetchOffset) {
                    broken.add(w.queue + ": " + m + " at or past the fetch offset " + w.fetchOffset);
                }
                if ((m.source == null) != (m.state == State.ACKED)) {
                    broken.add(w.queue + ": " + m + (m.source == null ? " lost its bytes" : " still holds bytes"));
                }
                if (m.source != null) {
                    bytes += m.size;
                    if (m.source.buffer.refCnt() < 1) {
                        broken.add(w.queue + ": " + m + " holds a released record");
                    }
                }
                switch (m.state) {
                    case AVAILABLE -> countedAvailable++;
                    case LEASED -> {
                        countedLeased++;
                        WindowMessage at = m.leasedOn.leases.get(m.virtualOffset);
                        if (at != m) {
                            broken.add(m + ": not the lease at its virtual offset");
                        }
                        if (!m.leasedOn.lastActivity.containsKey(m.holder)) {
                            broken.add(m + ": its holder is not known on its virtual queue");
                        }
                        if (m.virtualOffset >= m.leasedOn.nextOffset) {
                            broken.add(m + ": virtual offset at or past the head " + m.leasedOn.nextOffset);
                        }
                    }
                    case DEAD_LETTER -> countedDead++;
                    case ACKED -> { }
                    case DROPPED -> broken.add(m + ": dropped but still in its window");
                }
                if (m.state != State.ACKED && m.offset < w.commitOffset()) {
                    broken.add(w.queue + ": commit " + w.commitOffset() + " passes unacknowledged " + m);
                }
            }
            if (bytes != w.heldBytes) {
                broken.add(w.queue + ": holds " + w.heldBytes + " bytes by count, " + bytes + " by sum");
            }
            if (w.commitOffset() < w.reportedCommit) {
                broken.add(w.queue + ": commit " + w.commitOffset() + " below the reported " + w.reportedCommit);
            }
        }
        int leases = 0;
        for (VirtualQueue v : g.virtualQueues.values()) {
            leases += v.leases.size();
            if (v.leases.size() > g.config.maxLeasesPerQueue()) {
                broken.add("virtual queue " + v.id + ": " + v.leases.size() + " leases > " + g.config.maxLeasesPerQueue());
            }
            for (int i = 0; i < v.leases.size(); i++) {
                WindowMessage m = v.leases.at(i);
                long offset = v.leases.offsetAt(i);
                if (m.state != State.LEASED || m.leasedOn != v || m.virtualOffset != offset) {
                    broken.add("virtual queue " + v.id + "@" + offset + ": holds " + m);
                }
                if (i > 0 && offset <= v.leases.offsetAt(i - 1)) {
                    broken.add("virtual queue " + v.id + "@" + offset + ": leases out of offset g.order");
                }
            }
        }
        if (leases != countedLeased || g.leasesByAge.size() != countedLeased) {
            broken.add(leases + " leases on virtual queues, " + g.leasesByAge.size() + " by age, " + countedLeased
                + " g.leased messages");
        }
        if (countedAvailable != g.available || countedLeased != g.leased || countedDead != g.deadLetterPending) {
            broken.add("gauges g.available/g.leased/dead " + g.available + "/" + g.leased + "/" + g.deadLetterPending
                + ", counted " + countedAvailable + "/" + countedLeased + "/" + countedDead);
        }
        g.violations.forEach((rule, count) -> broken.add(count + " break(s) of " + rule + " counted"));
        return broken;
    }
}
