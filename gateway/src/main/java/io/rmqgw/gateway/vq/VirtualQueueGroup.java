package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.WindowMessage.State;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The virtual queues of one consumer group on one topic: a window of messages per owned real queue and the
 * leases that hand them out on virtual queues. Pure state: no sockets, no timers, no threads. The wiring
 * feeds it what the brokers answer and what clients ask, and carries out what it reports (fetch more, push
 * a commit, send a message to the DLQ).
 *
 * <p><b>Threads.</b> One event loop owns a group: every method is called on it, so nothing here locks. Time
 * comes from the injected {@code nanoClock} (System.nanoTime scale), so tests drive it.
 *
 * <p><b>The window</b> of a real queue holds the messages from its real commit up to its fetch offset, each
 * AVAILABLE, LEASED, DEAD_LETTER or ACKED, at most {@code window-size} of them and {@code window-bytes} of
 * records. The window keeps the stored record bytes (a shared reference to the broker's answer) of every
 * message not yet acknowledged, and releases them on acknowledgement: a redelivery is served from memory
 * and never depends on the broker still having the message (retention may have removed it), at the cost
 * of holding unacknowledged bytes, which the byte bound limits. Acknowledged messages hold no bytes.
 *
 * <p><b>Pulls</b> lease AVAILABLE messages: redeliveries first (oldest returned first), then fresh messages
 * round robin over the owned real queues, one at a time. A pull on virtual queue {@code v} gives them
 * consecutive virtual offsets from {@code max(head(v), requested offset)}: virtual offsets never go
 * backwards on a queue, also for a client that saw higher offsets from an earlier gateway process.
 *
 * <p><b>Commits.</b> A commit {@code C} by holder {@code h} on {@code v} acknowledges {@code h}'s leases on
 * {@code v} below {@code C}, nothing else: another holder's leases there stay until their own commit or
 * expiry. The real commit of a real queue is its lowest unacknowledged offset ({@link #takeCommits}).
 *
 * <p><b>Leases end</b> without an acknowledgement when the holder is gone ({@link #holderGone}), when it
 * neither pulled nor committed on that virtual queue for {@code lease-timeout}, or {@code lease-deadline}
 * after delivery ({@link #expireLeases}). The message becomes AVAILABLE again, or, once delivered
 * {@code max-deliveries} times, a {@link DeadLetter} for the wiring to send to the DLQ.
 *
 * <p><b>Bound.</b> Nothing at or past a real queue's fetch offset was ever delivered, and the window spans at
 * most {@code window-size} offsets from the real commit, so a gateway that restarts from the real commits
 * redelivers at most {@code window-size} messages per real queue and loses none.
 */
public final class VirtualQueueGroup {

    /** Virtual offsets stay below this, far from overflow, whatever offsets clients send. */
    public static final long MAX_VIRTUAL_OFFSET = 1L << 62;

    private final VirtualQueueConfig config;
    private final LongSupplier nanoClock;
    private final ByteBufAllocator alloc;
    private final long leaseTimeoutNanos;
    private final long leaseDeadlineNanos;

    private final Map<RealQueue, Window> windows = new LinkedHashMap<>();
    /** Owned windows in round-robin order. */
    private final List<Window> order = new ArrayList<>();
    private int cursor;
    private final Map<Integer, VirtualQueue> virtualQueues = new HashMap<>();
    /** Messages that became AVAILABLE again, oldest first. */
    private final ArrayDeque<WindowMessage> redeliveries = new ArrayDeque<>();
    /**
     * Leased messages in the order leased, so in deadline order (one lease-deadline for all); a lease leaves it
     * when it ends, so it holds exactly the leases in flight.
     */
    private final LeaseList leasesByAge = new LeaseList();
    /** DEAD_LETTER messages not handed to the wiring yet. */
    private final ArrayDeque<WindowMessage> deadLetters = new ArrayDeque<>();
    private boolean closed;

    // gauges kept as the state changes (checkInvariants recounts them)
    private int available;
    private int leased;
    private int deadLetterPending;
    // counters
    private long deliveries;
    private long acknowledged;
    private long deadLettered;
    private final EnumMap<RedeliveryReason, Long> redeliveryCounts = new EnumMap<>(RedeliveryReason.class);
    private final EnumMap<Invariant, Long> violations = new EnumMap<>(Invariant.class);

    /**
     * @param config    the group's settings
     * @param nanoClock the time, System.nanoTime scale
     * @param alloc     allocates the re-addressed records of pull answers
     */
    public VirtualQueueGroup(VirtualQueueConfig config, LongSupplier nanoClock, ByteBufAllocator alloc) {
        this.config = Objects.requireNonNull(config, "config");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.alloc = Objects.requireNonNull(alloc, "alloc");
        this.leaseTimeoutNanos = config.leaseTimeout().toNanos();
        this.leaseDeadlineNanos = config.leaseDeadline().toNanos();
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

    // ---------------------------------------------------------------- clients: pulls and commits

    /**
     * A pull by {@code holder} on virtual queue {@code virtualQueue}, asking from {@code requestedOffset}, for
     * at most {@code maxMessages} messages (the pull's maxMsgNums). Counts as the holder's activity on the
     * queue. The records of a FOUND answer belong to the caller ({@link Pull#records}).
     */
    public Pull pull(int virtualQueue, long holder, long requestedOffset, int maxMessages) {
        checkOpen();
        if (virtualQueue < 0 || virtualQueue >= virtualQueueCount()) {
            VirtualQueue known = virtualQueues.get(virtualQueue);
            return Pull.empty(Pull.Status.NO_SUCH_QUEUE, virtualQueue, known == null ? 0 : known.nextOffset);
        }
        VirtualQueue v = virtualQueues.computeIfAbsent(virtualQueue, VirtualQueue::new);
        if (requestedOffset < 0 || requestedOffset > MAX_VIRTUAL_OFFSET) {
            return Pull.empty(Pull.Status.OFFSET_INVALID, virtualQueue, v.nextOffset);
        }
        long now = nanoClock.getAsLong();
        v.lastActivity.put(holder, now);
        // a client asks from the offset after what it received: its leases at or past it never reached it
        endLeasesOf(v, holder, v.leases.indexAtOrAbove(requestedOffset), v.leases.size(), RedeliveryReason.NOT_RECEIVED);
        v.nextOffset = Math.max(v.nextOffset, requestedOffset);
        int room = Math.min(maxMessages, config.maxLeasesPerQueue() - v.leases.size());
        if (room <= 0) {
            return Pull.empty(maxMessages <= 0 ? Pull.Status.NOTHING_AVAILABLE : Pull.Status.LEASE_LIMIT,
                virtualQueue, v.nextOffset);
        }
        // no more than are AVAILABLE (the gauge counts them): one array, filled, no list growing per message
        WindowMessage[] taken = new WindowMessage[Math.min(room, available)];
        int count = 0;
        int bytes = 0;
        while (count < taken.length) {
            WindowMessage m = nextAvailable();
            if (m == null) {
                break;
            }
            lease(m, v, holder, now);
            taken[count++] = m;
            bytes += m.size;
        }
        if (count == 0) {
            return Pull.empty(Pull.Status.NOTHING_AVAILABLE, virtualQueue, v.nextOffset);
        }
        Deliveries delivered = new Deliveries(taken, count, virtualQueue, holder);
        return new Pull(Pull.Status.FOUND, virtualQueue, delivered, v.nextOffset,
            readdressed(taken, count, virtualQueue, bytes));
    }

    /**
     * A commit by {@code holder} on {@code virtualQueue} (UPDATE_CONSUMER_OFFSET, or the commit offset a pull
     * carries): acknowledges that holder's leases there below {@code commitOffset}. Counts as the holder's
     * activity on the queue. A commit on a virtual queue never pulled from in this process changes nothing.
     *
     * @return how many messages it acknowledged
     */
    public int commit(int virtualQueue, long holder, long commitOffset) {
        checkOpen();
        VirtualQueue v = virtualQueues.get(virtualQueue);
        if (v == null) {
            return 0;
        }
        v.lastActivity.put(holder, nanoClock.getAsLong());
        int acked = 0;
        // taken off the queue as they are met, lowest first (a step of its start): no list of them first
        LeasesByOffset leases = v.leases;
        int i = 0;
        while (i < leases.size() && leases.offsetAt(i) < commitOffset) {
            WindowMessage m = leases.at(i);
            if (m.holder != holder) {
                i++;
                continue;
            }
            acked++;
            if (m.state != State.LEASED) {
                violation(Invariant.STATE);
                i++;
                continue;
            }
            leases.removeAt(i);
            leaseEnded(m);
            acknowledge(m);
            acknowledged++;
        }
        return acked;
    }

    /**
     * The holder's connection closed, or it unregistered the group: all its leases end at once.
     *
     * @return how many leases ended
     */
    public int holderGone(long holder) {
        checkOpen();
        int ended = 0;
        for (VirtualQueue v : virtualQueues.values()) {
            if (v.lastActivity.remove(holder) != null) {
                ended += endLeasesOf(v, holder, RedeliveryReason.HOLDER_GONE);
            }
        }
        return ended;
    }

    /**
     * A holder starts (over) on {@code virtualQueue} (QUERY_CONSUMER_OFFSET: a client asks for a queue's offset
     * when a rebalance made the queue its own). Every lease still on the queue ends and its message is
     * delivered again: the new owner's own earlier leases were dropped with its earlier ownership (its later
     * commits must not acknowledge them), and the previous owner drops the queue too, as RocketMQ clients do
     * in a rebalance (what it was consuming is not committed by it, so it comes again, as from a broker).
     *
     * @return how many leases ended
     */
    public int restart(int virtualQueue, long holder) {
        checkOpen();
        VirtualQueue v = virtualQueues.get(virtualQueue);
        if (v == null) {
            return 0;
        }
        int ended = 0;
        for (long h : new ArrayList<>(v.lastActivity.keySet())) {
            ended += endLeasesOf(v, h, RedeliveryReason.NOT_RECEIVED);
            if (h != holder) {
                v.lastActivity.remove(h);
            }
        }
        return ended + endLeasesOf(v, holder, RedeliveryReason.NOT_RECEIVED);
    }

    /**
     * Ends the leases past their deadline, and those of holders idle on their virtual queue for the lease
     * timeout. The wiring calls it periodically (every second is plenty: timeouts are tens of seconds).
     *
     * @return how many leases ended
     */
    public int expireLeases() {
        checkOpen();
        long now = nanoClock.getAsLong();
        int ended = 0;
        while (!leasesByAge.isEmpty()) {
            WindowMessage m = leasesByAge.oldest();
            if (m.deadlineNanos - now > 0) {
                break;
            }
            endLease(m);
            returnOrDeadLetter(m, RedeliveryReason.DEADLINE);
            ended++;
        }
        for (VirtualQueue v : virtualQueues.values()) {
            Iterator<Map.Entry<Long, Long>> holders = v.lastActivity.entrySet().iterator();
            List<Long> idle = new ArrayList<>();
            while (holders.hasNext()) {
                Map.Entry<Long, Long> e = holders.next();
                if (now - e.getValue() >= leaseTimeoutNanos) {
                    idle.add(e.getKey());
                    holders.remove();
                }
            }
            for (long holder : idle) {
                ended += endLeasesOf(v, holder, RedeliveryReason.IDLE);
            }
        }
        return ended;
    }

    /** Whether {@code holder} holds a lease on {@code virtualQueue}: its next commit there acknowledges something. */
    public boolean holdsLeases(int virtualQueue, long holder) {
        VirtualQueue v = virtualQueues.get(virtualQueue);
        if (v == null) {
            return false;
        }
        for (int i = 0; i < v.leases.size(); i++) {
            if (v.leases.at(i).holder == holder) {
                return true;
            }
        }
        return false;
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

    /** The head of {@code virtualQueue}: its next virtual offset (QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET). */
    public long headOffset(int virtualQueue) {
        VirtualQueue v = virtualQueues.get(virtualQueue);
        return v == null ? 0 : v.nextOffset;
    }

    /** The lease at {@code virtualOffset} on {@code virtualQueue}, or null (for routing a client's send-back). */
    public Delivery lease(int virtualQueue, long virtualOffset) {
        VirtualQueue v = virtualQueues.get(virtualQueue);
        WindowMessage m = v == null ? null : v.leases.get(virtualOffset);
        return m == null ? null
            : new Delivery(m.window.queue, m.offset, virtualQueue, m.virtualOffset, m.deliveries, m.holder);
    }

    /** Whether a pull would find something now (wake held pulls when this turns true). */
    public boolean hasAvailable() {
        return available > 0;
    }

    /** Messages a pull would find now (fresh or to be redelivered): held pulls share them. */
    public int available() {
        return available;
    }

    /** The lease {@code holder} holds on the message at {@code commitLogOffset}, or null (for a client's send-back). */
    public Delivery leaseOf(long holder, long commitLogOffset) {
        WindowMessage m = leased(holder, commitLogOffset);
        return m == null ? null
            : new Delivery(m.window.queue, m.offset, m.leasedOn.id, m.virtualOffset, m.deliveries, holder);
    }

    /** The message leased to {@code holder} at {@code commitLogOffset} (how clients name a message), or null. */
    private WindowMessage leased(long holder, long commitLogOffset) {
        for (WindowMessage m = leasesByAge.oldest(); m != null; m = m.newerLease) {
            if (m.holder == holder && m.commitLogOffset == commitLogOffset) {
                return m;
            }
        }
        return null;
    }

    /**
     * The holder gave a leased message back (its consumer answered RECONSUME_LATER and sent
     * CONSUMER_SEND_MSG_BACK, which names the message by its commit-log offset): it is delivered again, or
     * dead-lettered once delivered {@code max-deliveries} times. Counts as the holder's activity on the queue.
     *
     * @return false when the holder holds no lease on a message at that commit-log offset
     */
    public boolean giveBack(long holder, long commitLogOffset) {
        checkOpen();
        WindowMessage m = leased(holder, commitLogOffset);
        if (m == null) {
            return false;
        }
        m.leasedOn.lastActivity.put(holder, nanoClock.getAsLong());
        endLease(m);
        returnOrDeadLetter(m, RedeliveryReason.GAVE_BACK);
        return true;
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

    // ---------------------------------------------------------------- metrics and checks

    /** A snapshot for gauges and counters. */
    public VirtualQueueStats stats() {
        long now = nanoClock.getAsLong();
        int windowMessages = 0;
        long windowBytes = 0;
        long oldest = 0;
        long lag = 0;
        for (Window w : order) {
            windowMessages += w.messages.size();
            windowBytes += w.heldBytes;
            lag += Math.max(0, Math.max(w.brokerEnd, w.fetchOffset) - w.commitOffset());
            WindowMessage head = w.messages.peekFirst();
            if (head != null) {
                oldest = Math.max(oldest, now - head.fetchedAtNanos);
            }
        }
        EnumMap<RedeliveryReason, Long> redelivered = new EnumMap<>(RedeliveryReason.class);
        for (RedeliveryReason r : RedeliveryReason.values()) {
            redelivered.put(r, redeliveryCounts.getOrDefault(r, 0L));
        }
        return new VirtualQueueStats(windows.size(), virtualQueueCount(), windowMessages, windowBytes, available,
            leased, deadLetterPending, oldest, lag, deliveries, redelivered, acknowledged, deadLettered, violations);
    }

    /**
     * Checks every rule over the whole state (O(state); for tests and diagnostics) and returns what is broken,
     * empty when all holds.
     */
    public List<String> checkInvariants() {
        List<String> broken = new ArrayList<>();
        int countedAvailable = 0;
        int countedLeased = 0;
        int countedDead = 0;
        for (Window w : order) {
            if (w.messages.size() > config.windowSize()) {
                broken.add(w.queue + ": " + w.messages.size() + " messages > window-size " + config.windowSize());
            }
            long bytes = 0;
            long previous = Long.MIN_VALUE;
            boolean first = true;
            for (WindowMessage m : w.messages) {
                if (m.offset <= previous) {
                    broken.add(w.queue + ": offsets out of order at " + m);
                }
                previous = m.offset;
                if (first && m.state == State.ACKED) {
                    broken.add(w.queue + ": acknowledged head " + m);
                }
                first = false;
                if (m.offset >= w.fetchOffset) {
                    broken.add(w.queue + ": " + m + " at or past the fetch offset " + w.fetchOffset);
                }
                if ((m.source == null) != (m.state == State.ACKED)) {
                    broken.add(w.queue + ": " + m + (m.source == null ? " lost its bytes" : " still holds bytes"));
                }
                if (m.source != null) {
                    bytes += m.size;
                    if (m.source.buffer.refCnt() < 1) {
                        broken.add(w.queue + ": " + m + " holds a released record");
                    }
                }
                switch (m.state) {
                    case AVAILABLE -> countedAvailable++;
                    case LEASED -> {
                        countedLeased++;
                        WindowMessage at = m.leasedOn.leases.get(m.virtualOffset);
                        if (at != m) {
                            broken.add(m + ": not the lease at its virtual offset");
                        }
                        if (!m.leasedOn.lastActivity.containsKey(m.holder)) {
                            broken.add(m + ": its holder is not known on its virtual queue");
                        }
                        if (m.virtualOffset >= m.leasedOn.nextOffset) {
                            broken.add(m + ": virtual offset at or past the head " + m.leasedOn.nextOffset);
                        }
                    }
                    case DEAD_LETTER -> countedDead++;
                    case ACKED -> { }
                    case DROPPED -> broken.add(m + ": dropped but still in its window");
                }
                if (m.state != State.ACKED && m.offset < w.commitOffset()) {
                    broken.add(w.queue + ": commit " + w.commitOffset() + " passes unacknowledged " + m);
                }
            }
            if (bytes != w.heldBytes) {
                broken.add(w.queue + ": holds " + w.heldBytes + " bytes by count, " + bytes + " by sum");
            }
            if (w.commitOffset() < w.reportedCommit) {
                broken.add(w.queue + ": commit " + w.commitOffset() + " below the reported " + w.reportedCommit);
            }
        }
        int leases = 0;
        for (VirtualQueue v : virtualQueues.values()) {
            leases += v.leases.size();
            if (v.leases.size() > config.maxLeasesPerQueue()) {
                broken.add("virtual queue " + v.id + ": " + v.leases.size() + " leases > " + config.maxLeasesPerQueue());
            }
            for (int i = 0; i < v.leases.size(); i++) {
                WindowMessage m = v.leases.at(i);
                long offset = v.leases.offsetAt(i);
                if (m.state != State.LEASED || m.leasedOn != v || m.virtualOffset != offset) {
                    broken.add("virtual queue " + v.id + "@" + offset + ": holds " + m);
                }
                if (i > 0 && offset <= v.leases.offsetAt(i - 1)) {
                    broken.add("virtual queue " + v.id + "@" + offset + ": leases out of offset order");
                }
            }
        }
        if (leases != countedLeased || leasesByAge.size() != countedLeased) {
            broken.add(leases + " leases on virtual queues, " + leasesByAge.size() + " by age, " + countedLeased
                + " leased messages");
        }
        if (countedAvailable != available || countedLeased != leased || countedDead != deadLetterPending) {
            broken.add("gauges available/leased/dead " + available + "/" + leased + "/" + deadLetterPending
                + ", counted " + countedAvailable + "/" + countedLeased + "/" + countedDead);
        }
        violations.forEach((rule, count) -> broken.add(count + " break(s) of " + rule + " counted"));
        return broken;
    }

    /**
     * Releases every byte held (gateway stop). Reports nothing: the brokers keep the last pushed commits, from
     * which the next start redelivers. Further calls fail.
     */
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Window w : order) {
            drop(w);
        }
        windows.clear();
        order.clear();
    }

    // ---------------------------------------------------------------- transitions

    private WindowMessage nextAvailable() {
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

    private void lease(WindowMessage m, VirtualQueue v, long holder, long now) {
        if (m.state != State.AVAILABLE) {
            violation(Invariant.STATE);
        }
        long offset = v.nextOffset++;
        if (!v.leases.isEmpty() && v.leases.lastOffset() >= offset) {
            violation(Invariant.VIRTUAL_OFFSET_WENT_BACK);
        }
        m.state = State.LEASED;
        m.deliveries++;
        m.leasedOn = v;
        m.virtualOffset = offset;
        m.holder = holder;
        m.deadlineNanos = now + leaseDeadlineNanos;
        v.leases.put(offset, m);
        leasesByAge.add(m);
        available--;
        leased++;
        deliveries++;
    }

    /** Takes {@code m} off its virtual queue; its state is set by the caller. */
    private void endLease(WindowMessage m) {
        m.leasedOn.leases.remove(m.virtualOffset);
        leaseEnded(m);
    }

    /** The rest of {@link #endLease} for a lease already taken out of its queue's map. */
    private void leaseEnded(WindowMessage m) {
        m.leasedOn = null;
        leasesByAge.remove(m);
        leased--;
    }

    private int endLeasesOf(VirtualQueue v, long holder, RedeliveryReason reason) {
        return endLeasesOf(v, holder, 0, v.leases.size(), reason);
    }

    /** Ends {@code holder}'s leases among those at indexes {@code from} (inclusive) to {@code to} of the queue's. */
    private int endLeasesOf(VirtualQueue v, long holder, int from, int to, RedeliveryReason reason) {
        if (from >= to) {
            return 0;
        }
        List<WindowMessage> held = new ArrayList<>();
        for (int i = from; i < to; i++) {
            WindowMessage m = v.leases.at(i);
            if (m.holder == holder) {
                held.add(m);
            }
        }
        for (WindowMessage m : held) {
            endLease(m);
            returnOrDeadLetter(m, reason);
        }
        return held.size();
    }

    private void returnOrDeadLetter(WindowMessage m, RedeliveryReason reason) {
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

    private void acknowledge(WindowMessage m) {
        m.state = State.ACKED;
        m.releaseRecord();
        m.window.slide();
    }

    /** Copies the leased records into one buffer, each re-addressed to its virtual queue and offset. */
    private ByteBuf readdressed(WindowMessage[] taken, int count, int virtualQueue, int bytes) {
        ByteBuf out = alloc.buffer(bytes, bytes);
        try {
            for (int i = 0; i < count; i++) {
                WindowMessage m = taken[i];
                int at = out.writerIndex();
                out.writeBytes(m.source.buffer, m.at, m.size);
                int reconsumeTimes = (int) Math.min(Integer.MAX_VALUE, (long) m.storedReconsumeTimes + m.deliveries - 1);
                // an exact copy of a record append checked: where its RECONSUMETIMES is was found there
                StoredRecords.setDelivery(out, at, m.reconsumeTimesAt, virtualQueue, m.virtualOffset, reconsumeTimes);
            }
            return out;
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
    }

    private void drop(Window w) {
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

    private void violation(Invariant rule) {
        violations.merge(rule, 1L, Long::sum);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("virtual queues of " + config.group() + " on " + config.topic() + " are closed");
        }
    }
}
