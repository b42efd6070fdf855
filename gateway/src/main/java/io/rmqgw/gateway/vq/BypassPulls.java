package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.core.Exchange;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * A bypass group's pulls: on to the real queue's broker (a lite pull as PULL_MESSAGE), the records of the answer
 * re-addressed to the virtual queue; a virtual queue with no real queue behind it is empty, its pulls held as a
 * broker holds a long poll. A stop answers them all at once.
 */
final class BypassPulls {

    /** PullSysFlag's suspend bit: the client lets the broker hold the pull. */
    private static final int FLAG_SUSPEND = 1 << 1;
    /** The longest a pull on an empty virtual queue is held: what brokers allow a push consumer's long poll. */
    private static final long MAX_EMPTY_HOLD_MILLIS = 15_000;

    /** A pull on a virtual queue with no real queue behind it, held as a broker holds a long poll. */
    private static final class HeldEmpty {
        final Exchange exchange;
        final VirtualBrokerRequest request;
        ScheduledFuture<?> timer;

        HeldEmpty(Exchange exchange, VirtualBrokerRequest request) {
            this.exchange = exchange;
            this.request = request;
        }
    }

    /** A pull sent on to a broker; answered once, by the broker's answer or by a stop's drain. */
    private static final class PullInFlight {
        final Exchange exchange;
        final VirtualBrokerRequest request;
        private final AtomicBoolean answered = new AtomicBoolean();

        PullInFlight(Exchange exchange, VirtualBrokerRequest request) {
            this.exchange = exchange;
            this.request = request;
        }

        boolean claim() {
            return answered.compareAndSet(false, true);
        }
    }

    private final VirtualQueues queues;
    private final Bypass bypass;
    private final Set<PullInFlight> pulls = ConcurrentHashMap.newKeySet();
    private final Set<HeldEmpty> held = ConcurrentHashMap.newKeySet();

    BypassPulls(VirtualQueues queues, Bypass bypass) {
        this.queues = queues;
        this.bypass = bypass;
    }

    /**
     * PULL_MESSAGE (and LITE_PULL_MESSAGE, sent on as PULL_MESSAGE): the broker's answer with the records re-addressed
     * to the virtual queue, or an empty queue.
     */
    void pull(Exchange exchange, VirtualBrokerRequest r) {
        bypass.counted(r);
        int virtualQueue = r.intField("queueId", -1);
        bypass.withRoute(exchange, r, r.field("topic"), map -> {
            RealQueue real = map.real(virtualQueue);
            if (real == null) {
                holdEmpty(exchange, r);
                return;
            }
            long suspend = Math.max(0, r.longField("suspendTimeoutMillis", 0));
            long timeout = TimeUnit.MILLISECONDS.toNanos(suspend) + bypass.relay().requestTimeoutNanos();
            PullInFlight p = new PullInFlight(exchange, r);
            pulls.add(p);
            bypass.relay().sendQuietly(exchange, r, real.brokerName(),
                BypassRelay.withQueue(r, real), null, timeout, answer -> {
                    pulls.remove(p);
                    if (p.claim()) {
                        answerPull(exchange, r, answer, virtualQueue);
                    } else {
                        answer.release(); // answered when the gateway began to stop: the client pulls this offset again
                    }
                }, failure -> {
                    pulls.remove(p);
                    if (p.claim()) {
                        r.error(exchange, RemotingSysResponseCode.SYSTEM_ERROR, failure);
                    }
                });
        });
    }

    /** Bypass pulls held at brokers now (long polls a stop need not wait for: they are answered when it begins). */
    int inFlight() {
        return pulls.size();
    }

    /**
     * The gateway stops: pulls held on empty virtual queues and pulls held at brokers are answered now (no message, or
     * SYSTEM_BUSY); the client pulls the same offset again elsewhere, so nothing is lost, and brokers' late answers
     * are dropped.
     */
    void drain() {
        for (PullInFlight p : pulls) {
            if (p.claim()) {
                p.request.error(p.exchange, ResponseCode.SYSTEM_BUSY, "the gateway is stopping: pull again");
            }
        }
        for (HeldEmpty h : held) {
            if (held.remove(h)) {
                if (h.timer != null) {
                    h.timer.cancel(false);
                }
                answerNoMessage(h.exchange, h.request);
            }
        }
    }

    private void answerPull(Exchange exchange, VirtualBrokerRequest r, RemotingFrame answer, int virtualQueue) {
        try {
            ByteBuf records = null;
            if (answer.code() == ResponseCode.SUCCESS && answer.bodyLength() > 0) {
                records = readdressed(exchange, answer, virtualQueue);
            }
            BypassRelay.relay(exchange, r, answer, records);
        } finally {
            answer.release();
        }
    }

    /**
     * The answer's records with QUEUEID set to the virtual queue (offsets and everything else as the broker wrote
     * them) and store hosts pointing at the gateway, as every pull through the gateway gets them.
     */
    private ByteBuf readdressed(Exchange exchange, RemotingFrame answer, int virtualQueue) {
        ByteBuf records = answer.retainedBody();
        if (records.isReadOnly()) {
            ByteBuf copy = exchange.alloc().buffer(records.readableBytes());
            copy.writeBytes(records);
            records.release();
            records = copy;
        }
        for (int pos = records.readerIndex(); pos < records.writerIndex(); ) {
            int length = StoredRecords.recordLength(records, pos);
            if (length <= 0) {
                break; // the client reads what follows as the broker wrote it
            }
            StoredRecords.setDelivery(records, pos, virtualQueue, StoredRecords.queueOffset(records, pos),
                StoredRecords.reconsumeTimes(records, pos));
            pos += length;
        }
        StoreHostMapper storeHosts = queues.storeHosts();
        if (storeHosts != null) {
            StoredRecords.rewriteStoreHosts(records, storeHosts);
        }
        return records;
    }

    private void holdEmpty(Exchange exchange, VirtualBrokerRequest r) {
        boolean suspend = (r.intField("sysFlag", 0) & FLAG_SUSPEND) != 0;
        long hold = suspend ? Math.min(Math.max(0, r.longField("suspendTimeoutMillis", 0)), MAX_EMPTY_HOLD_MILLIS) : 0;
        if (hold == 0) {
            answerNoMessage(exchange, r);
            return;
        }
        // answering at once would have the client pull again at once, a busy loop per empty queue
        HeldEmpty h = new HeldEmpty(exchange, r);
        held.add(h);
        h.timer = exchange.loop().schedule(() -> {
            if (held.remove(h)) {
                answerNoMessage(exchange, r);
            }
        }, hold, TimeUnit.MILLISECONDS);
    }

    private static void answerNoMessage(Exchange exchange, VirtualBrokerRequest r) {
        String offset = Long.toString(Math.max(0, r.longField("queueOffset", 0)));
        Map<String, String> ext = new HashMap<>();
        ext.put("suggestWhichBrokerId", "0");
        ext.put("nextBeginOffset", offset);
        ext.put("minOffset", "0");
        ext.put("maxOffset", "0");
        exchange.answer(Frames.encode(exchange.alloc(), RemotingHeader.response(r.opaque(),
            ResponseCode.PULL_NOT_FOUND, "no real queue behind this virtual queue: nothing to pull")
            .withExtFields(ext), r.encoding(), null));
    }
}
