package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.routing.ClusterView;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The fixed one-to-one map of a bypass group's virtual queues onto the topic's readable real queues. */
class BypassMapTest {

    private static final int READ_WRITE = ClusterView.PERM_READ | ClusterView.PERM_WRITE;

    private static ClusterView.Queues queues(String broker, int read, int perm) {
        return new ClusterView.Queues(broker, read, 8, perm, 0);
    }

    @Test
    void virtualQueuesFollowBrokerNameThenQueueId() {
        BypassMap map = BypassMap.of(List.of(queues("broker-b", 2, READ_WRITE), queues("broker-a", 3, READ_WRITE)));
        assertEquals(5, map.size());
        List<RealQueue> order = new ArrayList<>();
        for (int i = 0; i < map.size(); i++) {
            order.add(map.real(i));
        }
        assertEquals(List.of(new RealQueue("broker-a", 0), new RealQueue("broker-a", 1), new RealQueue("broker-a", 2),
            new RealQueue("broker-b", 0), new RealQueue("broker-b", 1)), order);
        assertEquals(Set.of("broker-a", "broker-b"), map.brokerNames());
    }

    @Test
    void theOrderOfTheRouteDoesNotChangeTheMap() {
        BypassMap one = BypassMap.of(List.of(queues("b", 4, READ_WRITE), queues("a", 4, READ_WRITE)));
        BypassMap other = BypassMap.of(List.of(queues("a", 4, READ_WRITE), queues("b", 4, READ_WRITE)));
        assertEquals(one, other);
    }

    @Test
    void virtualOfIsTheInverseOfReal() {
        BypassMap map = BypassMap.of(List.of(queues("broker-a", 4, READ_WRITE), queues("broker-b", 4, READ_WRITE)));
        for (int i = 0; i < map.size(); i++) {
            RealQueue real = map.real(i);
            assertEquals(i, map.virtualOf(real.brokerName(), real.queueId()));
        }
        assertEquals(-1, map.virtualOf("broker-a", 4), "beyond the broker's readable queues");
        assertEquals(-1, map.virtualOf("broker-c", 0), "not a broker of the topic");
        assertEquals(-1, map.virtualOf(null, 0));
        assertEquals(-1, map.virtualOf("broker-a", -1));
    }

    @Test
    void virtualQueuesPastTheRealOnesHaveNoneBehindThem() {
        BypassMap map = BypassMap.of(List.of(queues("broker-a", 4, READ_WRITE)));
        assertEquals(new RealQueue("broker-a", 3), map.real(3));
        assertNull(map.real(4));
        assertNull(map.real(31));
        assertNull(map.real(-1));
    }

    @Test
    void aBrokerMissingFromTheRouteKeepsItsPlaces() {
        BypassMap seen = BypassMap.of(List.of(queues("broker-a", 4, READ_WRITE), queues("broker-b", 4, READ_WRITE)));
        BypassMap restarting = BypassMap.of(List.of(queues("broker-b", 4, READ_WRITE)));
        assertTrue(seen.renamedBy(restarting), "the route alone would put broker-b's queues behind 0..3");
        BypassMap kept = seen.with(restarting);
        assertEquals(seen, kept);
        assertFalse(seen.renamedBy(kept));
        // queues added at the end rename nothing; a broker sorting first does
        BypassMap grown = kept.with(BypassMap.of(List.of(queues("broker-b", 6, READ_WRITE))));
        assertEquals(10, grown.size());
        assertFalse(kept.renamedBy(grown));
        assertEquals(new RealQueue("broker-b", 5), grown.real(9));
        assertTrue(grown.renamedBy(grown.with(BypassMap.of(List.of(queues("broker-0", 1, READ_WRITE))))));
    }

    @Test
    void onlyReadableQueuesCount() {
        BypassMap map = BypassMap.of(List.of(queues("broker-a", 4, ClusterView.PERM_WRITE), queues("broker-b", 2,
            READ_WRITE), queues("broker-c", 0, READ_WRITE)));
        assertEquals(2, map.size());
        assertEquals(new RealQueue("broker-b", 0), map.real(0));
        assertEquals(Set.of("broker-b"), map.brokerNames());
    }
}
