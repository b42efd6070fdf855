package io.rmqgw.gateway.multicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.routing.RouteUnion;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Weights and where sends go by them: pure state, times given. */
class ClusterHealthTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private static final RouteUnion.Broker A = new RouteUnion.Broker("default", "broker-a", "broker-a",
        Map.of(0L, "10.0.0.1:10911"), 4, 4, 6);
    private static final RouteUnion.Broker B = new RouteUnion.Broker("idc2", "broker-b", "broker-b",
        Map.of(0L, "10.1.0.1:10911"), 4, 4, 6);
    private static final RouteUnion.Broker C = new RouteUnion.Broker("idc3", "broker-c", "broker-c",
        Map.of(0L, "10.2.0.1:10911"), 2, 2, 6);

    private static UnionRoute route(RouteUnion.Broker... brokers) {
        Map<String, RouteUnion.Broker> byMaster = new HashMap<>();
        List<String> clusters = new java.util.ArrayList<>();
        for (RouteUnion.Broker b : brokers) {
            byMaster.put(b.master(), b);
            clusters.add(b.cluster());
        }
        return new UnionRoute("Orders", clusters, new byte[0], List.of(brokers), byMaster);
    }

    @Test
    void aHealthySendKeepsTheQueueItsProducerChose() {
        ClusterHealth health = new ClusterHealth();
        UnionRoute route = route(A, B);
        for (double draw : new double[] {0, 0.5, 0.999}) {
            ClusterHealth.Target t = health.choose(route, B, 3, draw, null, 0);
            assertSame(B, t.broker());
            assertEquals(3, t.queueId());
            assertNull(t.reason());
        }
    }

    @Test
    void aSendToAnUnreachableBrokerGoesToTheFirstClusterThatIsUp() {
        ClusterHealth health = new ClusterHealth();
        UnionRoute route = route(A, B, C);
        health.of("default", A.master(), 0).failed(BrokerHealth.Failure.UNREACHABLE, 0, false);

        ClusterHealth.Target t = health.choose(route, A, 1, 0.0, null, 0);

        assertSame(B, t.broker(), "idc2 comes before idc3 in the topic's order");
        assertEquals("down", t.reason());
        assertEquals(BrokerHealth.State.DOWN, health.clusterState("default", 0));
        assertEquals(0.0, health.clusterWeight("default", 0));
        assertTrue(t.queueId() >= 0 && t.queueId() < B.writeQueueNums());
    }

    @Test
    void refusalsHalveTheWeightAndAnswersRaiseItBackUntilTheBrokerIsUpAgain() {
        ClusterHealth health = new ClusterHealth();
        BrokerHealth a = health.of("default", A.master(), 0);
        a.failed(BrokerHealth.Failure.REFUSED, 0, false);
        a.failed(BrokerHealth.Failure.REFUSED, 0, false);
        assertEquals(0.25, health.share(A.master(), 0), 1e-9);
        assertEquals(BrokerHealth.State.DEGRADED, health.state(A.master(), 0));
        // with a weight of 0.25 it keeps about 1.4 * 0.25 = 35% of the sends its producers give it
        UnionRoute route = route(A, B);
        assertSame(A, health.choose(route, A, 0, 0.34, null, 0).broker());
        assertEquals("degraded", health.choose(route, A, 0, 0.36, null, 0).reason());
        for (int i = 0; i < 40; i++) {
            a.answered(MS, i * MS, false);
        }
        assertEquals(BrokerHealth.State.UP, health.state(A.master(), 40 * MS));
    }

    @Test
    void aBrokerReachedAgainRestartsLowAndEarnsItsShareBack() {
        ClusterHealth health = new ClusterHealth();
        BrokerHealth a = health.of("default", A.master(), 0);
        a.failed(BrokerHealth.Failure.UNREACHABLE, 0, false);
        a.answered(MS, MS, false);
        assertEquals(BrokerHealth.REACHED_AGAIN, health.share(A.master(), MS), 1e-9);
        assertEquals(BrokerHealth.State.DEGRADED, health.state(A.master(), MS));
    }

    @Test
    void aBrokerThatStopsAnsweringWhileSendsWaitLosesItsShare() {
        ClusterHealth health = new ClusterHealth();
        BrokerHealth a = health.of("default", A.master(), 0);
        a.answered(MS, 0, false);
        a.sent(0);
        assertEquals(1.0, health.share(A.master(), 100 * MS), 1e-9);
        double stalled = health.share(A.master(), 2000 * MS);
        assertTrue(stalled < 0.1, "stalled 2 s with a send waiting: " + stalled);
        a.answered(MS, 2000 * MS, true);
        assertTrue(health.share(A.master(), 2001 * MS) > 0.9);
    }

    @Test
    void aBrokerMuchSlowerThanTheFastestTakesLess() {
        ClusterHealth health = new ClusterHealth();
        health.of("default", A.master(), 0).answered(2 * MS, 0, false);
        health.of("idc2", B.master(), 0).answered(200 * MS, 0, false);
        double slow = health.share(B.master(), 0);
        // slower than max(3 x 2 ms, 2 ms + 20 ms) = 22 ms: its share is 22/200
        assertEquals(22.0 / 200, slow, 1e-6);
        assertEquals(1.0, health.share(A.master(), 0), 1e-9);
    }

    @Test
    void aRetryAvoidsTheBrokerThatFailedAndNoneIsFoundWhenEveryOtherIsDown() {
        ClusterHealth health = new ClusterHealth();
        UnionRoute route = route(A, B);
        ClusterHealth.Target retry = health.choose(route, A, 2, 0.0, A.master(), 0);
        assertSame(B, retry.broker());
        assertEquals("retried", retry.reason());
        health.of("idc2", B.master(), 0).failed(BrokerHealth.Failure.UNREACHABLE, 0, false);
        assertNull(health.choose(route, A, 2, 0.0, A.master(), 0));
    }
}
