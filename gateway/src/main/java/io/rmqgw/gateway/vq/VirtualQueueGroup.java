package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.WindowMessage.State;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
public final class VirtualQueueGroup extends RealQueueWindows {

    /** Virtual offsets stay below this, far from overflow, whatever offsets clients send. */
    public static final long MAX_VIRTUAL_OFFSET = 1L << 62;

    private final ByteBufAllocator alloc;
    private final long leaseTimeoutNanos;
    private final long leaseDeadlineNanos;

    /**
     * @param config    the group's settings
     * @param nanoClock the time, System.nanoTime scale
     * @param alloc     allocates the re-addressed records of pull answers
     */
    public VirtualQueueGroup(VirtualQueueConfig config, LongSupplier nanoClock, ByteBufAllocator alloc) {
        super(config, nanoClock);
        this.alloc = Objects.requireNonNull(alloc, "alloc");
        this.leaseTimeoutNanos = config.leaseTimeout().toNanos();
        this.leaseDeadlineNanos = config.leaseDeadline().toNanos();
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

    // ---------------------------------------------------------------- metrics and checks

    /** A snapshot for gauges and counters. */
    public VirtualQueueStats stats() {
        return GroupInvariants.stats(this);
    }

    /**
     * Checks every rule over the whole state (O(state); for tests and diagnostics) and returns what is broken,
     * empty when all holds.
     */
    public List<String> checkInvariants() {
        return GroupInvariants.check(this);
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

    // ---------------------------------------------------------------- lease transitions

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
}
