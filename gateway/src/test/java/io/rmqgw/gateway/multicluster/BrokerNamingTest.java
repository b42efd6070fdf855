package io.rmqgw.gateway.multicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The names shown for brokers of several clusters: decided by the clusters' order and broker names alone. */
class BrokerNamingTest {

    private static final List<String> ORDER = List.of("default", "idc2", "idc3");

    @Test
    void defaultsBrokersAndNamesNoEarlierClusterHasKeepTheirNames() {
        BrokerNaming naming = new BrokerNaming(ORDER, Map.of("default", Set.of("broker-a"), "idc2",
            Set.of("broker-a", "broker-b"), "idc3", Set.of("broker-b", "broker-c")));
        assertEquals("broker-a", naming.shown("default", "broker-a"));
        assertEquals("broker-b", naming.shown("idc2", "broker-b"));
        assertEquals("broker-c", naming.shown("idc3", "broker-c"));
    }

    @Test
    void aNameAnEarlierClusterHasIsShownWithTheLaterCluster() {
        BrokerNaming naming = new BrokerNaming(ORDER, Map.of("default", Set.of("broker-a"), "idc2",
            Set.of("broker-a", "broker-b"), "idc3", Set.of("broker-b", "broker-a")));
        assertEquals("idc2-broker-a", naming.shown("idc2", "broker-a"));
        assertEquals("idc3-broker-a", naming.shown("idc3", "broker-a"));
        assertEquals("idc3-broker-b", naming.shown("idc3", "broker-b"), "idc2 comes before idc3");
    }

    @Test
    void theNamesDoNotDependOnWhichClusterWasAskedFirst() {
        // the same clusters' names, learned in another order: the same answers
        Map<String, Set<String>> names = new java.util.LinkedHashMap<>();
        names.put("idc3", Set.of("broker-a"));
        names.put("idc2", Set.of("broker-a"));
        names.put("default", Set.of("broker-a"));
        BrokerNaming naming = new BrokerNaming(ORDER, names);
        assertEquals("broker-a", naming.shown("default", "broker-a"));
        assertEquals("idc2-broker-a", naming.shown("idc2", "broker-a"));
        assertEquals("idc3-broker-a", naming.shown("idc3", "broker-a"));
    }
}
