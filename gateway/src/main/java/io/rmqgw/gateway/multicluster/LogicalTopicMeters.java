package io.rmqgw.gateway.multicluster;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * The logical topics' meters: each cluster's and broker's weight and state, sends redirected by cluster and reason,
 * failovers (a cluster went DOWN) and failbacks (it came back UP). Gauges are registered for the clusters configured
 * and the brokers seen, counters when first used; all on the gateway's registry.
 */
public final class LogicalTopicMeters {

    /** Why a send went elsewhere than its producer chose: its broker is down, degraded, or just failed the send. */
    public static final List<String> REASONS = List.of("down", "degraded", "retried");
    /** A cluster's states, as the {@code state} label of {@code rmqgw_cluster_state}. */
    public static final List<String> STATES = List.of("up", "degraded", "down");

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Set<String> gauged = ConcurrentHashMap.newKeySet();
    private final List<String> clusters = new java.util.concurrent.CopyOnWriteArrayList<>();

    public LogicalTopicMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * A cluster's gauges, once: {@code weight} and {@code state} read when scraped; its failover, failback and
     * redirect counters (to and from every cluster registered before) at 0.
     */
    public void cluster(String cluster, ToDoubleFunction<String> weight, java.util.function.Function<String,
        String> state) {
        if (!gauged.add("cluster\n" + cluster)) {
            return;
        }
        Gauge.builder("rmqgw.cluster.weight", cluster, weight)
            .description("A cluster's weight for the sends of logical topics: the best share of its brokers, 0 to 1")
            .tags(Tags.of("cluster", cluster)).register(registry);
        for (String s : STATES) {
            Gauge.builder("rmqgw.cluster.state", cluster, c -> s.equals(state.apply(c)) ? 1 : 0)
                .description("1 for the state a cluster is in (up, degraded, down), 0 for the others")
                .tags(Tags.of("cluster", cluster, "state", s)).register(registry);
        }
        counter("rmqgw.cluster.failovers", "Times a cluster went down (its logical topics' sends moved away)",
            Tags.of("cluster", cluster));
        counter("rmqgw.cluster.failbacks", "Times a cluster that was down came back up", Tags.of("cluster", cluster));
        // every pair of clusters and reason at 0 from the start, so increase() sees the first redirect
        for (String other : clusters) {
            for (String reason : REASONS) {
                redirectedCounter(cluster, other, reason);
                redirectedCounter(other, cluster, reason);
            }
        }
        for (String reason : REASONS) {
            redirectedCounter(cluster, cluster, reason);
        }
        clusters.add(cluster);
    }

    /** A broker's weight gauge, once. */
    public void broker(String cluster, String address, ToDoubleFunction<String> share) {
        if (gauged.add("broker\n" + address)) {
            Gauge.builder("rmqgw.broker.weight", address, share)
                .description("An upstream broker's share of the sends of logical topics, 0 to 1")
                .tags(Tags.of("cluster", cluster, "broker", address)).register(registry);
        }
    }

    public void redirected(String from, String to, String reason) {
        redirectedCounter(from, to, reason).increment();
    }

    private Counter redirectedCounter(String from, String to, String reason) {
        return counter("rmqgw.logical.sends.redirected", "Sends to logical topics the gateway stored elsewhere than"
            + " the queue their producer chose, by cluster and reason (down, degraded, retried)",
            Tags.of("from", from, "to", to, "reason", reason));
    }

    public void failover(String cluster) {
        counter("rmqgw.cluster.failovers", "", Tags.of("cluster", cluster)).increment();
    }

    public void failback(String cluster) {
        counter("rmqgw.cluster.failbacks", "", Tags.of("cluster", cluster)).increment();
    }

    private Counter counter(String name, String description, Tags tags) {
        return counters.computeIfAbsent(name + tags, k -> Counter.builder(name).description(description).tags(tags)
            .register(registry));
    }
}
