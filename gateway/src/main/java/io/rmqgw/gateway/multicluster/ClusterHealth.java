package io.rmqgw.gateway.multicluster;

import io.rmqgw.routing.RouteUnion;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The health of every broker of the logical topics' clusters, and where a send should go by it. A send keeps the
 * queue its producer picked with a probability of its broker's share times {@link #OVERPROVISIONING} (Envoy's
 * overprovisioning factor: a broker at 0.72 of its weight still takes all it is given); otherwise it is redirected
 * to a broker of the first cluster, in the topic's order of preference, that is UP, or else to the best-placed one.
 * Soft state, per gateway.
 */
final class ClusterHealth {

    /** Envoy's default: a priority level at 1/1.4 of its health still takes its full share. */
    static final double OVERPROVISIONING = 1.4;

    /** Where a send goes: {@code broker} and its queue; {@code reason} null when it keeps its own. */
    record Target(RouteUnion.Broker broker, int queueId, String reason) {
    }

    private final ConcurrentMap<String, BrokerHealth> brokers = new ConcurrentHashMap<>();
    private final AtomicInteger nextQueue = new AtomicInteger();

    /** The health of the broker at {@code address} (a master's), made on first use. */
    BrokerHealth of(String cluster, String address, long now) {
        return brokers.computeIfAbsent(address, a -> new BrokerHealth(cluster, a, now));
    }

    /** The broker at {@code address} if it was ever seen. */
    BrokerHealth known(String address) {
        return brokers.get(address);
    }

    Map<String, BrokerHealth> all() {
        return brokers;
    }

    /** Forgets brokers no logical topic's route names any more. */
    void retain(java.util.Set<String> addresses) {
        brokers.keySet().retainAll(addresses);
    }

    /** The fastest average answer time of a reachable broker, negative while none is known. */
    long fastest() {
        long best = -1;
        for (BrokerHealth b : brokers.values()) {
            long l = b.latencyNanos();
            if (l >= 0 && b.weightedReachable() && (best < 0 || l < best)) {
                best = l;
            }
        }
        return best;
    }

    double share(String address, long now) {
        BrokerHealth b = brokers.get(address);
        return b == null ? 1 : b.share(fastest(), now);
    }

    BrokerHealth.State state(String address, long now) {
        BrokerHealth b = brokers.get(address);
        return b == null ? BrokerHealth.State.UP : b.state(fastest(), now);
    }

    /** A cluster's weight: the best share of its brokers (1 while none was seen). */
    double clusterWeight(String cluster, long now) {
        long fastest = fastest();
        double best = -1;
        for (BrokerHealth b : brokers.values()) {
            if (b.cluster.equals(cluster)) {
                best = Math.max(best, b.share(fastest, now));
            }
        }
        return best < 0 ? 1 : best;
    }

    /** UP while some broker of it is, DOWN while every broker of it is (or none answers), else DEGRADED. */
    BrokerHealth.State clusterState(String cluster, long now) {
        long fastest = fastest();
        boolean any = false;
        boolean allDown = true;
        for (BrokerHealth b : brokers.values()) {
            if (!b.cluster.equals(cluster)) {
                continue;
            }
            any = true;
            BrokerHealth.State s = b.state(fastest, now);
            if (s == BrokerHealth.State.UP) {
                return BrokerHealth.State.UP;
            }
            allDown &= s == BrokerHealth.State.DOWN;
        }
        return !any ? BrokerHealth.State.UP : allDown ? BrokerHealth.State.DOWN : BrokerHealth.State.DEGRADED;
    }

    /**
     * Where a send to {@code here} (a broker of {@code route}) should go, given {@code draw} uniform in [0, 1);
     * {@code exclude}: a broker that just failed this send (null: none).
     */
    Target choose(UnionRoute route, RouteUnion.Broker here, int queueId, double draw, String exclude, long now) {
        long fastest = fastest();
        double own = here == null || here.master() == null || here.master().equals(exclude) ? 0
            : shareOf(here.master(), fastest, now);
        if (here != null && exclude == null && draw < Math.min(1, OVERPROVISIONING * own)) {
            return new Target(here, queueId, null);
        }
        RouteUnion.Broker best = null;
        double bestShare = own;
        for (String cluster : route.clusters()) {
            for (RouteUnion.Broker b : route.brokers()) {
                if (!b.cluster().equals(cluster) || b == here || !b.writable() || b.master() == null
                    || b.master().equals(exclude)) {
                    continue;
                }
                double share = shareOf(b.master(), fastest, now);
                if (share >= BrokerHealth.UP_WEIGHT) {
                    return new Target(b, spread(b), reason(here, exclude, fastest, now));
                }
                if (share > bestShare) {
                    best = b;
                    bestShare = share;
                }
            }
        }
        if (best != null) {
            return new Target(best, spread(best), reason(here, exclude, fastest, now));
        }
        return here == null || (exclude != null && exclude.equals(here.master())) ? null
            : new Target(here, queueId, null);
    }

    private double shareOf(String address, long fastest, long now) {
        BrokerHealth b = brokers.get(address);
        return b == null ? 1 : b.share(fastest, now);
    }

    private int spread(RouteUnion.Broker b) {
        return Math.floorMod(nextQueue.getAndIncrement(), b.writeQueueNums());
    }

    private String reason(RouteUnion.Broker here, String exclude, long fastest, long now) {
        if (exclude != null) {
            return "retried";
        }
        BrokerHealth h = here == null || here.master() == null ? null : brokers.get(here.master());
        return h != null && h.state(fastest, now) == BrokerHealth.State.DOWN ? "down" : "degraded";
    }

    /** The union's brokers by cluster in preference order, for callers that list them. */
    static List<RouteUnion.Broker> inCluster(UnionRoute route, String cluster) {
        return route.brokers().stream().filter(b -> b.cluster().equals(cluster)).toList();
    }
}
