package io.rmqgw.gateway.multicluster;

import io.rmqgw.routing.RouteUnion;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The names clients see for brokers of several clusters: {@code default}'s brokers keep theirs; a broker of another
 * cluster whose name a broker of an earlier cluster (in the order given: {@code default}, then {@code clusters:})
 * has is shown as {@code CLUSTER-NAME}. It depends on the clusters' broker names only, not on which routes were
 * asked for first, so every union, and every gateway configured alike, shows the same names. Pure.
 */
final class BrokerNaming implements RouteUnion.Naming {

    private final List<String> order;
    private final Map<String, Set<String>> brokerNames;

    /** @param brokerNames each cluster's broker names (read when asked: a live map may be given) */
    BrokerNaming(List<String> order, Map<String, Set<String>> brokerNames) {
        this.order = List.copyOf(order);
        this.brokerNames = brokerNames;
    }

    @Override
    public String shown(String cluster, String realName) {
        for (String earlier : order) {
            if (earlier.equals(cluster)) {
                return realName;
            }
            Set<String> names = brokerNames.get(earlier);
            if (names != null && names.contains(realName)) {
                return cluster + "-" + realName;
            }
        }
        return realName;
    }
}
