package io.rmqgw.gateway.coalesce;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.message.BatchBody;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.relay.RelayContext;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.upstream.UpstreamConnection;
import io.rmqgw.gateway.upstream.UpstreamException;
import io.rmqgw.gateway.upstream.UpstreamPool;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Server-side coalescing of small sends, one per gateway. Single sends to the configured topics, from
 * any client connections on one broker's listener, are grouped by queue ({@link QueueBatcher}) and go to
 * the broker on the gateway's pooled connection as SEND_BATCH_MESSAGE, the gateway's own opaque; each
 * client then gets its own answer (its own offsetMsgId, queue offset = the batch's base + its index, its
 * own opaque, in its header encoding), or the batch's error.
 */
public final class Coalescing {

    private static final Logger log = LoggerFactory.getLogger(Coalescing.class);
    private static final String DEFAULT_TOPIC = "TBW102";
    private static final int DEFAULT_TOPIC_QUEUE_NUMS = 4;
    /** Sends one queue may hold waiting, in batches of max-messages. */
    static final int WAITING_BATCHES = 16;

    /** A broker queue: what one {@link QueueBatcher} serves. */
    record QueueKey(String brokerAddress, String topic, int queueId) {
    }

    private volatile CoalescingConfig settings;
    private volatile Set<String> topics;
    private final RelayContext context;
    private final UpstreamPool pool;
    private final StoreHostMapper storeHosts;
    private final GatewayMetrics metrics;
    private final Map<QueueKey, QueueBatcher<CoalescedSend>> queues = new ConcurrentHashMap<>();

    public Coalescing(CoalescingConfig settings, RelayContext context, UpstreamPool pool, StoreHostMapper storeHosts) {
        this.context = context;
        this.pool = pool;
        this.storeHosts = storeHosts;
        this.metrics = context.metrics();
        apply(settings);
    }

    /** Applies reloaded settings to every later send (batches already taken keep theirs). */
    public void settings(CoalescingConfig next) {
        apply(next);
        log.info("coalescing {}: topics {}, max {} messages, {} bytes, idle queues wait {} ms", next.enabled() ? "on" : "off",
            next.topics(), next.maxMessages(), next.maxBytes(), next.maxDelay().toMillis());
    }

    private void apply(CoalescingConfig next) {
        settings = Objects.requireNonNull(next, "next");
        topics = Set.copyOf(next.topics());
    }

    public CoalescingConfig settings() {
        return settings;
    }

    /** Whether sends to {@code topic} are coalesced. */
    public boolean coalesces(String topic) {
        return topic != null && topics.contains(topic);
    }

    /** Whether any topic is coalesced (else no send header needs decoding for it). */
    public boolean active() {
        return !topics.isEmpty();
    }

    /**
     * Offers a send whose names passed the edge checks, on its client's event loop. Returns false when it is
     * not coalesced (counted by reason; {@code request} stays the caller's, to forward as usual); true when it
     * was taken: {@code request} is released and the client is answered later (or at once, SYSTEM_BUSY, when
     * its queue already holds the most sends waiting).
     */
    public boolean offer(RelaySession session, RemotingFrame request, SendRequestHeader header, String brokerAddress) {
        if (!coalesces(header.topic())) {
            return false;
        }
        CoalescingConfig s = settings;
        ByteBuf properties = SendEligibility.propertiesBytes(header.properties());
        int bodyLength = request.bodyLength();
        String reason = SendEligibility.passReason(request.isOneway(),
            request.code() == RequestCode.SEND_BATCH_MESSAGE || header.batch(), header, properties, bodyLength,
            s.maxBytes());
        if (reason != null) {
            metrics.coalescePassedThrough(reason);
            return false;
        }
        long now = System.nanoTime();
        int flag = SendEligibility.orZero(header.messageFlag());
        ByteBuf entry = session.client().alloc().buffer(SendEligibility.ENTRY_OVERHEAD + bodyLength
            + properties.readableBytes());
        try {
            BatchBody.write(flag, request.bodySlice(), properties, entry);
        } catch (RuntimeException e) {
            entry.release();
            throw e;
        }
        long born = header.bornTimestamp();
        int queueNums = header.defaultTopicQueueNums();
        CoalescedSend send = new CoalescedSend(session, request.opaque(), request.code(),
            session.answerEncoding(request.encoding()), entry, now, new CoalescedSend.BatchFields(
                header.producerGroup(), header.defaultTopic(),
                queueNums == CommandHeader.ABSENT_INT ? DEFAULT_TOPIC_QUEUE_NUMS : queueNums,
                born == CommandHeader.ABSENT_LONG ? System.currentTimeMillis() : born, flag, header.brokerName()));
        request.release();
        QueueKey key = new QueueKey(brokerAddress, header.topic(), header.queueId());
        QueueBatcher<CoalescedSend> queue = queues.computeIfAbsent(key,
            k -> new QueueBatcher<>(CoalescedSend::bytes));
        QueueBatcher.Offered<CoalescedSend> offered = queue.offer(send, limits(s));
        if (offered == null) {
            entry.release();
            metrics.coalesceSend("busy");
            session.answerLocally(Frames.errorResponse(session.client().alloc(), send.opaque(), send.answerEncoding(),
                RemotingSysResponseCode.SYSTEM_BUSY, "[COALESCING] " + queue.waiting() + " sends already wait for "
                    + key.topic() + " queue " + key.queueId() + " at broker " + brokerAddress + "; retry later"));
            return true;
        }
        metrics.coalesceSend("coalesced");
        if (!offered.now().isEmpty()) {
            send(key, queue, offered.now());
        } else if (offered.linger()) {
            try {
                pool.broker(key.brokerAddress()).eventLoop().schedule(() -> sendNext(key, queue),
                    s.maxDelay().toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                sendNext(key, queue); // the gateway is stopping: at once (the pool answers it)
            }
        }
        return true;
    }

    private static QueueBatcher.Limits limits(CoalescingConfig s) {
        return new QueueBatcher.Limits(s.maxMessages(), s.maxBytes(), s.maxDelay().toNanos(),
            s.maxMessages() * WAITING_BATCHES);
    }

    // ---------------------------------------------------------------- the batch request

    private void send(QueueKey key, QueueBatcher<CoalescedSend> queue, List<CoalescedSend> batch) {
        long sent = System.nanoTime();
        CompositeByteBuf body = batch.get(0).session().client().alloc().compositeBuffer(batch.size());
        for (CoalescedSend s : batch) {
            body.addComponent(true, s.entry());
            metrics.coalesceDelay(sent - s.arrivalNanos());
        }
        UpstreamConnection connection = pool.broker(key.brokerAddress());
        connection.request(RequestCode.SEND_BATCH_MESSAGE, header(key, batch.get(0).fields()), body,
                context.upstream().requestTimeoutNanos(), connection.eventLoop())
            .addListener((Future<RemotingFrame> f) -> answered(key, queue, batch, sent, f));
    }

    /** SendMessageRequestHeaderV2 of a batch: the queue, and the first message's producer group and born time. */
    private static Map<String, String> header(QueueKey key, CoalescedSend.BatchFields first) {
        Map<String, String> ext = new LinkedHashMap<>();
        if (first.producerGroup() != null) {
            ext.put("a", first.producerGroup());
        }
        ext.put("b", key.topic());
        ext.put("c", first.defaultTopic() == null ? DEFAULT_TOPIC : first.defaultTopic());
        ext.put("d", Integer.toString(first.defaultTopicQueueNums()));
        ext.put("e", Integer.toString(key.queueId()));
        ext.put("f", "0");
        ext.put("g", Long.toString(first.bornTimestamp()));
        ext.put("h", Integer.toString(first.flag()));
        // no batch properties: nothing is appended to the messages' own, and WAIT is absent (true)
        ext.put("j", "0");
        ext.put("k", "false");
        ext.put("m", "true");
        if (first.brokerName() != null) {
            ext.put("n", first.brokerName());
        }
        return ext;
    }

    /** The queue's request was answered or its linger ended: the sends waiting go now. */
    private void sendNext(QueueKey key, QueueBatcher<CoalescedSend> queue) {
        List<CoalescedSend> next = queue.answered(limits(settings));
        if (!next.isEmpty()) {
            send(key, queue, next);
        }
    }

    private void answered(QueueKey key, QueueBatcher<CoalescedSend> queue, List<CoalescedSend> batch, long sent,
                          Future<RemotingFrame> f) {
        // the next batch first: the queue's turn is over once the broker answered
        sendNext(key, queue);
        long received = System.nanoTime();
        if (!f.isSuccess()) {
            Throwable cause = f.cause();
            int code = cause instanceof UpstreamException u && u.reason() == UpstreamException.Reason.TIMEOUT
                ? RemotingSysResponseCode.SYSTEM_BUSY : RemotingSysResponseCode.SYSTEM_ERROR;
            metrics.coalesceBatch("failed", batch.size());
            failAll(batch, code, cause.getMessage() + " (" + describe(batch) + ")");
            return;
        }
        RemotingFrame response = f.getNow();
        try {
            CommandHeader header = HeaderTranscoder.decodeResponse(response, RequestCode.SEND_BATCH_MESSAGE);
            try {
                deliver(key, batch, response.code(), header, sent, received);
            } finally {
                header.release();
            }
        } catch (RuntimeException e) {
            log.warn("coalesced batch to {} {} queue {}: unreadable answer: {}", key.brokerAddress(), key.topic(),
                key.queueId(), e.toString());
            metrics.coalesceBatch("failed", batch.size());
            failAll(batch, RemotingSysResponseCode.SYSTEM_ERROR, "unreadable answer from broker " + key.brokerAddress()
                + " to " + describe(batch) + ": " + e.getMessage());
        } finally {
            response.release();
        }
    }

    private void deliver(QueueKey key, List<CoalescedSend> batch, int code, CommandHeader header, long sent,
                         long received) {
        if (!stores(code)) {
            metrics.coalesceBatch("refused", batch.size());
            String remark = header.remark();
            failAll(batch, code, (remark == null ? "" : remark) + " (" + describe(batch) + "; none was stored)");
            return;
        }
        String ids = header.get("msgId");
        String[] each = ids == null || ids.isEmpty() ? new String[0] : ids.split(",");
        String offset = header.get("queueOffset");
        long base;
        try {
            base = offset == null ? -1 : Long.parseLong(offset);
        } catch (NumberFormatException e) {
            base = -1;
        }
        if (each.length != batch.size() || base < 0) {
            // stored, but the answer cannot be split: say so instead of inventing ids
            log.warn("coalesced batch to {} {} queue {}: {} messages stored, answer has {} ids and queue offset {}",
                key.brokerAddress(), key.topic(), key.queueId(), batch.size(), each.length, offset);
            metrics.coalesceBatch("stored", batch.size());
            failAll(batch, RemotingSysResponseCode.SYSTEM_ERROR, "broker " + key.brokerAddress() + " stored "
                + describe(batch) + " but answered " + each.length + " ids and queue offset " + offset
                + " (the message may be stored: deduplicate by its unique key)");
            return;
        }
        metrics.coalesceBatch("stored", batch.size());
        Map<String, String> fields = header.extFields();
        Map<String, String> common = fields == null ? new LinkedHashMap<>() : fields;
        common.remove("batchUniqId");
        String remark = header.remark();
        long now = System.nanoTime();
        Map<EventLoop, List<Answer>> byLoop = new IdentityHashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            CoalescedSend s = batch.get(i);
            Map<String, String> ext = new LinkedHashMap<>(common);
            ext.put("msgId", MessageIds.rewrite(each[i].trim(), storeHosts));
            ext.put("queueOffset", Long.toString(base + i));
            add(byLoop, s, RemotingHeader.response(s.opaque(), code, remark).withExtFields(ext));
            metrics.requestCompleted(s.requestCode(), code, (sent - s.arrivalNanos()) + (now - received),
                received - sent);
        }
        handOff(byLoop);
    }

    private void failAll(List<CoalescedSend> batch, int code, String remark) {
        Map<EventLoop, List<Answer>> byLoop = new IdentityHashMap<>();
        for (CoalescedSend s : batch) {
            metrics.requestAnswered(s.requestCode(), code);
            add(byLoop, s, RemotingHeader.response(s.opaque(), code, remark));
        }
        handOff(byLoop);
    }

    /** A client's answer, encoded, waiting to be handed to its connection's event loop. */
    private record Answer(RelaySession session, ByteBuf frame) {
    }

    /** "a coalesced batch of 3 sends", for remarks. */
    private static String describe(List<CoalescedSend> batch) {
        return "a coalesced batch of " + batch.size() + (batch.size() == 1 ? " send" : " sends");
    }

    private static void add(Map<EventLoop, List<Answer>> byLoop, CoalescedSend s, RemotingHeader header) {
        EventLoop loop = s.session().client().eventLoop();
        if (loop.isShuttingDown()) {
            return; // the gateway stopped past its drain: the client's connection is gone with its loop
        }
        byLoop.computeIfAbsent(loop, l -> new ArrayList<>()).add(new Answer(s.session(),
            Frames.encode(s.session().client().alloc(), header, s.answerEncoding(), null)));
    }

    /** One task per client event loop for a batch's answers, not one per answer: fewer thread hops. */
    private static void handOff(Map<EventLoop, List<Answer>> byLoop) {
        byLoop.forEach((loop, answers) -> {
            Runnable write = () -> answers.forEach(a -> a.session().writeToClient(a.frame()));
            if (loop.inEventLoop()) {
                write.run();
                return;
            }
            try {
                loop.execute(write);
            } catch (RejectedExecutionException e) {
                answers.forEach(a -> a.frame().release());
            }
        });
    }

    /** Answers whose messages the broker stored (flush or replica timeouts included, as clients count them). */
    static boolean stores(int code) {
        return code == ResponseCode.SUCCESS || code == ResponseCode.FLUSH_DISK_TIMEOUT
            || code == ResponseCode.FLUSH_SLAVE_TIMEOUT || code == ResponseCode.SLAVE_NOT_AVAILABLE;
    }
}
