package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Each rule of {@link VirtualQueueGroup} on a small example; pooled buffers, so the leak detector watches them. */
class VirtualQueueGroupTest {

    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final RealQueue Q0 = new RealQueue("broker-a", 0);
    private static final RealQueue Q1 = new RealQueue("broker-a", 1);
    private static final long A = 101;
    private static final long B = 202;
    private static final long SECOND = 1_000_000_000L;

    private long now = 5 * SECOND;
    private final List<ByteBuf> answers = new ArrayList<>();
    private VirtualQueueGroup group;

    private VirtualQueueGroup group(int perRealQueue, int windowSize, int maxLeases, int maxDeliveries) {
        return group(new VirtualQueueConfig("GID_test", Records.TOPIC, perRealQueue, windowSize, null, maxLeases,
            Duration.ofSeconds(10), Duration.ofSeconds(30), maxDeliveries));
    }

    private VirtualQueueGroup group(VirtualQueueConfig config) {
        group = new VirtualQueueGroup(config, () -> now, ALLOC);
        return group;
    }

    @AfterEach
    void closeAndCheck() {
        if (group != null) {
            group.close();
        }
        for (ByteBuf b : answers) {
            assertEquals(0, b.refCnt(), "a buffer is still held");
        }
    }

    private Pull pull(int virtualQueue, long holder, long requested, int max) {
        Pull p = group.pull(virtualQueue, holder, requested, max);
        if (p.status() == Pull.Status.FOUND) {
            answers.add(p.records());
        }
        return p;
    }

    private Appended append(RealQueue q, long nextBegin, long... offsets) {
        ByteBuf body = Records.body(ALLOC, q, offsets);
        answers.add(body);
        return group.append(q, body, nextBegin);
    }

    private static List<MessageExt> decode(Pull p) {
        try {
            return MessageDecoder.decodes(p.records().nioBuffer());
        } finally {
            p.release();
        }
    }

    private static String body(MessageExt m) {
        return new String(m.getBody(), StandardCharsets.UTF_8).replace("x", "");
    }

    @Test
    void aPullLeasesRoundRobinWithConsecutiveOffsetsAndReaddressedRecords() {
        group(4, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        group.addRealQueue(Q1, 50);
        assertEquals(8, group.virtualQueueCount());
        assertEquals(3, append(Q0, 3, 0, 1, 2).accepted());
        assertEquals(2, append(Q1, 52, 50, 51).accepted());

        Pull p = pull(5, A, 0, 4);

        assertEquals(Pull.Status.FOUND, p.status());
        assertEquals(List.of(
            new Delivery(Q0, 0, 5, 0, 1, A), new Delivery(Q1, 50, 5, 1, 1, A),
            new Delivery(Q0, 1, 5, 2, 1, A), new Delivery(Q1, 51, 5, 3, 1, A)), p.deliveries());
        assertEquals(4, p.nextOffset());
        List<MessageExt> records = decode(p);
        assertEquals(4, records.size());
        String[] origins = {"broker-a#0@0", "broker-a#1@50", "broker-a#0@1", "broker-a#1@51"};
        for (int i = 0; i < 4; i++) {
            MessageExt m = records.get(i);
            assertEquals(5, m.getQueueId(), "QUEUEID is the virtual queue");
            assertEquals(i, m.getQueueOffset(), "QUEUEOFFSET is the virtual offset");
            assertEquals(0, m.getReconsumeTimes());
            assertEquals(origins[i], body(m), "every other byte as stored");
            assertEquals(origins[i], m.getUserProperty("origin"));
            assertEquals(Records.TOPIC, m.getTopic());
        }
        assertEquals(Records.commitLogOffset(Q1, 51), records.get(3).getCommitLogOffset());
        assertEquals(new Delivery(Q1, 50, 5, 1, 1, A), group.lease(5, 1));
        assertNull(group.lease(5, 9));
        VirtualQueueStats stats = group.stats();
        assertEquals(4, stats.leased());
        assertEquals(1, stats.available());
        assertEquals(5, stats.windowMessages());
        assertEquals(4, stats.deliveries());
    }

    @Test
    void theWindowKeepsItsBytesUntouchedWhileCopiesAreReaddressed() {
        group(1, 4, 10, 5);
        group.addRealQueue(Q0, 0);
        byte[] stored = Records.record(Q0, 0);
        append(Q0, 1, 0);
        decode(pull(0, A, 0, 1));
        group.holderGone(A);

        Pull again = pull(0, B, 7, 1);
        MessageExt m = decode(again).get(0);
        assertEquals(7, m.getQueueOffset());
        assertEquals(1, m.getReconsumeTimes(), "a redelivery raises RECONSUMETIMES");
        // a third delivery copies the bytes exactly as stored, patched again
        group.holderGone(B);
        Pull third = pull(0, A, 0, 1);
        ByteBuf copy = third.records();
        byte[] bytes = new byte[copy.readableBytes()];
        copy.getBytes(copy.readerIndex(), bytes);
        third.release();
        assertEquals(stored.length, bytes.length);
        for (int i = 0; i < stored.length; i++) {
            boolean patched = (i >= 12 && i < 16) || (i >= 20 && i < 28) || (i >= 72 && i < 76);
            if (!patched) {
                assertEquals(stored[i], bytes[i], "byte " + i);
            }
        }
    }

    @Test
    void virtualOffsetsNeverGoBackwards() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 6, 0, 1, 2, 3, 4, 5);

        Pull first = pull(0, A, 100, 2);
        assertEquals(100, first.deliveries().get(0).virtualOffset(), "a client that saw offsets up to 100 gets 100 on");
        first.release();
        Pull lower = pull(0, B, 3, 2);
        assertEquals(102, lower.deliveries().get(0).virtualOffset(), "a lower request never goes back");
        assertEquals(104, lower.nextOffset());
        lower.release();
        assertEquals(104, group.headOffset(0));
        Pull empty = pull(0, A, 0, 0);
        assertEquals(104, empty.nextOffset());
        assertEquals(0, group.headOffset(0) - 104);
    }

    @Test
    void aCommitAcknowledgesOnlyItsHoldersLeasesBelowIt() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 4, 0, 1, 2, 3);
        pull(0, A, 0, 2).release();   // A: virtual 0, 1 = real 0, 1
        pull(0, B, 0, 2).release();   // B: virtual 2, 3 = real 2, 3

        assertEquals(0, group.commit(0, B, 2), "nothing of B's is below 2");
        assertEquals(1, group.commit(0, B, 3), "B's lease at 2, not A's below it");
        assertEquals(List.of(), group.takeCommits(), "real 0 and 1 are still leased");
        assertEquals(1, group.commit(0, A, 1));
        assertEquals(List.of(new RealCommit(Q0, 1)), group.takeCommits());
        assertEquals(1, group.commit(0, A, 99));
        assertEquals(List.of(new RealCommit(Q0, 3)), group.takeCommits(), "real 2 was acknowledged by B");
        assertEquals(List.of(), group.takeCommits(), "reported once");
        assertEquals(0, group.commit(7, A, 99), "a virtual queue never pulled from: nothing");
        assertEquals(1, group.commit(0, B, 4));
        assertEquals(List.of(new RealCommit(Q0, 4)), group.takeCommits());
        assertEquals(4, group.stats().acknowledged());
        assertEquals(0, group.stats().windowMessages());
    }

    @Test
    void theRealCommitStopsAtTheLowestUnacknowledgedMessage() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 10);
        append(Q0, 15, 10, 11, 12, 13, 14);
        pull(0, A, 0, 1).release();   // real 10 at virtual 0
        pull(0, B, 0, 4).release();   // real 11..14 at virtual 1..4
        group.commit(0, B, 5);
        assertEquals(List.of(), group.takeCommits(), "10 is not acknowledged: nothing past it is committed");
        assertEquals(5, group.stats().windowMessages(), "acknowledged messages keep their place behind 10");
        assertEquals(Records.record(Q0, 10).length, group.stats().windowBytes(), "but not their bytes");
        group.commit(0, A, 1);
        assertEquals(List.of(new RealCommit(Q0, 15)), group.takeCommits());
    }

    @Test
    void aGoneHolderIsRedeliveredFirstAndCounted() {
        group(2, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 4, 0, 1, 2, 3);
        pull(0, A, 0, 2).release();
        assertEquals(2, group.holderGone(A));
        assertEquals(0, group.holderGone(A));

        Pull p = pull(1, B, 0, 3);
        assertEquals(List.of(new Delivery(Q0, 0, 1, 0, 2, B), new Delivery(Q0, 1, 1, 1, 2, B),
            new Delivery(Q0, 2, 1, 2, 1, B)), p.deliveries(), "redeliveries first, then fresh");
        List<MessageExt> records = decode(p);
        assertEquals(1, records.get(0).getReconsumeTimes());
        assertEquals(0, records.get(2).getReconsumeTimes());
        assertEquals(2L, group.stats().redeliveries().get(RedeliveryReason.HOLDER_GONE));
        assertEquals(0L, group.stats().redeliveries().get(RedeliveryReason.IDLE));
        assertEquals(0, group.commit(0, A, 99), "A's late commit acknowledges nothing");
    }

    @Test
    void anIdleHolderLosesItsLeasesOnThatQueueOnly() {
        group(2, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 4, 0, 1, 2, 3);
        pull(0, A, 0, 1).release();
        pull(1, A, 0, 1).release();
        now += 8 * SECOND;
        group.commit(1, A, 0);       // activity on virtual queue 1, none on 0
        now += 2 * SECOND;
        assertEquals(1, group.expireLeases(), "idle 10s on queue 0");
        assertEquals(1, group.stats().leased());
        assertEquals(1L, group.stats().redeliveries().get(RedeliveryReason.IDLE));
        now += 8 * SECOND - 1;
        assertEquals(0, group.expireLeases());
        now += 1;
        assertEquals(1, group.expireLeases(), "10s after its commit on queue 1");
        assertEquals(0, group.stats().leased());
    }

    @Test
    void anActiveHolderStillLosesALeaseAtItsDeadline() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 2, 0, 1);
        pull(0, A, 0, 1).release();   // real 0, deadline 30s from now
        for (int i = 0; i < 5; i++) {
            now += 5 * SECOND;
            group.commit(0, A, 0);    // alive, but never acknowledges
            assertEquals(0, group.expireLeases());
        }
        now += 5 * SECOND;
        group.commit(0, A, 0);
        assertEquals(1, group.expireLeases());
        assertEquals(1L, group.stats().redeliveries().get(RedeliveryReason.DEADLINE));
        Pull p = pull(0, A, 1, 1);
        assertEquals(new Delivery(Q0, 0, 0, 1, 2, A), p.deliveries().get(0));
        p.release();
    }

    @Test
    void pastMaxDeliveriesAMessageIsADeadLetterUntilTheDlqTakesIt() {
        group(1, 16, 100, 2);
        group.addRealQueue(Q0, 0);
        append(Q0, 2, 0, 1);
        for (int delivery = 1; delivery <= 2; delivery++) {
            Pull p = pull(0, A, 0, 1);
            assertEquals(delivery, p.deliveries().get(0).deliveries());
            assertEquals(0, p.deliveries().get(0).realOffset());
            p.release();
            group.holderGone(A);
        }
        assertEquals(1, group.stats().deadLetterPending());
        Pull next = pull(0, A, 0, 5);
        assertEquals(1, next.deliveries().size(), "the dead letter is not delivered again");
        assertEquals(1, next.deliveries().get(0).realOffset());
        next.release();
        group.commit(0, A, 99);
        assertEquals(List.of(), group.takeCommits(), "the dead letter holds the commit");

        List<DeadLetter> dead = group.takeDeadLetters();
        assertEquals(List.of(new DeadLetter(Q0, 0, Records.commitLogOffset(Q0, 0), 2)), dead);
        assertEquals(List.of(), group.takeDeadLetters(), "handed out once");
        assertTrue(group.deadLetterFailed(Q0, 0));
        assertEquals(dead, group.takeDeadLetters(), "a failed send is handed out again");
        assertFalse(group.deadLettered(Q0, 1), "not a dead letter");
        assertTrue(group.deadLettered(Q0, 0));
        assertFalse(group.deadLettered(Q0, 0), "once");
        assertEquals(List.of(new RealCommit(Q0, 2)), group.takeCommits());
        assertEquals(1, group.stats().deadLettered());
        assertEquals(0, group.stats().deadLetterPending());
    }

    @Test
    void theWindowIsBoundedByCount() {
        group(1, 4, 100, 5);
        group.addRealQueue(Q0, 0);
        assertEquals(4, group.fetchRoom(Q0));
        Appended a = append(Q0, 6, 0, 1, 2, 3, 4, 5);
        assertEquals(new Appended(4, 0, 2, false, 4), a, "4 and 5 are fetched again later");
        assertEquals(0, group.fetchRoom(Q0));
        assertEquals(new Appended(0, 0, 2, false, 4), append(Q0, 6, 4, 5));
        pull(0, A, 0, 4).release();
        group.commit(0, A, 2);
        assertEquals(2, group.fetchRoom(Q0), "the window slid by two");
        assertEquals(new Appended(2, 1, 0, false, 6), append(Q0, 6, 3, 4, 5));
    }

    @Test
    void theWindowIsBoundedByBytesButTakesOneLargeRecord() {
        int large = 40 * 1024;
        group(new VirtualQueueConfig("GID_test", Records.TOPIC, 1, 100, VirtualQueueConfig.MIN_WINDOW_BYTES, 100,
            null, null, null));
        group.addRealQueue(Q0, 0);
        ByteBuf body = ALLOC.buffer();
        answers.add(body);
        for (int o = 0; o < 3; o++) {
            body.writeBytes(Records.record(Q0, o, large, 0));
        }
        assertEquals(new Appended(1, 0, 2, false, 1), group.append(Q0, body, 3), "two would pass 64 KiB");
        assertTrue(group.fetchRoom(Q0) > 0);
        ByteBuf huge = ALLOC.buffer();
        answers.add(huge);
        huge.writeBytes(Records.record(Q0, 1, 100 * 1024, 0));
        assertEquals(0, group.append(Q0, huge, 2).accepted(), "the window already holds bytes");
        pull(0, A, 0, 1).release();
        group.commit(0, A, 1);
        ByteBuf again = ALLOC.buffer();
        answers.add(again);
        again.writeBytes(Records.record(Q0, 1, 100 * 1024, 0));
        assertEquals(1, group.append(Q0, again, 2).accepted(), "one record larger than the bound, alone");
        assertEquals(0, group.fetchRoom(Q0));
    }

    @Test
    void duplicatesAreSkippedAndFilteredGapsPassed() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        assertEquals(new Appended(2, 0, 0, false, 2), append(Q0, 2, 0, 1));
        assertEquals(new Appended(1, 2, 0, false, 3), append(Q0, 3, 0, 1, 2));
        assertEquals(new Appended(2, 0, 0, false, 12), append(Q0, 12, 5, 9), "the broker filtered 3, 4, 6-8, 10, 11");
        assertEquals(new Appended(0, 0, 0, false, 20), append(Q0, 20), "nothing matched up to 20");
        group.skipFetchTo(Q0, 15);
        assertEquals(20, group.fetchOffset(Q0), "never back");
        group.skipFetchTo(Q0, 30);
        assertEquals(30, group.fetchOffset(Q0));
        Pull p = pull(0, A, 0, 10);
        assertEquals(List.of(0L, 1L, 2L, 5L, 9L), p.deliveries().stream().map(Delivery::realOffset).toList());
        p.release();
        group.commit(0, A, 5);
        assertEquals(List.of(new RealCommit(Q0, 30)), group.takeCommits());
    }

    @Test
    void theWalkStopsAtAMalformedRecordOrOneOfAnotherQueue() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        ByteBuf body = Records.body(ALLOC, Q0, 0, 1);
        answers.add(body);
        body.writeBytes(new byte[] {0, 0, 0, 99, 1, 2, 3});
        assertEquals(new Appended(2, 0, 0, true, 2), group.append(Q0, body, 50), "not past what was not read");
        ByteBuf foreign = ALLOC.buffer();
        answers.add(foreign);
        foreign.writeBytes(Records.record(Q0, 2)).writeBytes(Records.record(Q1, 3));
        assertEquals(new Appended(1, 0, 0, true, 3), group.append(Q0, foreign, 50));
        assertEquals(0, group.stats().invariantViolationCount());
    }

    @Test
    void removingAQueueReportsItsCommitEndsItsLeasesAndReleasesItsBytes() {
        group(2, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        group.addRealQueue(Q1, 0);
        assertFalse(group.addRealQueue(Q1, 7), "already owned");
        append(Q0, 3, 0, 1, 2);
        append(Q1, 3, 0, 1, 2);
        pull(3, A, 0, 4).release();   // Q0 0, Q1 0, Q0 1, Q1 1
        group.commit(3, A, 1);        // Q0 0 acknowledged

        assertEquals(new RealCommit(Q1, 0), group.removeRealQueue(Q1));
        assertNull(group.removeRealQueue(Q1));
        assertEquals(2, group.virtualQueueCount());
        assertEquals(Appended.NOT_OWNED, append(Q1, 3, 0));
        assertEquals(-1, group.fetchOffset(Q1));
        assertEquals(0, group.fetchRoom(Q1));
        assertEquals(Pull.Status.NO_SUCH_QUEUE, pull(3, A, 4, 4).status());
        assertEquals(1, group.stats().leased(), "Q0 1 only");
        assertEquals(1, group.commit(3, A, 99), "leases of the removed queue are gone");
        assertEquals(List.of(new RealCommit(Q0, 2)), group.takeCommits());
        VirtualQueueStats stats = group.stats();
        assertEquals(1, stats.windowMessages());
        assertEquals(Records.record(Q0, 2).length, stats.windowBytes());
        assertEquals(List.of(), group.checkInvariants());
    }

    @Test
    void aVirtualQueueHoldsAtMostMaxLeases() {
        group(1, 16, 3, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 5, 0, 1, 2, 3, 4);
        Pull first = pull(0, A, 0, 2);
        assertEquals(2, first.deliveries().size());
        first.release();
        Pull second = pull(0, B, 0, 5);
        assertEquals(1, second.deliveries().size(), "one more fits");
        second.release();
        Pull full = pull(0, B, 3, 5);
        assertEquals(Pull.Status.LEASE_LIMIT, full.status());
        assertEquals(3, full.nextOffset());
        group.commit(0, B, 3);
        Pull after = pull(0, B, 3, 5);
        assertEquals(1, after.deliveries().size());
        after.release();
    }

    @Test
    void aPullFromBelowItsOwnLeasesShowsTheyNeverArrived() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 5, 0, 1, 2);
        Pull lost = pull(0, A, 0, 2); // the answer never reached the client
        lost.release();
        Pull again = pull(0, A, 0, 5); // it asks from where it stands: offset 0
        assertEquals(3, again.deliveries().size(), "the two lost ones come again, with the third");
        assertEquals(2, again.deliveries().get(0).virtualOffset(), "virtual offsets never go back");
        assertEquals(2L, group.stats().redeliveries().get(RedeliveryReason.NOT_RECEIVED));
        again.release();
        group.commit(0, A, 5);
        assertEquals(3, group.stats().acknowledged());
        assertEquals(List.of(), group.checkInvariants());
    }

    @Test
    void aHolderStartingOverOnAQueueGetsItsDroppedLeasesDeliveredAgain() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 5, 0, 1, 2);
        Pull dropped = pull(0, A, 0, 2); // then A lost the queue in a rebalance and dropped these
        dropped.release();
        assertEquals(2, group.restart(0, A)); // A has it again: QUERY_CONSUMER_OFFSET
        Pull fresh = pull(0, A, group.headOffset(0), 5);
        assertEquals(3, fresh.deliveries().size());
        fresh.release();
        group.commit(0, A, group.headOffset(0));
        assertEquals(3, group.stats().acknowledged(), "each message acknowledged once, after A got it");
        assertEquals(0, group.restart(0, B), "nothing held, nothing ends");
    }

    @Test
    void aMessageGivenBackComesAgainAndCountsADelivery() {
        group(1, 16, 100, 2);
        group.addRealQueue(Q0, 0);
        append(Q0, 5, 0);
        Pull first = pull(0, A, 0, 1);
        long commitLogOffset = Records.commitLogOffset(Q0, 0);
        first.release();
        assertTrue(group.giveBack(A, commitLogOffset));
        assertFalse(group.giveBack(A, commitLogOffset), "no longer leased");
        Pull second = pull(0, B, 0, 1);
        assertEquals(2, second.deliveries().get(0).deliveries());
        second.release();
        assertTrue(group.giveBack(B, commitLogOffset));
        assertEquals(1, group.takeDeadLetters().size(), "max-deliveries 2: the second give-back dead-letters it");
    }

    @Test
    void aCommitThatWasNotPushedIsHandedOutAgain() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 5, 0, 1);
        pull(0, A, 0, 2).release();
        group.commit(0, A, 2);
        List<RealCommit> first = group.takeCommits();
        assertEquals(List.of(new RealCommit(Q0, 5)), first, "all acknowledged: the fetch offset (nextBeginOffset 5)");
        assertEquals(List.of(), group.takeCommits(), "nothing moved");
        group.commitNotPushed(first.get(0));
        assertEquals(first, group.takeCommits(), "the broker never got it: pushed again");
        assertEquals(List.of(), group.checkInvariants());
    }

    @Test
    void badPullsGetAClearStatus() {
        group(2, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        assertEquals(Pull.Status.NOTHING_AVAILABLE, pull(0, A, 0, 32).status());
        assertEquals(Pull.Status.NO_SUCH_QUEUE, pull(2, A, 0, 32).status());
        assertEquals(Pull.Status.NO_SUCH_QUEUE, pull(-1, A, 0, 32).status());
        assertEquals(Pull.Status.OFFSET_INVALID, pull(1, A, -1, 32).status());
        assertEquals(Pull.Status.OFFSET_INVALID, pull(1, A, Long.MAX_VALUE, 32).status());
        assertFalse(group.hasAvailable());
        append(Q0, 1, 0);
        assertTrue(group.hasAvailable());
        assertThrows(IllegalArgumentException.class, () -> group.addRealQueue(Q1, -1));
    }

    @Test
    void aRestartRedeliversAtMostTheWindowAndLosesNothing() {
        int window = 4;
        group(1, window, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        pull(0, A, 0, 10).release();                  // real 0..3: the window holds 4
        group.commit(0, A, 1);
        group.takeCommits();                          // the broker holds 1
        append(Q0, 10, 4, 5, 6, 7, 8, 9);
        pull(0, A, 4, 10).release();                  // real 4
        group.commit(0, A, 3);                        // 1, 2 acknowledged; 3, 4 not
        long commit = group.takeCommits().get(0).offset();
        assertEquals(3, commit);
        group.close();

        group(1, window, 100, 5);                     // the gateway starts again
        group.addRealQueue(Q0, commit);
        append(Q0, 10, 3, 4, 5, 6, 7, 8, 9);
        Pull p = pull(0, A, 5, 10);
        assertEquals(List.of(3L, 4L, 5L, 6L), p.deliveries().stream().map(Delivery::realOffset).toList());
        assertEquals(5, p.deliveries().get(0).virtualOffset(), "the client's offsets continue");
        p.release();
        // delivered before and again: 3 and 4, within the window of 4
    }

    @Test
    void statsReportAgesAndGauges() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        assertEquals(0, group.stats().oldestUnacknowledgedAgeNanos());
        append(Q0, 2, 0, 1);
        now += 3 * SECOND;
        VirtualQueueStats stats = group.stats();
        assertEquals(3 * SECOND, stats.oldestUnacknowledgedAgeNanos());
        assertEquals(1, stats.realQueues());
        assertEquals(1, stats.virtualQueues());
        assertEquals(2, stats.available());
        assertEquals(Map.of(), stats.invariantViolations());
        assertEquals(0, stats.invariantViolationCount());
        pull(0, A, 0, 1).release();
        group.commit(0, A, 1);
        now += SECOND;
        append(Q0, 3, 2);
        assertEquals(4 * SECOND, group.stats().oldestUnacknowledgedAgeNanos(), "1 was fetched 4s ago");
    }

    @Test
    void theLagCountsFromTheRealCommitToTheBrokersEnd() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 10);
        assertEquals(0, group.stats().lag(), "nothing heard of the broker yet");
        group.brokerEnd(Q0, 50);
        assertEquals(40, group.stats().lag(), "40 messages behind, none fetched yet");
        append(Q0, 13, 10, 11, 12);
        pull(0, A, 0, 2).release();
        group.commit(0, A, 2);
        assertEquals(38, group.stats().lag(), "real commit 12: 12 to 49 not acknowledged");
        group.brokerEnd(Q0, 30);
        assertEquals(38, group.stats().lag(), "an older max offset heard later changes nothing");
        group.addRealQueue(Q1, 0);
        group.brokerEnd(Q1, 5);
        assertEquals(43, group.stats().lag(), "summed over the owned real queues");
        group.removeRealQueue(Q1);
        assertEquals(38, group.stats().lag());
    }

    @Test
    void closeReleasesEverythingAndRefusesMore() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 3, 0, 1, 2);
        pull(0, A, 0, 1).release();
        group.close();
        group.close();
        ByteBuf late = Records.body(ALLOC, Q0, 3);
        answers.add(late);
        assertThrows(IllegalStateException.class, () -> group.append(Q0, late, 4));
        assertEquals(0, late.refCnt(), "released even when refused");
        assertThrows(IllegalStateException.class, () -> group.pull(0, A, 0, 1));
    }

    @Test
    void theReaddressedRecordsAreOneBufferTheCallerOwns() {
        group(1, 16, 100, 5);
        group.addRealQueue(Q0, 0);
        append(Q0, 2, 0, 1);
        Pull p = pull(0, A, 0, 2);
        assertEquals(1, p.records().refCnt());
        assertEquals(Records.record(Q0, 0).length + Records.record(Q0, 1).length, p.records().readableBytes());
        byte[] first = new byte[Records.record(Q0, 0).length];
        p.records().getBytes(0, first);
        assertArrayEquals(MessageDecoder.decode(java.nio.ByteBuffer.wrap(first)).getBody(),
            decode(p).get(0).getBody());
    }

    @Test
    void aFullWindowWithEverythingLeasedWaitsForAcknowledgementsFromItsHolders() {
        group(2, 3, 100, 5);
        group.addRealQueue(Q0, 0);
        assertFalse(group.waitsForAcknowledgements(), "an empty window has room to fetch");
        append(Q0, 3, 0, 1, 2);
        assertFalse(group.waitsForAcknowledgements(), "full, but messages are left to lease");

        pull(0, A, 0, 2).release();
        pull(1, B, 0, 1).release();

        assertTrue(group.waitsForAcknowledgements(), "full, and everything in it leased");
        assertTrue(group.holdsLeases(0, A));
        assertFalse(group.holdsLeases(0, B), "B's lease is on queue 1");
        assertTrue(group.holdsLeases(1, B));
        assertFalse(group.holdsLeases(3, A), "a queue never pulled");

        assertEquals(1, group.commit(1, B, 1));
        assertTrue(group.waitsForAcknowledgements(), "acknowledged behind the head: the window cannot slide yet");
        assertEquals(2, group.commit(0, A, 2));
        assertFalse(group.holdsLeases(0, A));
        assertFalse(group.waitsForAcknowledgements(), "slid: room to fetch again");
    }

    /**
     * Every way a fetch answer leaves a window ({@link FetchedRecords}: one reference for all the messages taken from
     * it): released exactly once, right when its last message lets go, and never read after.
     */
    @Nested
    class FetchAnswersReleased {

        /** PHYSICALOFFSET's place in a stored record: read for a message only once the answer is held. */
        private static final int PHYSICALOFFSET_AT = 28;

        /** A broker's answer of {@code offsets}; the test keeps watching it after the group took it over. */
        private ByteBuf answer(RealQueue q, long... offsets) {
            ByteBuf body = Records.body(ALLOC, q, offsets);
            answers.add(body);
            return body;
        }

        /** The bodies of a pull's records (as the clients' own decoder reads them); releases the pull. */
        private List<String> readBodies(Pull p) {
            return decode(p).stream().map(VirtualQueueGroupTest::body).toList();
        }

        private void assertWindowEmpty() {
            VirtualQueueStats stats = group.stats();
            assertEquals(0, stats.windowMessages(), "window messages");
            assertEquals(0, stats.windowBytes(), "window bytes");
            assertEquals(0, stats.available(), "available");
            assertEquals(0, stats.leased(), "leased");
            assertEquals(0, stats.deadLetterPending(), "dead letters pending");
            assertEquals(List.of(), group.checkInvariants());
        }

        @Test
        void anAnswerIsReleasedWithTheLastOfItsMessagesAcknowledgedNotBefore() {
            group(1, 16, 100, 5);
            group.addRealQueue(Q0, 0);
            ByteBuf first = answer(Q0, 0, 1, 2);
            ByteBuf second = answer(Q0, 3, 4);
            group.append(Q0, first, 3);
            group.append(Q0, second, 5);
            assertEquals(1, first.refCnt(), "one reference for the three messages, the caller's released");
            assertEquals(1, second.refCnt());

            pull(0, A, 0, 5).release();
            assertEquals(2, group.commit(0, A, 2));
            assertEquals(1, first.refCnt(), "offset 2 still holds it");
            group.holderGone(A); // 2, 3 and 4 come again
            Pull again = pull(0, B, 5, 1);
            assertEquals(2, again.deliveries().get(0).deliveries());
            assertEquals(List.of("broker-a#0@2"), readBodies(again), "served from the answer the others let go of");

            assertEquals(1, group.commit(0, B, 6));
            assertEquals(0, first.refCnt(), "released with its last message, before any close");
            assertEquals(1, second.refCnt(), "another answer, counted apart");
            assertEquals(Records.record(Q0, 3).length + Records.record(Q0, 4).length, group.stats().windowBytes());

            pull(0, B, 6, 5).release();
            assertEquals(2, group.commit(0, B, 8));
            assertEquals(0, second.refCnt());
            assertWindowEmpty();
            assertEquals(List.of(new RealCommit(Q0, 5)), group.takeCommits());
        }

        @Test
        void aDeadLetterKeepsItsAnswerUntilTheDlqTakesItThenReleasesItOnce() {
            group(1, 16, 100, 1);
            group.addRealQueue(Q0, 0);
            ByteBuf body = answer(Q0, 0, 1);
            group.append(Q0, body, 2);
            pull(0, A, 0, 1).release();
            group.holderGone(A); // delivered max-deliveries times: a dead letter
            pull(0, B, 1, 5).release();
            assertEquals(1, group.commit(0, B, 2), "offset 1 acknowledged behind the dead letter");
            assertEquals(1, body.refCnt(), "the dead letter holds the answer");

            List<DeadLetter> dead = group.takeDeadLetters();
            assertEquals(1, dead.size());
            assertTrue(group.deadLetterFailed(Q0, 0));
            assertEquals(1, body.refCnt(), "a failed send keeps it");
            assertEquals(dead, group.takeDeadLetters());
            assertTrue(group.deadLettered(Q0, 0));
            assertEquals(0, body.refCnt(), "released once the DLQ took it");
            assertFalse(group.deadLettered(Q0, 0), "a second report changes nothing");
            assertFalse(group.deadLetterFailed(Q0, 0));
            assertWindowEmpty();
            assertEquals(List.of(new RealCommit(Q0, 2)), group.takeCommits());
        }

        @Test
        void aRemovedQueueReleasesItsAnswerOnceWhateverStateItsMessagesWereIn() {
            group(2, 16, 100, 2);
            group.addRealQueue(Q0, 0);
            ByteBuf body = answer(Q0, 0, 1, 2, 3, 4);
            group.append(Q0, body, 5);
            Pull leasedByA = pull(0, A, 0, 1);                  // 0 LEASED
            leasedByA.release();
            pull(1, B, 0, 1).release();
            group.commit(1, B, 1);                              // 1 ACKED behind the head
            pull(1, B, 1, 1).release();
            assertTrue(group.giveBack(B, Records.commitLogOffset(Q0, 2)));
            pull(1, B, 2, 1).release();
            assertTrue(group.giveBack(B, Records.commitLogOffset(Q0, 2)));
            assertEquals(1, group.takeDeadLetters().size());    // 2 DEAD_LETTER, handed to the wiring; 3 and 4 AVAILABLE
            assertEquals(1, body.refCnt());

            assertEquals(new RealCommit(Q0, 0), group.removeRealQueue(Q0));
            assertEquals(0, body.refCnt(), "released when the window closed, not at the group's close");
            assertWindowEmpty();

            // what arrives for the closed window afterwards touches nothing
            assertEquals(0, group.commit(0, A, 99));
            assertFalse(group.deadLettered(Q0, 2));
            assertFalse(group.deadLetterFailed(Q0, 2));
            assertFalse(group.giveBack(A, Records.commitLogOffset(Q0, 0)));
            assertEquals(0, group.holderGone(A));
            now += 60 * SECOND;
            assertEquals(0, group.expireLeases());
            assertEquals(0, leasedByA.deliveries().get(0).realOffset(), "a pull's deliveries stay readable");
            ByteBuf late = answer(Q0, 5);
            assertEquals(Appended.NOT_OWNED, group.append(Q0, late, 6));
            assertEquals(0, late.refCnt(), "an answer for a window closed meanwhile is released at once");

            // owned again: a new window with its own answers
            group.addRealQueue(Q0, 0);
            ByteBuf again = answer(Q0, 0, 1);
            assertEquals(2, group.append(Q0, again, 2).accepted());
            assertEquals(List.of("broker-a#0@0", "broker-a#0@1"), readBodies(pull(0, A, 0, 5)));
            assertEquals(2, group.commit(0, A, 99), "the leases of the closed window did not come back");
            assertEquals(0, again.refCnt());
            assertWindowEmpty();
        }

        @Test
        void anAnswerNothingIsTakenFromIsReleasedAtOnce() {
            group(1, 2, 100, 5);
            group.addRealQueue(Q0, 0);
            ByteBuf empty = answer(Q0);
            assertEquals(new Appended(0, 0, 0, false, 7), group.append(Q0, empty, 7), "no records (all filtered)");
            assertEquals(0, empty.refCnt());

            ByteBuf foreign = answer(Q1, 7);
            assertEquals(new Appended(0, 0, 0, true, 7), group.append(Q0, foreign, 8), "a record of another queue");
            assertEquals(0, foreign.refCnt());

            ByteBuf malformed = ALLOC.buffer();
            answers.add(malformed);
            malformed.writeBytes(new byte[] {0, 0, 0, 99, 1, 2, 3});
            assertEquals(new Appended(0, 0, 0, true, 7), group.append(Q0, malformed, 8), "not a record");
            assertEquals(0, malformed.refCnt());

            ByteBuf taken = answer(Q0, 7, 8);
            group.append(Q0, taken, 9);
            ByteBuf duplicates = answer(Q0, 7, 8);
            assertEquals(new Appended(0, 2, 0, false, 9), group.append(Q0, duplicates, 9), "fetched already");
            assertEquals(0, duplicates.refCnt());
            ByteBuf overflow = answer(Q0, 9, 10);
            assertEquals(new Appended(0, 0, 2, false, 9), group.append(Q0, overflow, 11), "the window is full");
            assertEquals(0, overflow.refCnt());
            assertEquals(1, taken.refCnt(), "only the answer messages were taken from is held");

            ByteBuf notOwned = answer(Q1, 0);
            assertEquals(Appended.NOT_OWNED, group.append(Q1, notOwned, 1));
            assertEquals(0, notOwned.refCnt());
            assertEquals(List.of(), group.checkInvariants());
        }

        @Test
        void anExceptionBeforeAnyMessageHeldTheAnswerStillReleasesIt() {
            group(1, 16, 100, 5);
            group.addRealQueue(Q0, 0);
            ByteBuf broken = new BrokenRecords(Records.record(Q0, 0), 0);
            assertThrows(IllegalStateException.class, () -> group.append(Q0, broken, 1));
            assertEquals(0, broken.refCnt(), "the answer taken over is released, also by an exception half way");
            assertWindowEmpty();
            assertEquals(0, group.fetchOffset(Q0), "fetched again");

            ByteBuf good = answer(Q0, 0);
            assertEquals(1, group.append(Q0, good, 1).accepted());
            assertEquals(1, good.refCnt());
        }

        @Test
        void anExceptionHalfWayLeavesTheMessagesTakenHoldingTheirOneReference() {
            group(1, 16, 100, 5);
            group.addRealQueue(Q0, 0);
            byte[] first = Records.record(Q0, 0);
            byte[] second = Records.record(Q0, 1);
            byte[] both = new byte[first.length + second.length];
            System.arraycopy(first, 0, both, 0, first.length);
            System.arraycopy(second, 0, both, first.length, second.length);
            ByteBuf broken = new BrokenRecords(both, first.length);
            assertThrows(IllegalStateException.class, () -> group.append(Q0, broken, 2));
            assertEquals(1, broken.refCnt(), "held by offset 0 alone");
            assertEquals(1, group.fetchOffset(Q0), "offset 1 is fetched again");
            assertEquals(List.of(), group.checkInvariants());
            assertEquals(first.length, group.stats().windowBytes());

            assertEquals(List.of("broker-a#0@0"), readBodies(pull(0, A, 0, 5)));
            assertEquals(1, group.commit(0, A, 1));
            assertEquals(0, broken.refCnt());
            assertWindowEmpty();
        }

        @Test
        void countingOffTheThreadThatOwnsTheAnswerTripsTheAssertion() throws InterruptedException {
            assumeTrue(FetchedRecords.class.desiredAssertionStatus(), "assertions are off");
            group(1, 16, 100, 5);
            group.addRealQueue(Q0, 0);
            group.append(Q0, answer(Q0, 0), 1);
            pull(0, A, 0, 1).release();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread other = new Thread(() -> {
                try {
                    group.commit(0, A, 1);
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            other.start();
            other.join();
            assertInstanceOf(AssertionError.class, thrown.get(), "the count is a plain int of the owning loop");
            // the close on the owning thread still releases it (checked after the test)
        }

        /**
         * A broker answer over {@code bytes} whose read of PHYSICALOFFSET of the record at {@code failingRecord} throws, as
         * a broken buffer would: the walk fails after it took the answer and before that record's message holds it.
         * Unpooled, so counted here only.
         */
        private static final class BrokenRecords extends UnpooledHeapByteBuf {

            private final int failingRead;

            BrokenRecords(byte[] bytes, int failingRecord) {
                super(UnpooledByteBufAllocator.DEFAULT, bytes.length, bytes.length);
                writeBytes(bytes);
                this.failingRead = failingRecord + PHYSICALOFFSET_AT;
            }

            @Override
            public long getLong(int index) {
                if (index == failingRead) {
                    throw new IllegalStateException("broken buffer at " + index);
                }
                return super.getLong(index);
            }
        }
    }
}
