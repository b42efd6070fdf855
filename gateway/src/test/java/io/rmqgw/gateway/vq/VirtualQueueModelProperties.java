package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;

/**
 * A model test of {@link VirtualQueueGroup}: random produces, broker fetches (with duplicates, filtered gaps
 * and overflowing answers), pulls, honest commits, disconnects, time passing, dead letters (sent or failed),
 * rebalances and gateway restarts (a new group started from the commits the broker holds), checked against a
 * model of the broker's log and of what clients consumed. After every step:
 * <ul>
 *   <li>no loss: a real commit never passes a message no client consumed and no DLQ took;</li>
 *   <li>real commits never go back;</li>
 *   <li>virtual offsets never go backwards on a queue, are consecutive within a pull, never below what the
 *       client asked for, and the re-addressed records say exactly that;</li>
 *   <li>the redelivery bound: the messages ever delivered at or past a queue's real commit (what a restart
 *       delivers again) are at most window-size;</li>
 *   <li>the state's own full check ({@link VirtualQueueGroup#checkInvariants()}) finds nothing.</li>
 * </ul>
 * Then consumers keep pulling and committing: every message ends acknowledged or dead-lettered, and every
 * buffer the broker and the group allocated is released.
 *
 * <p>Runs in the jqwik engine, outside JUnit Jupiter's LeakCheckExtension: buffers are checked directly
 * (reference count 0 at the end of every try).
 */
class VirtualQueueModelProperties {

    private static final Duration LEASE_TIMEOUT = Duration.ofSeconds(10);
    /** Close to the idle timeout, so that holders active on a queue also reach it. */
    private static final Duration LEASE_DEADLINE = Duration.ofSeconds(14);
    private static final int HOLDERS = 4;
    private static final int MAX_QUEUES = 3;
    private static final int LARGE_BODY = 30 * 1024;

    record Settings(int queues, int perRealQueue, int windowSize, int maxLeases, int maxDeliveries) {
        VirtualQueueConfig config() {
            return new VirtualQueueConfig("GID_model", Records.TOPIC, perRealQueue, windowSize,
                VirtualQueueConfig.MIN_WINDOW_BYTES, maxLeases, LEASE_TIMEOUT, LEASE_DEADLINE, maxDeliveries);
        }
    }

    sealed interface Op permits Produce, Fetch, PullOp, CommitOp, GiveBack, Disconnect, Tick, DeadLetters, Restart, Rebalance {
    }

    record Produce(int queue, int count, boolean someFiltered, boolean large) implements Op {
    }

    record Fetch(int queue, int max, boolean withDuplicate) implements Op {
    }

    record PullOp(int holder, int virtualQueue, int max) implements Op {
    }

    record CommitOp(int holder, int virtualQueue, int percent) implements Op {
    }

    /** The client's consumer asks for its oldest held message on the queue later (CONSUMER_SEND_MSG_BACK). */
    record GiveBack(int holder, int virtualQueue) implements Op {
    }

    record Disconnect(int holder, boolean forget) implements Op {
    }

    record Tick(int millis) implements Op {
    }

    record DeadLetters(boolean send) implements Op {
    }

    record Restart() implements Op {
    }

    record Rebalance(int queue) implements Op {
    }

    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void windowAndLeasesKeepTheirPromises(@ForAll("settings") Settings settings, @ForAll("ops") List<Op> ops) {
        World world = new World(settings);
        try {
            for (Op op : ops) {
                world.apply(op);
                world.check(op);
            }
            world.noteLeaseEnds();
            world.drain();
        } finally {
            world.closeAndCheckBuffers();
        }
        Statistics.label("redelivered").collect(world.redelivered > 0);
        Statistics.label("dead-lettered").collect(world.deadLettered.size() > 0);
        Statistics.label("restarted with deliveries to repeat").collect(world.restartsWithRedeliveries > 0);
        Statistics.label("window overflowed").collect(world.overflowed);
        for (RedeliveryReason reason : RedeliveryReason.values()) {
            Statistics.label("lease ended: " + reason.label()).collect(world.leasesEnded.contains(reason));
        }
        // the interesting paths are taken often enough for the checks above to mean something
        Statistics.label("redelivered").coverage(c -> c.check(true).percentage(p -> p > 60));
        Statistics.label("dead-lettered").coverage(c -> c.check(true).percentage(p -> p > 15));
        Statistics.label("restarted with deliveries to repeat").coverage(c -> c.check(true).percentage(p -> p > 40));
        Statistics.label("window overflowed").coverage(c -> c.check(true).percentage(p -> p > 60));
        Statistics.label("lease ended: deadline").coverage(c -> c.check(true).percentage(p -> p > 10));
        Statistics.label("lease ended: idle").coverage(c -> c.check(true).percentage(p -> p > 15));
        Statistics.label("lease ended: holder_gone").coverage(c -> c.check(true).percentage(p -> p > 30));
        Statistics.label("lease ended: gave_back").coverage(c -> c.check(true).percentage(p -> p > 15));
    }

    @Provide
    Arbitrary<Settings> settings() {
        return Combinators.combine(
            Arbitraries.integers().between(1, MAX_QUEUES),
            Arbitraries.integers().between(1, 3),
            Arbitraries.integers().between(1, 8),
            Arbitraries.integers().between(1, 6),
            Arbitraries.integers().between(1, 4)).as(Settings::new);
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Integer> queue = Arbitraries.integers().between(0, MAX_QUEUES - 1);
        Arbitrary<Integer> holder = Arbitraries.integers().between(1, HOLDERS);
        // chosen relative to the current count when applied: mostly one that exists, sometimes one past it
        Arbitrary<Integer> virtualQueue = Arbitraries.integers().between(0, 99);
        Arbitrary<Boolean> bool = Arbitraries.of(true, false);
        Arbitrary<Op> produce = Combinators.combine(queue, Arbitraries.integers().between(1, 6), bool,
            Arbitraries.integers().between(0, 9).map(i -> i == 0)).as(Produce::new);
        Arbitrary<Op> fetch = Combinators.combine(queue, Arbitraries.integers().between(1, 8),
            Arbitraries.integers().between(0, 4).map(i -> i == 0)).as(Fetch::new);
        Arbitrary<Op> pull = Combinators.combine(holder, virtualQueue, Arbitraries.integers().between(1, 5)).as(PullOp::new);
        Arbitrary<Op> commit = Combinators.combine(holder, virtualQueue, Arbitraries.integers().between(0, 100))
            .as(CommitOp::new);
        Arbitrary<Op> giveBack = Combinators.combine(holder, virtualQueue).as(GiveBack::new);
        Arbitrary<Op> disconnect = Combinators.combine(holder, bool).as(Disconnect::new);
        Arbitrary<Op> tick = Arbitraries.integers().between(0, 15_000).map(Tick::new);
        Arbitrary<Op> deadLetters = bool.map(DeadLetters::new);
        Arbitrary<Op> restart = Arbitraries.just(new Restart());
        Arbitrary<Op> rebalance = queue.map(Rebalance::new);
        Arbitrary<Op> any = Arbitraries.frequencyOf(
            Tuple.of(6, produce), Tuple.of(8, fetch), Tuple.of(12, pull), Tuple.of(8, commit), Tuple.of(2, giveBack), Tuple.of(2, disconnect),
            Tuple.of(5, tick), Tuple.of(3, deadLetters), Tuple.of(1, restart), Tuple.of(1, rebalance));
        return any.list().ofMinSize(20).ofMaxSize(250).withSizeDistribution(RandomDistribution.uniform());
    }

    // ---------------------------------------------------------------- the model

    /** A message of the broker's log: filtered ones are not for this group (the broker skips them). */
    record Stored(boolean filtered, int bodyLength) {
    }

    record Key(RealQueue queue, long offset) {
    }

    /** What a client connection knows of one virtual queue. */
    static final class ClientQueue {
        long next = -1; // -1: never pulled, asks the gateway's head (QUERY_CONSUMER_OFFSET)
        final TreeMap<Long, Key> received = new TreeMap<>();
    }

    static final class Client {
        long connection;
        final Map<Integer, ClientQueue> queues = new HashMap<>();
    }

    static final class World {
        final Settings settings;
        final VirtualQueueConfig config;
        final List<RealQueue> queues = new ArrayList<>();
        final Map<RealQueue, List<Stored>> log = new HashMap<>();
        final Map<RealQueue, Long> brokerCommit = new HashMap<>();
        final Map<RealQueue, Long> verifiedUpTo = new HashMap<>();
        final Set<RealQueue> owned = new HashSet<>();
        final Set<Key> consumed = new HashSet<>();
        final Set<Key> deadLettered = new HashSet<>();
        /** Dead letters of the current ownership of their queue: a new owner (or process) may deliver the others again. */
        final Set<Key> deadLetteredWhileOwned = new HashSet<>();
        final Set<Key> deliveredEver = new HashSet<>();
        final Map<Integer, Client> clients = new HashMap<>();
        /** Per virtual queue, the highest offset handed out by the current group. */
        final Map<Integer, Long> lastGiven = new HashMap<>();
        final List<ByteBuf> buffers = new ArrayList<>();
        long nextConnection = 1;
        long now = 1_000_000_000L;
        VirtualQueueGroup group;
        int redelivered;
        int restartsWithRedeliveries;
        boolean overflowed;
        /** Reasons leases ended for, before the drain (which always ends idle ones). */
        final Set<RedeliveryReason> leasesEnded = new HashSet<>();

        World(Settings settings) {
            this.settings = settings;
            this.config = settings.config();
            for (int i = 0; i < settings.queues(); i++) {
                RealQueue q = new RealQueue("broker-a", i);
                queues.add(q);
                log.put(q, new ArrayList<>());
                brokerCommit.put(q, 0L);
                verifiedUpTo.put(q, 0L);
            }
            for (int h = 1; h <= HOLDERS; h++) {
                Client c = new Client();
                c.connection = nextConnection++;
                clients.put(h, c);
            }
            startGroup();
        }

        void noteLeaseEnds() {
            group.stats().redeliveries().forEach((reason, count) -> {
                if (count > 0) {
                    leasesEnded.add(reason);
                }
            });
        }

        void startGroup() {
            group = new VirtualQueueGroup(config, () -> now, UnpooledByteBufAllocator.DEFAULT);
            lastGiven.clear();
            for (RealQueue q : queues) {
                assertTrue(group.addRealQueue(q, brokerCommit.get(q)));
                owned.add(q);
            }
        }

        /** 0-89: one of the current virtual queues; 90-99: one at or past the count. */
        int virtualQueue(int choice) {
            int count = Math.max(1, group.virtualQueueCount());
            return choice < 90 ? choice % count : count + choice % 3;
        }

        RealQueue queue(int index) {
            return queues.get(index % queues.size());
        }

        void apply(Op op) {
            if (op instanceof Produce p) {
                produce(p);
            } else if (op instanceof Fetch f) {
                fetch(queue(f.queue()), f.max(), f.withDuplicate());
            } else if (op instanceof PullOp p) {
                pull(clients.get(p.holder()), virtualQueue(p.virtualQueue()), p.max());
            } else if (op instanceof CommitOp c) {
                commit(clients.get(c.holder()), virtualQueue(c.virtualQueue()), c.percent());
            } else if (op instanceof GiveBack g) {
                giveBack(clients.get(g.holder()), virtualQueue(g.virtualQueue()));
            } else if (op instanceof Disconnect d) {
                disconnect(clients.get(d.holder()), d.forget());
            } else if (op instanceof Tick t) {
                now += t.millis() * 1_000_000L;
                group.expireLeases();
            } else if (op instanceof DeadLetters d) {
                deadLetters(d.send());
            } else if (op instanceof Restart) {
                restart();
            } else if (op instanceof Rebalance r) {
                rebalance(queue(r.queue()));
            }
        }

        void produce(Produce p) {
            List<Stored> messages = log.get(queue(p.queue()));
            for (int i = 0; i < p.count(); i++) {
                boolean filtered = p.someFiltered() && i % 2 == 1;
                messages.add(new Stored(filtered, p.large() ? LARGE_BODY : 8 + i));
            }
        }

        /** The broker's answer to a pull from the fetch offset, taken into the window. */
        void fetch(RealQueue q, int max, boolean withDuplicate) {
            long from = group.fetchOffset(q);
            if (from < 0) {
                return; // not owned
            }
            List<Stored> messages = log.get(q);
            ByteBuf body = Unpooled.buffer();
            buffers.add(body);
            if (withDuplicate && from > 0) {
                body.writeBytes(Records.record(q, from - 1, messages.get((int) from - 1).bodyLength(), 0));
            }
            long scan = from;
            int matched = 0;
            for (; scan < messages.size() && matched < max; scan++) {
                Stored s = messages.get((int) scan);
                if (!s.filtered()) {
                    body.writeBytes(Records.record(q, scan, s.bodyLength(), 0));
                    matched++;
                }
            }
            int sent = matched;
            if (scan == from) {
                body.release(); // NO_NEW_MSG: nothing to take
                return;
            }
            int room = group.fetchRoom(q);
            Appended a = group.append(q, body, scan);
            assertFalse(a.malformed());
            assertEquals(withDuplicate && from > 0 ? 1 : 0, a.duplicates());
            assertEquals(sent, a.accepted() + a.overflow());
            assertTrue(a.accepted() <= room, "accepted " + a + " with room " + room);
            if (a.overflow() > 0) {
                overflowed = true;
                assertTrue(a.fetchOffset() <= scan);
            } else {
                assertEquals(scan, a.fetchOffset(), "past what the broker filtered out");
            }
        }

        void pull(Client c, int virtualQueue, int max) {
            ClientQueue cq = c.queues.computeIfAbsent(virtualQueue, v -> new ClientQueue());
            long requested = cq.next >= 0 ? cq.next : group.headOffset(virtualQueue);
            Pull pull = group.pull(virtualQueue, c.connection, requested, max);
            buffers.add(pull.records());
            try {
                switch (pull.status()) {
                    case NO_SUCH_QUEUE -> {
                        assertTrue(virtualQueue >= group.virtualQueueCount());
                        return;
                    }
                    case OFFSET_INVALID -> fail("offsets the model sends are valid: " + requested);
                    case NOTHING_AVAILABLE, LEASE_LIMIT -> assertTrue(pull.deliveries().isEmpty());
                    case FOUND -> checkDeliveries(c, cq, virtualQueue, requested, pull);
                }
                assertTrue(pull.nextOffset() >= requested, "the head never goes below what the client asked for");
                cq.next = pull.nextOffset();
            } finally {
                pull.release();
            }
        }

        void checkDeliveries(Client c, ClientQueue cq, int virtualQueue, long requested, Pull pull) {
            List<Delivery> deliveries = pull.deliveries();
            assertFalse(deliveries.isEmpty());
            long first = deliveries.get(0).virtualOffset();
            assertTrue(first >= requested, "virtual offset " + first + " below the requested " + requested);
            Long last = lastGiven.get(virtualQueue);
            assertTrue(last == null || first > last, "virtual offset " + first + " after " + last + " went back");
            ByteBuf records = pull.records();
            int pos = records.readerIndex();
            for (int i = 0; i < deliveries.size(); i++) {
                Delivery d = deliveries.get(i);
                assertEquals(first + i, d.virtualOffset(), "consecutive");
                assertEquals(virtualQueue, d.virtualQueue());
                assertEquals(c.connection, d.holder());
                Key key = new Key(d.realQueue(), d.realOffset());
                Stored s = log.get(d.realQueue()).get((int) d.realOffset());
                assertFalse(s.filtered(), "delivered a message the broker filtered out");
                assertFalse(deadLetteredWhileOwned.contains(key), "delivered after the DLQ took it: " + key);
                assertTrue(d.deliveries() >= 1 && d.deliveries() <= settings.maxDeliveries());
                if (d.deliveries() > 1 || !deliveredEver.add(key)) {
                    redelivered++;
                }
                deliveredEver.add(key);
                // the record, re-addressed
                int length = StoredRecords.recordLength(records, pos);
                assertTrue(length > 0, "record " + i + " is well-formed");
                assertEquals(virtualQueue, StoredRecords.queueId(records, pos));
                assertEquals(d.virtualOffset(), StoredRecords.queueOffset(records, pos));
                assertEquals(Records.commitLogOffset(d.realQueue(), d.realOffset()), StoredRecords.commitLogOffset(records, pos));
                assertEquals(d.deliveries() - 1, StoredRecords.reconsumeTimes(records, pos));
                pos += length;
                cq.received.put(d.virtualOffset(), key);
            }
            assertEquals(records.writerIndex(), pos, "one record per delivery");
            long end = first + deliveries.size();
            assertEquals(end, pull.nextOffset());
            assertEquals(end, group.headOffset(virtualQueue));
            lastGiven.put(virtualQueue, end - 1);
        }

        /** An honest client: it consumed everything it received below the offset it commits. */
        void commit(Client c, int virtualQueue, int percent) {
            ClientQueue cq = c.queues.get(virtualQueue);
            if (cq == null || cq.next < 0) {
                return;
            }
            long offset;
            if (cq.received.isEmpty()) {
                offset = cq.next;
            } else {
                List<Long> held = new ArrayList<>(cq.received.keySet());
                int index = percent * held.size() / 100;
                offset = index < held.size() ? held.get(index) : held.get(held.size() - 1) + 1;
            }
            var below = cq.received.headMap(offset, false);
            consumed.addAll(below.values());
            below.clear();
            group.commit(virtualQueue, c.connection, offset);
        }

        /** Gives back the oldest message it holds there: not consumed, so it must come again (or go to the DLQ). */
        void giveBack(Client c, int virtualQueue) {
            ClientQueue cq = c.queues.get(virtualQueue);
            if (cq == null || cq.received.isEmpty()) {
                return;
            }
            Map.Entry<Long, Key> oldest = cq.received.pollFirstEntry();
            Key key = oldest.getValue();
            boolean held = group.giveBack(c.connection, Records.commitLogOffset(key.queue(), key.offset()));
            if (held) {
                assertFalse(group.giveBack(c.connection, Records.commitLogOffset(key.queue(), key.offset())),
                    "a message given back is no longer leased to its holder");
            }
        }

        void disconnect(Client c, boolean forget) {
            group.holderGone(c.connection);
            c.connection = nextConnection++;
            if (forget) {
                c.queues.clear(); // rebalanced away: what it held is never consumed by it
            }
        }

        void deadLetters(boolean send) {
            for (DeadLetter d : group.takeDeadLetters()) {
                Key key = new Key(d.queue(), d.queueOffset());
                assertFalse(deadLetteredWhileOwned.contains(key));
                assertEquals(settings.maxDeliveries(), d.deliveries());
                assertEquals(Records.commitLogOffset(d.queue(), d.queueOffset()), d.commitLogOffset());
                if (send) {
                    assertTrue(group.deadLettered(d.queue(), d.queueOffset()));
                    deadLettered.add(key);
                    deadLetteredWhileOwned.add(key);
                } else {
                    assertTrue(group.deadLetterFailed(d.queue(), d.queueOffset()));
                }
            }
        }

        /** The gateway process dies: only the commits the brokers hold survive. */
        void restart() {
            for (RealQueue q : queues) {
                long pending = deliveredEver.stream().filter(k -> k.queue().equals(q) && k.offset() >= brokerCommit.get(q))
                    .count();
                if (pending > 0) {
                    restartsWithRedeliveries++;
                }
            }
            noteLeaseEnds();
            group.close();
            owned.clear();
            deadLetteredWhileOwned.clear();
            for (Client c : clients.values()) {
                c.connection = nextConnection++; // every connection broke; clients keep their offsets
            }
            startGroup();
        }

        void rebalance(RealQueue q) {
            if (owned.remove(q)) {
                RealCommit commit = group.removeRealQueue(q);
                assertNotNull(commit);
                pushed(commit);
                assertEquals(-1, group.fetchOffset(q));
                deadLetteredWhileOwned.removeIf(k -> k.queue().equals(q));
            } else {
                assertTrue(group.addRealQueue(q, brokerCommit.get(q)));
                owned.add(q);
            }
        }

        void pushed(RealCommit commit) {
            long before = brokerCommit.get(commit.queue());
            assertTrue(commit.offset() >= before, "commit of " + commit.queue() + " went back from " + before + " to "
                + commit.offset());
            brokerCommit.put(commit.queue(), commit.offset());
        }

        void check(Op after) {
            group.takeCommits().forEach(this::pushed);
            for (RealQueue q : queues) {
                long commit = brokerCommit.get(q);
                List<Stored> messages = log.get(q);
                assertTrue(commit <= messages.size(), "commit past the log");
                for (long o = verifiedUpTo.get(q); o < commit; o++) {
                    Key key = new Key(q, o);
                    if (!messages.get((int) o).filtered() && !consumed.contains(key) && !deadLettered.contains(key)) {
                        fail("after " + after + ": the real commit " + commit + " of " + q + " passes " + o
                            + ", which no client consumed and no DLQ took");
                    }
                }
                verifiedUpTo.put(q, commit);
                long repeatable = deliveredEver.stream().filter(k -> k.queue().equals(q) && k.offset() >= commit).count();
                assertTrue(repeatable <= settings.windowSize(), "after " + after + ": " + repeatable
                    + " delivered messages of " + q + " at or past its commit " + commit + ", window-size "
                    + settings.windowSize());
            }
            assertEquals(List.of(), group.checkInvariants(), "after " + after);
        }

        /** Consumers keep pulling and committing everything: every message ends acknowledged or dead-lettered. */
        void drain() {
            for (RealQueue q : queues) {
                if (!owned.contains(q)) {
                    rebalance(q);
                }
            }
            Client drainer = new Client();
            drainer.connection = nextConnection++;
            int total = log.values().stream().mapToInt(List::size).sum();
            int rounds = 0;
            while (!drained()) {
                assertTrue(++rounds <= total + 20, "not drained after " + rounds + " rounds: commits " + brokerCommit
                    + ", stats " + group.stats());
                for (RealQueue q : queues) {
                    fetch(q, 8, false);
                }
                for (int v = 0; v < group.virtualQueueCount(); v++) {
                    pull(drainer, v, 32);
                    commit(drainer, v, 100);
                }
                deadLetters(true);
                now += LEASE_TIMEOUT.toNanos() + 1_000_000_000L; // whoever else holds leases is idle
                group.expireLeases();
                check(new Tick(0));
            }
            for (RealQueue q : queues) {
                List<Stored> messages = log.get(q);
                for (int o = 0; o < messages.size(); o++) {
                    Key key = new Key(q, o);
                    assertTrue(messages.get(o).filtered() || consumed.contains(key) || deadLettered.contains(key),
                        key + " neither consumed nor dead-lettered");
                }
            }
            VirtualQueueStats stats = group.stats();
            assertEquals(0, stats.leased());
            assertEquals(0, stats.windowMessages());
            assertEquals(0, stats.windowBytes());
            assertEquals(0, stats.invariantViolationCount());
        }

        boolean drained() {
            for (RealQueue q : queues) {
                if (brokerCommit.get(q) < log.get(q).size()) {
                    return false;
                }
            }
            return true;
        }

        void closeAndCheckBuffers() {
            group.close();
            for (ByteBuf b : buffers) {
                if (b != Unpooled.EMPTY_BUFFER) {
                    assertEquals(0, b.refCnt(), "a broker answer or pull answer was not released");
                }
            }
        }
    }
}
