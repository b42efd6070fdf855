package io.rmqgw.gateway.multicluster;

import io.rmqgw.routing.RouteUnion;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A logical topic's route as the gateway last put it together: the union's body (real broker addresses, shown
 * broker names), its brokers, and the topic's clusters in order of preference.
 */
record UnionRoute(String topic, List<String> clusters, byte[] body, List<RouteUnion.Broker> brokers,
                  Map<String, RouteUnion.Broker> byMaster) {

    static UnionRoute of(String topic, List<String> clusters, RouteUnion.Result union) {
        Map<String, RouteUnion.Broker> byMaster = new HashMap<>();
        for (RouteUnion.Broker b : union.brokers()) {
            if (b.master() != null) {
                byMaster.put(b.master(), b);
            }
        }
        return new UnionRoute(topic, List.copyOf(clusters), union.body(), union.brokers(), Map.copyOf(byMaster));
    }

    /** The broker whose master is at {@code address}, or null. */
    RouteUnion.Broker broker(String address) {
        return byMaster.get(address);
    }
}
