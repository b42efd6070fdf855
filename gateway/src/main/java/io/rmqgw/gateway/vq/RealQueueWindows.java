package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.WindowMessage.State;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The real-queue side of a {@link VirtualQueueGroup}, and the state both sides share: a window of messages per owned
 * real queue, filled from the brokers' answers, slid by acknowledgements, and what the wiring carries out for it
 * (commits to push, dead letters to send). Pure state on one event loop, as the group is; the group adds the leases
 * on virtual queues. Its public methods are the group's (documented there as its own).
 */
abstract class RealQueueWindows {

    final VirtualQueueConfig config;
    final LongSupplier nanoClock;

    final Map<RealQueue, Window> windows = new LinkedHashMap<>();
    /** Owned windows in round-robin order. */
    final List<Window> order = new ArrayList<>();
    int cursor;
    final Map<Integer, VirtualQueue> virtualQueues = new HashMap<>();
    /** Messages that became AVAILABLE again, oldest first. */
    final ArrayDeque<WindowMessage> redeliveries = new ArrayDeque<>();
    /**
     * Leased messages in the order leased, so in deadline order (one lease-deadline for all); a lease leaves it
     * when it ends, so it holds exactly the leases in flight.
     */
    final LeaseList leasesByAge = new LeaseList();
    /** DEAD_LETTER messages not handed to the wiring yet. */
    final ArrayDeque<WindowMessage> deadLetters = new ArrayDeque<>();
    boolean closed;

    // gauges kept as the state changes (checkInvariants recounts them)
    int available;
    int leased;
    int deadLetterPending;
    // counters
    long deliveries;
    long acknowledged;
    long deadLettered;
    final EnumMap<RedeliveryReason, Long> redeliveryCounts = new EnumMap<>(RedeliveryReason.class);
    final EnumMap<Invariant, Long> violations = new EnumMap<>(Invariant.class);

    RealQueueWindows(VirtualQueueConfig config, LongSupplier nanoClock) {
        this.config = Objects.requireNonNull(config, "config");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    }

    public VirtualQueueConfig config() {
        return config;
    }

    // ---------------------------------------------------------------- real queues (rebalance among gateways)

    /**
     * Starts owning {@code queue}, fetching from {@code startOffset} (the real group's committed offset on the
     * broker).
     *
     * @return false, changing nothing, when it is already owned
     */
    public boolean addRealQueue(RealQueue queue, long startOffset) {
        checkOpen();
        if (startOffset < 0) {
            throw new IllegalArgumentException("startOffset must not be negative, was " + startOffset);
        }
        if (windows.containsKey(queue)) {
            return false;
        }
        Window w = new Window(queue, startOffset);
        windows.put(queue, w);
        order.add(w);
        return true;
    }

    /**
     * Stops owning {@code queue} (another gateway takes it): its window is dropped, its leases end (their
     * holders' later commits acknowledge nothing) and its bytes are released.
     *
     * @return the commit to push for it, which the next owner starts from; null when it was not owned
     */
    public RealCommit removeRealQueue(RealQueue queue) {
        checkOpen();
        Window w = windows.remove(queue);
        if (w == null) {
            return null;
        }
        int index = order.indexOf(w);
        order.remove(index);
        if (index < cursor) {
            cursor--;
        }
        if (cursor >= order.size()) {
            cursor = 0;
        }
        RealCommit commit = new RealCommit(queue, w.commitOffset());
        drop(w);
        return commit;
    }

    /** The real queues owned, in the order they were added. */
    public Set<RealQueue> realQueues() {
        return Collections.unmodifiableSet(windows.keySet());
    }

    /** {@code per-real-queue} times the real queues owned: the read queue count of the virtual broker. */
    public int virtualQueueCount() {
        return config.perRealQueue() * windows.size();
    }

    // ---------------------------------------------------------------- fetching from the broker

    /** Where the next pull from the broker for {@code queue} starts; -1 when not owned. */
    public long fetchOffset(RealQueue queue) {
        Window w = windows.get(queue);
        return w == null ? -1 : w.fetchOffset;
    }

    /**
     * How many more messages {@code queue}'s window takes now (the pull's maxMsgNums): 0 when it is full by
     * count or bytes, or not owned. Fetching only when this is positive keeps the window within its bounds.
     */
    public int fetchRoom(RealQueue queue) {
        Window w = windows.get(queue);
        if (w == null || closed) {
            return 0;
        }
        boolean bytesFull = w.heldBytes >= config.windowBytes();
        return bytesFull ? 0 : Math.max(0, config.windowSize() - w.messages.size());
    }

    /**
     * Takes a broker's PULL_MESSAGE answer for {@code queue} into its window. Takes ownership of
     * {@code records} (the answer's body: concatenated stored records) and releases it; the messages it accepts
     * share one reference to it ({@link FetchedRecords}), released with the last of them, also when an exception
     * stops the walk half way.
     *
     * <p>Records below the fetch offset are duplicates and skipped. Records past the window's room are
     * released and fetched again later. The walk stops at the first malformed record or one of another
     * queue. When every record was read, the fetch offset moves to {@code nextBeginOffset} (past messages the
     * broker filtered out).
     */
    public Appended append(RealQueue queue, ByteBuf records, long nextBeginOffset) {
        FetchedRecords source = null; // one reference to the answer for all the messages taken from it
        try {
            checkOpen();
            Window w = windows.get(queue);
            if (w == null) {
                return Appended.NOT_OWNED;
            }
            long now = nanoClock.getAsLong();
            int accepted = 0;
            int duplicates = 0;
            int overflow = 0;
            boolean malformed = false;
            int pos = records.readerIndex();
            int end = records.writerIndex();
            while (pos < end) {
                // one walk over the record checks it (as recordLength does) and finds its RECONSUMETIMES
                int reconsumeTimesAt = StoredRecords.reconsumeTimesOffset(records, pos);
                if (reconsumeTimesAt < 0 || StoredRecords.queueId(records, pos) != queue.queueId()) {
                    malformed = true;
                    break;
                }
                int length = records.getInt(pos);
                long offset = StoredRecords.queueOffset(records, pos);
                if (offset < w.fetchOffset) {
                    duplicates++;
                } else if (overflow > 0 || !hasRoom(w, length)) {
                    overflow++;
                } else {
                    if (source == null) {
                        source = new FetchedRecords(records.retain());
                        // the walk's own hold, let go at the end: released there when an exception came before
                        // any message held it
                        source.hold();
                    }
                    WindowMessage m = new WindowMessage(w, offset, source, pos, length, reconsumeTimesAt, now,
                        records.getInt(pos + reconsumeTimesAt), StoredRecords.commitLogOffset(records, pos));
                    w.messages.addLast(m);
                    w.fresh.addLast(m);
                    w.heldBytes += length;
                    w.fetchOffset = offset + 1;
                    available++;
                    accepted++;
                    if (w.messages.size() > config.windowSize()) {
                        violation(Invariant.WINDOW_OVERFLOW);
                    }
                }
                pos += length;
            }
            if (!malformed && overflow == 0 && nextBeginOffset > w.fetchOffset) {
                w.fetchOffset = nextBeginOffset;
            }
            return new Appended(accepted, duplicates, overflow, malformed, w.fetchOffset);
        } finally {
            records.release();
            if (source != null) {
                source.letGo();
            }
        }
    }

    /** A record larger than the byte bound is still taken into an otherwise byte-empty window. */
    private boolean hasRoom(Window w, int length) {
        if (w.messages.size() >= config.windowSize()) {
            return false;
        }
        return w.heldBytes == 0 || w.heldBytes + length <= config.windowBytes();
    }

    /**
     * The broker's max offset of {@code queue} (the offset its next message will get), from a fetch answer or
     * GET_MAX_OFFSET: what the lag is measured to. Lower values than one already heard are ignored.
     */
    public void brokerEnd(RealQueue queue, long maxOffset) {
        Window w = windows.get(queue);
        if (w != null && maxOffset > w.brokerEnd) {
            w.brokerEnd = maxOffset;
        }
    }

    /** The broker's max offset of {@code queue} as last heard (-1: not yet, or not owned). */
    public long knownEnd(RealQueue queue) {
        Window w = windows.get(queue);
        return w == null ? -1 : w.brokerEnd;
    }

    /**
     * The broker moved the real group's offset on (PULL_OFFSET_MOVED, messages removed by retention): fetch
     * from {@code offset} on. Offsets at or below the current fetch offset change nothing; messages already in
     * the window stay.
     */
    public void skipFetchTo(RealQueue queue, long offset) {
        checkOpen();
        Window w = windows.get(queue);
        if (w != null && offset > w.fetchOffset) {
            w.fetchOffset = offset;
        }
    }


    /**
     * Whether some owned window is full (by count or bytes) with nothing left to lease from it: it slides, and
     * fetching goes on, only as acknowledgements arrive.
     */
    public boolean waitsForAcknowledgements() {
        if (closed) {
            return false;
        }
        for (Window w : order) {
            if (w.fresh.isEmpty() && fetchRoom(w.queue) == 0) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- what the wiring carries out

    /**
     * The real commits that moved since the last call, to push to the brokers (UPDATE_CONSUMER_OFFSET for
     * the real group). A commit never passes an unacknowledged message and never goes back.
     */
    public List<RealCommit> takeCommits() {
        checkOpen();
        List<RealCommit> moved = new ArrayList<>();
        for (Window w : order) {
            long commit = w.commitOffset();
            if (commit != w.reportedCommit) {
                if (commit < w.reportedCommit) {
                    violation(Invariant.COMMIT_WENT_BACK);
                }
                w.reportedCommit = commit;
                moved.add(new RealCommit(w.queue, commit));
            }
        }
        return moved;
    }

    /**
     * Pushing {@code commit} to the broker failed: the next {@link #takeCommits} hands out the queue's commit
     * again (commits only move forward, so a later one carries this one too).
     */
    public void commitNotPushed(RealCommit commit) {
        Window w = windows.get(commit.queue());
        if (w != null && w.reportedCommit == commit.offset()) {
            w.reportedCommit = w.startOffset();
        }
    }

    /**
     * Messages to send to the DLQ (delivered {@code max-deliveries} times), each handed out once; report each
     * outcome with {@link #deadLettered} or {@link #deadLetterFailed}.
     */
    public List<DeadLetter> takeDeadLetters() {
        checkOpen();
        List<DeadLetter> out = new ArrayList<>(deadLetters.size());
        while (!deadLetters.isEmpty()) {
            WindowMessage m = deadLetters.pollFirst();
            if (m.state != State.DEAD_LETTER || m.deadLetterReported) {
                continue;
            }
            m.deadLetterReported = true;
            m.window.reportedDeadLetters.put(m.offset, m);
            out.add(new DeadLetter(m.window.queue, m.offset, m.commitLogOffset, m.deliveries));
        }
        return out;
    }

    /**
     * The broker took the dead letter at {@code queueOffset}: it counts as acknowledged.
     *
     * @return false when it is not a reported dead letter (its queue was removed meanwhile)
     */
    public boolean deadLettered(RealQueue queue, long queueOffset) {
        checkOpen();
        WindowMessage m = reportedDeadLetter(queue, queueOffset);
        if (m == null) {
            return false;
        }
        deadLetterPending--;
        acknowledge(m);
        deadLettered++;
        return true;
    }

    /**
     * Sending the dead letter at {@code queueOffset} failed: it is handed out again by the next
     * {@link #takeDeadLetters}, and stays unacknowledged meanwhile.
     *
     * @return false when it is not a reported dead letter
     */
    public boolean deadLetterFailed(RealQueue queue, long queueOffset) {
        checkOpen();
        WindowMessage m = reportedDeadLetter(queue, queueOffset);
        if (m == null) {
            return false;
        }
        m.deadLetterReported = false;
        deadLetters.addLast(m);
        return true;
    }

    private WindowMessage reportedDeadLetter(RealQueue queue, long queueOffset) {
        Window w = windows.get(queue);
        WindowMessage m = w == null ? null : w.reportedDeadLetters.remove(queueOffset);
        if (m != null && m.state != State.DEAD_LETTER) {
            violation(Invariant.STATE);
            return null;
        }
        return m;
    }


    // ---------------------------------------------------------------- transitions both sides make

    WindowMessage nextAvailable() {
        while (!redeliveries.isEmpty()) {
            WindowMessage m = redeliveries.pollFirst();
            if (m.state == State.AVAILABLE) {
                return m;
            }
        }
        for (int i = 0; i < order.size(); i++) {
            Window w = order.get((cursor + i) % order.size());
            WindowMessage m = w.fresh.pollFirst();
            if (m != null) {
                cursor = (cursor + i + 1) % order.size();
                return m;
            }
        }
        return null;
    }

    /** Takes {@code m} off its virtual queue; its state is set by the caller. */
    void endLease(WindowMessage m) {
        m.leasedOn.leases.remove(m.virtualOffset);
        leaseEnded(m);
    }

    /** The rest of {@link #endLease} for a lease already taken out of its queue's map. */
    void leaseEnded(WindowMessage m) {
        m.leasedOn = null;
        leasesByAge.remove(m);
        leased--;
    }

    void returnOrDeadLetter(WindowMessage m, RedeliveryReason reason) {
        redeliveryCounts.merge(reason, 1L, Long::sum);
        if (m.deliveries >= config.maxDeliveries()) {
            m.state = State.DEAD_LETTER;
            m.deadLetterReported = false;
            deadLetters.addLast(m);
            deadLetterPending++;
        } else {
            m.state = State.AVAILABLE;
            redeliveries.addLast(m);
            available++;
        }
    }

    void acknowledge(WindowMessage m) {
        m.state = State.ACKED;
        m.releaseRecord();
        m.window.slide();
    }

    void drop(Window w) {
        w.dropped = true;
        for (WindowMessage m : w.messages) {
            switch (m.state) {
                case AVAILABLE -> available--;
                case LEASED -> endLease(m);
                case DEAD_LETTER -> deadLetterPending--;
                default -> { }
            }
            m.state = State.DROPPED;
            m.releaseRecord();
        }
        w.messages.clear();
        w.fresh.clear();
        w.reportedDeadLetters.clear();
        redeliveries.removeIf(m -> m.window == w);
        deadLetters.removeIf(m -> m.window == w);
    }

    void violation(Invariant rule) {
        violations.merge(rule, 1L, Long::sum);
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("virtual queues of " + config.group() + " on " + config.topic() + " are closed");
        }
    }
}
