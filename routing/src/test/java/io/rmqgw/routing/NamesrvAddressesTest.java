package io.rmqgw.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.routing.NamesrvAddresses.Address;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NamesrvAddressesTest {

    @Test
    void parsesRocketMqListSyntax() {
        NamesrvAddresses list = NamesrvAddresses.parse("127.0.0.1:9876;namesrv-1.internal:9877");

        assertEquals(List.of(new Address("127.0.0.1", 9876), new Address("namesrv-1.internal", 9877)), list.all());
        assertEquals("127.0.0.1:9876;namesrv-1.internal:9877", list.toString());
        assertEquals(list.all(), NamesrvAddresses.parse(list.toString()).all());
    }

    @Test
    void toleratesSpacesAndEmptyEntries() {
        NamesrvAddresses list = NamesrvAddresses.parse("  10.0.0.1:9876 ; 10.0.0.2:9876 ;\t");
        assertEquals(List.of(new Address("10.0.0.1", 9876), new Address("10.0.0.2", 9876)), list.all());
        assertEquals(1, NamesrvAddresses.parse("10.0.0.1:9876;").size());
    }

    @Test
    void acceptsIpv6AsRocketMqSplitsIt() {
        NamesrvAddresses list = NamesrvAddresses.parse("[::1]:9876;fe80::1%eth0:9876;2001:db8::7:9876");
        assertEquals(List.of(new Address("[::1]", 9876), new Address("fe80::1%eth0", 9876),
            new Address("2001:db8::7", 9876)), list.all());
    }

    @Test
    void namesTheBadEntry() {
        assertBad("10.0.0.1:9876;10.0.0.2", "'10.0.0.2'", "expected host:port");
        assertBad("10.0.0.1:abc", "'10.0.0.1:abc'", "not a number");
        assertBad("10.0.0.1:0", "'10.0.0.1:0'", "outside 1-65535");
        assertBad("10.0.0.1:65536", "'10.0.0.1:65536'", "outside 1-65535");
        assertBad("10.0.0.1:", "'10.0.0.1:'", "not a number");
        assertBad(":9876", "':9876'", "host is missing");
        assertBad("name server:9876", "'name server:9876'", "not a host name");
        assertBad("http://ns.example:80", "'http://ns.example:80'", "not a host name");
        assertBad("[::1:9876", "'[::1:9876'", "not a host name");
        assertBad("a..b:9876", "'a..b:9876'", "not a host name");
        assertBad("10.0.0.1:9876;10.0.0.1:9876", "'10.0.0.1:9876'", "listed twice");
        assertBad("", "empty", "host:port;host:port");
        assertBad(" ; ;", "no address", "host:port;host:port");
        assertThrows(IllegalArgumentException.class, () -> NamesrvAddresses.parse(null));
        assertThrows(IllegalArgumentException.class, () -> NamesrvAddresses.of(List.of()));
    }

    private static void assertBad(String list, String... messageParts) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NamesrvAddresses.parse(list));
        for (String part : messageParts) {
            assertTrue(e.getMessage().contains(part), "'" + list + "' -> " + e.getMessage());
        }
    }

    @Test
    void failureAdvancesTheCursorAndSuccessSticks() {
        NamesrvAddresses list = NamesrvAddresses.parse("a:1;b:1;c:1");
        assertEquals(0, list.preferredIndex());
        assertEquals(List.of(0, 1, 2), list.failoverOrder());

        list.markFailed(0);
        assertEquals(new Address("b", 1), list.preferred());
        assertEquals(List.of(1, 2, 0), list.failoverOrder());

        list.markFailed(0); // a late report about the old preferred one
        assertEquals(1, list.preferredIndex());

        list.markFailed(1);
        list.markFailed(2);
        assertEquals(0, list.preferredIndex(), "wraps");

        list.markGood(2);
        assertEquals(2, list.preferredIndex());
        list.markGood(2);
        list.markFailed(0);
        assertEquals(2, list.preferredIndex(), "a failure elsewhere does not move a good cursor");
        assertThrows(IndexOutOfBoundsException.class, () -> list.markFailed(3));
        assertThrows(IndexOutOfBoundsException.class, () -> list.markGood(-1));
    }

    @Test
    void singleEntryStaysPreferred() {
        NamesrvAddresses list = NamesrvAddresses.parse("a:1");
        list.markFailed(0);
        assertEquals(0, list.preferredIndex());
    }

    @Test
    void concurrentReportsOfOneFailureMoveTheCursorOnce() throws Exception {
        for (int round = 0; round < 50; round++) {
            NamesrvAddresses list = NamesrvAddresses.parse("a:1;b:1;c:1;d:1");
            ExecutorService pool = Executors.newFixedThreadPool(8);
            CountDownLatch start = new CountDownLatch(1);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    futures.add(pool.submit(() -> {
                        start.await();
                        list.markFailed(0);
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> f : futures) {
                    f.get(10, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(1, list.preferredIndex());
        }
    }

    @Test
    void aNameServerThatFailedIsTriedLastUntilItsBackOffEndsOrItConnects() {
        long[] now = {1_000};
        NamesrvAddresses list = clocked("a:1;b:1;c:1", now);

        list.dialing(0);
        list.markFailed(0);
        list.dialing(1);
        list.markGood(1);
        assertEquals(List.of(1, 2, 0), list.failoverOrder());

        list.markGood(2);
        assertEquals(List.of(2, 1, 0), list.failoverOrder(), "a failed lately: behind b though b comes after it");
        now[0] += NamesrvAddresses.FAILED_BACKOFF.toNanos();
        assertEquals(List.of(2, 0, 1), list.failoverOrder(), "a's back-off is over");

        list.markFailed(0);
        list.markGood(0);
        assertEquals(List.of(0, 1, 2), list.failoverOrder(), "a connect ends the back-off");
    }

    @Test
    void whenTheGoodOneFailsOnceTheCursorDoesNotWrapBackOntoTheOneThatFailedBefore() {
        long[] now = {1_000};
        NamesrvAddresses list = clocked("a:1;b:1", now);
        list.markFailed(0);
        list.markGood(1);

        // b refuses once (restarting): the cursor wraps onto a, and a is dialed next and fails again
        now[0] += 1_000_000;
        list.markFailed(1);
        assertEquals(0, list.preferredIndex());
        assertEquals(List.of(0, 1), list.failoverOrder(), "both failed: a's failure is the older one");
        now[0] += 1_000_000;
        list.markFailed(0);

        // the next request starts with b, whose failure is now the older one, not with a again
        assertEquals(List.of(1, 0), list.failoverOrder());
    }

    @Test
    void aDialUnderWayTooLongSendsNewDialsToTheOthersFirst() {
        long[] now = {1_000};
        NamesrvAddresses list = clocked("a:1;b:1", now);

        list.dialing(0);
        assertEquals(List.of(0, 1), list.failoverOrder(), "a young dial is no reason to go elsewhere");
        now[0] += NamesrvAddresses.SLOW_DIAL.toNanos();
        assertEquals(List.of(1, 0), list.failoverOrder(), "a dial that has not connected for a while");

        list.dialing(0); // a second dial joins: still the first one's wait that counts
        assertEquals(List.of(1, 0), list.failoverOrder());
        list.markGood(0); // the first one connected: the other is timed from now
        assertEquals(List.of(0, 1), list.failoverOrder());
        now[0] += NamesrvAddresses.SLOW_DIAL.toNanos();
        assertEquals(List.of(1, 0), list.failoverOrder(), "the second dial is slow too");
        list.markGood(0);
        assertEquals(List.of(0, 1), list.failoverOrder());

        list.dialing(0); // never reported (its connection abandoned): forgotten at last
        now[0] += NamesrvAddresses.FORGOTTEN_DIAL.toNanos();
        assertEquals(List.of(0, 1), list.failoverOrder());
    }

    /** {@code list} whose back-off and slow dials are measured with {@code now[0]} (nanoseconds). */
    private static NamesrvAddresses clocked(String list, long[] now) {
        NamesrvAddresses parsed = NamesrvAddresses.parse(list);
        parsed.useClock(() -> now[0]);
        return parsed;
    }
}
