package io.rmqgw.gateway.vq;

import io.rmqgw.routing.ClusterView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How a group that is not served on a virtual-queue topic (a bypass group) sees the virtual broker: virtual queue
 * {@code i} is the topic's {@code i}-th readable real queue, in a fixed order (broker name, then queue id), read and
 * committed with the real queue's own offsets; virtual queues from {@link #size()} on have no real queue behind them
 * and stay empty. The order depends on the topic's route only (never on broker addresses or on which real queues
 * this gateway owns for the served group), so every gateway maps alike.
 */
record BypassMap(List<RealQueue> queues) {

    BypassMap {
        queues = List.copyOf(queues);
    }

    /** The readable real queues of {@code route} (a topic's queue data), in the bypass order. */
    static BypassMap of(List<ClusterView.Queues> route) {
        Map<String, Integer> readable = new TreeMap<>();
        for (ClusterView.Queues q : route) {
            if (q.readable() && q.readQueueNums() > 0) {
                readable.merge(q.brokerName(), q.readQueueNums(), Math::max);
            }
        }
        return fromCounts(readable);
    }

    /**
     * This map with {@code routed}'s queues added: a broker or queues missing from {@code routed} (a broker restarting
     * drops out of its topics' routes) keep their places, so the virtual queues after them keep their real queues.
     */
    BypassMap with(BypassMap routed) {
        Map<String, Integer> counts = new TreeMap<>();
        for (RealQueue q : queues) {
            counts.merge(q.brokerName(), q.queueId() + 1, Math::max);
        }
        for (RealQueue q : routed.queues) {
            counts.merge(q.brokerName(), q.queueId() + 1, Math::max);
        }
        return fromCounts(counts);
    }

    private static BypassMap fromCounts(Map<String, Integer> readable) {
        List<RealQueue> out = new ArrayList<>();
        readable.forEach((broker, count) -> {
            for (int i = 0; i < count; i++) {
                out.add(new RealQueue(broker, i));
            }
        });
        return new BypassMap(out);
    }

    /** The real queues behind virtual queues (R): the virtual broker must show at least this many. */
    int size() {
        return queues.size();
    }

    /** The real queue behind {@code virtualQueue}, or null when it has none (negative, or {@link #size()} or more). */
    RealQueue real(int virtualQueue) {
        return virtualQueue >= 0 && virtualQueue < queues.size() ? queues.get(virtualQueue) : null;
    }

    /** The virtual queue of {@code brokerName}'s queue {@code queueId}, or -1 when it is not one of the topic's. */
    int virtualOf(String brokerName, int queueId) {
        if (brokerName == null || queueId < 0) {
            return -1;
        }
        int at = Collections.binarySearch(queues, new RealQueue(brokerName, queueId),
            (a, b) -> a.brokerName().equals(b.brokerName()) ? Integer.compare(a.queueId(), b.queueId())
                : a.brokerName().compareTo(b.brokerName()));
        return at < 0 ? -1 : at;
    }

    /**
     * Whether {@code next} puts another real queue behind a virtual queue both maps have: its clients would then read
     * and commit one real queue's offsets on another (queues appended at the end rename nothing).
     */
    boolean renamedBy(BypassMap next) {
        for (int i = 0; i < Math.min(size(), next.size()); i++) {
            if (!queues.get(i).equals(next.queues.get(i))) {
                return true;
            }
        }
        return false;
    }

    /** The brokers holding the topic's readable queues, by name. */
    Set<String> brokerNames() {
        Set<String> names = new java.util.TreeSet<>();
        queues.forEach(q -> names.add(q.brokerName()));
        return names;
    }
}
