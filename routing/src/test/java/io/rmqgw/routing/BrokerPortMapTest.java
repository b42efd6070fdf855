package io.rmqgw.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.routing.BrokerPortMap.BrokerPorts;
import io.rmqgw.routing.BrokerPortMap.PortOwner;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BrokerPortMapTest {

    @Test
    void allocatesBlocksOfThreeWithMainPortLast() {
        BrokerPortMap map = new BrokerPortMap(20000, 20099);

        BrokerPorts a = map.allocate("10.0.0.1:10911");
        BrokerPorts b = map.allocate("10.0.0.2:10911");

        assertEquals(new BrokerPorts("10.0.0.1:10911", 20000, 20002), a);
        assertEquals(20001, a.sparePort());
        assertEquals(new BrokerPorts("10.0.0.2:10911", 20003, 20005), b);
        assertEquals(a.vipPort(), a.mainPort() - 2, "clients derive the VIP port as main - 2");
        assertEquals(a, map.allocate("10.0.0.1:10911"), "stable on repeat");
        assertEquals(33, map.capacity());
    }

    @Test
    void looksUpPortsBothWays() {
        BrokerPortMap map = new BrokerPortMap(20000, 20099);
        map.allocate("10.0.0.1:10911");
        map.allocate("10.0.0.2:10911");

        assertEquals(Optional.of(new PortOwner("10.0.0.2:10911", false)), map.ownerOf(20005));
        assertEquals(Optional.of(new PortOwner("10.0.0.2:10911", true)), map.ownerOf(20003));
        assertEquals(Optional.empty(), map.ownerOf(20004), "spare port");
        assertEquals(Optional.empty(), map.ownerOf(20006), "free block");
        assertEquals(Optional.empty(), map.ownerOf(19999));
        assertEquals(Optional.empty(), map.ownerOf(65536));
        assertEquals(20002, map.portsOf("10.0.0.1:10911").orElseThrow().mainPort());
        assertEquals(Optional.empty(), map.portsOf("10.0.0.9:10911"));
        assertEquals(Optional.empty(), map.portsOf(null));
    }

    @Test
    void trailingPortsThatDoNotFillABlockAreNeverUsed() {
        BrokerPortMap map = new BrokerPortMap(20000, 20004);
        assertEquals(1, map.capacity());
        map.allocate("10.0.0.1:10911");
        assertEquals(Optional.empty(), map.ownerOf(20003));
        PortRangeExhaustedException e = assertThrows(PortRangeExhaustedException.class,
            () -> map.allocate("10.0.0.2:10911"));
        assertTrue(e.getMessage().contains("20000-20004"), e.getMessage());
        assertTrue(e.getMessage().contains("10.0.0.2:10911"), e.getMessage());
    }

    @Test
    void reassignMovesToNextFreeBlockAndRetiresTheFailedOne() {
        BrokerPortMap map = new BrokerPortMap(20000, 20008); // three blocks
        BrokerPorts first = map.allocate("a:1");

        BrokerPorts moved = map.reassign("a:1");

        assertEquals(new BrokerPorts("a:1", 20003, 20005), moved);
        assertEquals(Optional.empty(), map.ownerOf(20002), "old main port released");
        assertEquals(Optional.of(new PortOwner("a:1", false)), map.ownerOf(20005));
        assertEquals(moved, map.portsOf("a:1").orElseThrow());
        // the failed block is the last resort
        assertEquals(20006, map.allocate("b:1").vipPort());
        assertEquals(first.vipPort(), map.allocate("c:1").vipPort());
        assertThrows(PortRangeExhaustedException.class, () -> map.allocate("d:1"));
    }

    @Test
    void repeatedReassignCyclesThroughEveryBlock() {
        BrokerPortMap map = new BrokerPortMap(20000, 20008); // three blocks
        map.allocate("a:1");
        List<Integer> vipPorts = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            vipPorts.add(map.reassign("a:1").vipPort());
        }
        assertEquals(List.of(20003, 20006, 20000, 20003), vipPorts, "wraps around once every block has failed");
    }

    @Test
    void reassignWithNoOtherFreeBlockKeepsThePorts() {
        BrokerPortMap map = new BrokerPortMap(20000, 20005);
        BrokerPorts a = map.allocate("a:1");
        map.allocate("b:1");

        PortRangeExhaustedException e = assertThrows(PortRangeExhaustedException.class, () -> map.reassign("a:1"));

        assertTrue(e.getMessage().contains("20000-20005"), e.getMessage());
        assertEquals(a, map.portsOf("a:1").orElseThrow());
        assertEquals(Optional.of(new PortOwner("a:1", true)), map.ownerOf(20000));
    }

    @Test
    void reassignPrefersNeverFailedBlocksOverEarlierFailedOnes() {
        BrokerPortMap map = new BrokerPortMap(20000, 20014); // five blocks
        map.allocate("a:1");
        map.allocate("b:1");
        map.allocate("c:1");
        assertEquals(20009, map.reassign("c:1").vipPort());
        // searching after a's block: 1 taken, 2 failed (c's old), 3 taken, 4 never tried
        assertEquals(20012, map.reassign("a:1").vipPort());
        assertEquals(20006, map.reassign("b:1").vipPort(), "only failed blocks left: the first after b's");
    }

    @Test
    void reassignOfStalePortsMovesOnce() {
        BrokerPortMap map = new BrokerPortMap(20000, 20099);
        BrokerPorts failed = map.allocate("a:1");

        BrokerPorts once = map.reassign(failed);
        BrokerPorts again = map.reassign(failed);

        assertNotEquals(failed, once);
        assertEquals(once, again);
    }

    @Test
    void reassignOfUnknownBrokerIsRejected() {
        BrokerPortMap map = new BrokerPortMap(20000, 20099);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> map.reassign("x:1"));
        assertTrue(e.getMessage().contains("x:1"), e.getMessage());
    }

    @Test
    void snapshotIsOrderedByPortAndDetached() {
        BrokerPortMap map = new BrokerPortMap(20000, 20099);
        map.allocate("z:1");
        map.allocate("a:1");
        map.allocate("m:1");
        map.reassign("z:1");

        Map<String, BrokerPorts> snapshot = map.snapshot();

        assertEquals(List.of("a:1", "m:1", "z:1"), List.copyOf(snapshot.keySet()));
        assertEquals(20009, snapshot.get("z:1").vipPort());
        assertThrows(UnsupportedOperationException.class, () -> snapshot.put("q:1", null));
        map.allocate("q:1");
        assertEquals(3, snapshot.size());
    }

    @Test
    void rejectsBadRangesAndAddresses() {
        assertThrows(IllegalArgumentException.class, () -> new BrokerPortMap(0, 10));
        assertThrows(IllegalArgumentException.class, () -> new BrokerPortMap(65534, 65536));
        assertThrows(IllegalArgumentException.class, () -> new BrokerPortMap(20010, 20000));
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class, () -> new BrokerPortMap(20000, 20001));
        assertTrue(small.getMessage().contains("20000-20001"), small.getMessage());
        assertEquals(1, new BrokerPortMap(65533, 65535).capacity());
        BrokerPortMap map = new BrokerPortMap(20000, 20099);
        assertThrows(IllegalArgumentException.class, () -> map.allocate(" "));
        assertThrows(IllegalArgumentException.class, () -> map.allocate(null));
    }

    @Test
    void concurrentAllocationGivesEachBrokerOneDistinctBlock() throws Exception {
        BrokerPortMap map = new BrokerPortMap(10000, 10000 + 3 * 200 - 1);
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        Map<String, Set<BrokerPorts>> seen = new ConcurrentHashMap<>();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int offset = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 200; i++) {
                        String broker = "10.0.0." + ((i + offset * 25) % 200) + ":10911";
                        seen.computeIfAbsent(broker, k -> ConcurrentHashMap.newKeySet()).add(map.allocate(broker));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(200, seen.size());
        Set<Integer> vipPorts = new HashSet<>();
        seen.forEach((broker, ports) -> {
            assertEquals(1, ports.size(), broker + " got " + ports);
            BrokerPorts p = ports.iterator().next();
            assertTrue(vipPorts.add(p.vipPort()), "shared block " + p);
            assertEquals(Optional.of(new PortOwner(broker, false)), map.ownerOf(p.mainPort()));
        });
        assertThrows(PortRangeExhaustedException.class, () -> map.allocate("one-too-many:1"));
    }
}
