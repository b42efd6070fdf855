package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.header.PullResponseEncoder;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.core.Exchange;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Clients' pulls on a served group's virtual queues (the broker side of RocketMQ's {@code PullMessageProcessor}
 * and {@code PullRequestHoldService}): answered with a lease at once, or held (long polling) until messages
 * arrive, the hold ends, or the client's commit is wanted. On the virtual queues' loop; answers through the
 * pull's {@link Exchange}.
 */
final class HeldPulls {

    /** PullSysFlag's suspend bit: the client lets the broker hold the pull. */
    private static final int FLAG_SUSPEND = 1 << 1;
    private static final long MAX_CLIENT_HOLD_MILLIS = 20_000;
    /**
     * While a window waits for acknowledgements, a pull held from a client that holds leases on its queue is
     * answered after this long: the client's next pull carries its commit offset, which acknowledges what it
     * consumed meanwhile. Otherwise acknowledgements would wait for its offset persist (every 5 s), and a full
     * window would stall that long each time. Short, since a full window stalls every consumer until then; the
     * cost is one pull a client makes again at most this often per virtual queue, only while a window is full.
     */
    private static final long ACK_REFRESH_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** A client's pull with nothing to lease yet, answered when messages arrive or its hold ends. */
    private record HeldPull(Exchange exchange, int opaque, SerializeType encoding, int virtualQueue, long holder,
                            long offset, int maxMessages, long sinceNanos, long deadlineNanos) {
    }

    private final VirtualConsumer consumer;
    private final VirtualQueueGroup group;
    private final FlowCounters flow;
    private final ArrayDeque<HeldPull> held = new ArrayDeque<>();
    private boolean ackRefreshScheduled;

    HeldPulls(VirtualConsumer consumer) {
        this.consumer = consumer;
        this.group = consumer.group();
        this.flow = consumer.flow();
    }

    /** A pull the owners admitted: leases and answers now, or holds it. */
    void pull(Exchange exchange, int opaque, SerializeType encoding, int virtualQueue, long holder, long offset,
              int maxMessages, int sysFlag, long suspendMillis) {
        Pull p = group.pull(virtualQueue, holder, offset, batch(maxMessages));
        if (p.status() == Pull.Status.FOUND) {
            answerFound(exchange, opaque, encoding, p);
        } else if (p.status() == Pull.Status.OFFSET_INVALID || (sysFlag & FLAG_SUSPEND) == 0 || suspendMillis <= 0) {
            answerNotFound(exchange, opaque, encoding, p.nextOffset());
        } else {
            long hold = Math.min(suspendMillis, MAX_CLIENT_HOLD_MILLIS);
            long now = System.nanoTime();
            flow.pullsHeld++;
            held.addLast(new HeldPull(exchange, opaque, encoding, virtualQueue, holder, Math.max(offset, p.nextOffset()),
                maxMessages, now, now + TimeUnit.MILLISECONDS.toNanos(hold)));
            if (group.waitsForAcknowledgements()) {
                scheduleAckRefresh();
            }
        }
    }

    /** Whether a pull of {@code holder} on {@code virtualQueue} is held. */
    boolean holds(int virtualQueue, long holder) {
        return held.stream().anyMatch(h -> h.virtualQueue() == virtualQueue && h.holder() == holder);
    }

    /**
     * Pulls waiting on the queue belong to ownerships a client's start ended: their clients dropped the queue and
     * throw answers away, so they are answered empty now and lease nothing.
     */
    void endOn(int virtualQueue) {
        for (Iterator<HeldPull> it = held.iterator(); it.hasNext(); ) {
            HeldPull h = it.next();
            if (h.virtualQueue() == virtualQueue) {
                it.remove();
                answerEmpty(h);
            }
        }
    }

    /** The holder is gone: its held pulls are dropped (nobody reads their answers). */
    void holderGone(long holder) {
        held.removeIf(h -> h.holder() == holder);
    }

    /** Answers every held pull empty: at the head of its queue when {@code atHead}, else at its own offset. */
    void answerAll(boolean atHead) {
        while (!held.isEmpty()) {
            HeldPull h = held.pollFirst();
            if (atHead) {
                answerEmpty(h);
            } else {
                answerNotFound(h.exchange(), h.opaque(), h.encoding(), h.offset());
            }
        }
    }

    /** Held pulls whose hold ended are answered empty. */
    void expire() {
        long now = System.nanoTime();
        for (Iterator<HeldPull> it = held.iterator(); it.hasNext(); ) {
            HeldPull h = it.next();
            if (now - h.deadlineNanos() >= 0) {
                it.remove();
                flow.heldExpired++;
                answerEmpty(h);
            }
        }
    }

    /** What a pull takes: up to its maxMsgNums of what is available, at least one message. */
    private int batch(int maxMessages) {
        return Math.max(1, Math.min(maxMessages, group.available()));
    }

    /**
     * Answers held pulls while messages are available, longest waiting first, each with a whole batch (up to its
     * maxMsgNums): answers stay as large as what arrived (few, full answers under high rates; a single message is
     * answered at once under low rates), and a client answered pulls again at the back of the line.
     */
    void wake() {
        if (held.isEmpty() || consumer.closed()) {
            return;
        }
        Iterator<HeldPull> it = held.iterator();
        while (it.hasNext() && group.hasAvailable()) {
            HeldPull h = it.next();
            Pull p = group.pull(h.virtualQueue(), h.holder(), h.offset(), batch(h.maxMessages()));
            if (p.status() == Pull.Status.FOUND) {
                it.remove();
                flow.heldWoken++;
                flow.heldWokenNanos += System.nanoTime() - h.sinceNanos();
                answerFound(h.exchange(), h.opaque(), h.encoding(), p);
            } else if (p.status() == Pull.Status.OFFSET_INVALID) {
                it.remove();
                answerNotFound(h.exchange(), h.opaque(), h.encoding(), p.nextOffset());
            }
        }
    }

    /** Runs {@link #refreshAcknowledgements} {@link #ACK_REFRESH_NANOS} from now, unless it is already due. */
    void scheduleAckRefresh() {
        if (!ackRefreshScheduled && !consumer.closed()) {
            ackRefreshScheduled = true;
            consumer.owner().loop().schedule(() -> {
                ackRefreshScheduled = false;
                refreshAcknowledgements();
            }, ACK_REFRESH_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * While a window waits for acknowledgements: answers (no new message) the pulls held at least
     * {@link #ACK_REFRESH_NANOS} from clients that hold leases on their queue, so their next pulls bring their
     * commits; comes back for those held more recently.
     */
    void refreshAcknowledgements() {
        if (consumer.closed() || held.isEmpty() || !group.waitsForAcknowledgements()) {
            return;
        }
        long now = System.nanoTime();
        boolean more = false;
        for (Iterator<HeldPull> it = held.iterator(); it.hasNext(); ) {
            HeldPull h = it.next();
            if (!group.holdsLeases(h.virtualQueue(), h.holder())) {
                continue;
            }
            if (now - h.sinceNanos() >= ACK_REFRESH_NANOS) {
                it.remove();
                flow.heldRefreshed++;
                answerEmpty(h);
            } else {
                more = true;
            }
        }
        if (more) {
            scheduleAckRefresh();
        }
    }

    /** A held pull answered with no message, from where its queue's head is now at the earliest. */
    private void answerEmpty(HeldPull h) {
        answerNotFound(h.exchange(), h.opaque(), h.encoding(), Math.max(h.offset(), group.headOffset(h.virtualQueue())));
    }

    private void answerFound(Exchange exchange, int opaque, SerializeType encoding, Pull p) {
        flow.pullsFound++;
        flow.pulledMessages += p.deliveries().size();
        ByteBuf records = p.records();
        StoreHostMapper storeHosts = consumer.owner().storeHosts();
        if (storeHosts != null) {
            StoredRecords.rewriteStoreHosts(records, storeHosts);
        }
        exchange.answer(PullResponseEncoder.encode(exchange.alloc(), encoding, opaque,
            ResponseCode.SUCCESS, null, p.nextOffset(), records));
    }

    static void answerNotFound(Exchange exchange, int opaque, SerializeType encoding, long next) {
        exchange.answer(PullResponseEncoder.encode(exchange.alloc(), encoding, opaque,
            ResponseCode.PULL_NOT_FOUND, "no new message on the virtual queue", next, null));
    }
}
