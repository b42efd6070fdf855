package io.rmqgw.gateway.coalesce;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.header.SendResponseTemplate;
import io.rmqgw.codec.message.BatchBody;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.Feature;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.core.Role;
import io.rmqgw.gateway.pool.UpstreamConnection;
import io.rmqgw.gateway.pool.UpstreamException;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Server-side coalescing of small sends, one per gateway. Single sends to the configured topics, from
 * any client connections on one broker's listener, are grouped by queue ({@link QueueBatcher}) and go to
 * the broker on the gateway's pooled connection as SEND_BATCH_MESSAGE, the gateway's own opaque, up to
 * {@code max-in-flight} batches per queue at once, written in the order they were taken; each client then gets
 * its own answer (its own offsetMsgId, queue offset = the batch's base + its index, its own opaque, in its
 * header encoding, made from one {@link SendResponseTemplate} per batch), or the batch's error.
 */
public final class Coalescing implements Feature {

    private static final Logger log = LoggerFactory.getLogger(Coalescing.class);
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
    private final CoalescingMeters meters;
    private final Map<QueueKey, Lane> lanes = new ConcurrentHashMap<>();

    public Coalescing(CoalescingConfig settings, RelayContext context, UpstreamPool pool, StoreHostMapper storeHosts) {
        this.context = context;
        this.pool = pool;
        this.storeHosts = storeHosts;
        this.metrics = context.metrics();
        this.meters = new CoalescingMeters(metrics.registry()); // on or off: exported at 0 from the start
        apply(settings);
    }

    /** Applies reloaded settings to every later send (batches already taken keep theirs). */
    public void settings(CoalescingConfig next) {
        apply(next);
        log.info("coalescing {}: topics {}, max {} messages, {} bytes, {} requests in flight per queue, idle queues "
            + "wait {} ms", next.enabled() ? "on" : "off", next.topics(), next.maxMessages(), next.maxBytes(),
            next.maxInFlight(), next.maxDelay().toMillis());
    }

    private void apply(CoalescingConfig next) {
        settings = Objects.requireNonNull(next, "next");
        topics = Set.copyOf(next.topics());
    }

    public CoalescingConfig settings() {
        return settings;
    }

    @Override
    public String name() {
        return "coalescing";
    }

    /**
     * On a broker role while some topic is coalesced, single sends to coalescing topics are taken into the gateway's
     * batches for that broker.
     */
    @Override
    public void register(Role role, String upstream, HandlerTable.Builder table) {
        if (role == Role.BROKER && active()) {
            table.filter(filter(upstream), RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2,
                RequestCode.SEND_BATCH_MESSAGE);
        }
    }

    @Override
    public boolean reload(GatewayConfig next) {
        if (settings.equals(next.coalescing())) {
            return false;
        }
        settings(next.coalescing());
        return true;
    }

    /**
     * The broker role's filter for single sends to the broker at {@code brokerAddress}: those to coalescing topics
     * are taken into the gateway's batches (answered later); while no topic is coalesced, one volatile read.
     */
    public RequestFilter filter(String brokerAddress) {
        return new RequestFilter() {
            @Override
            public RemotingFrame filter(Exchange exchange, RemotingFrame request) {
                if (!active()) {
                    return request;
                }
                SendRequestHeader header = exchange.header(request, SendRequestHeader.class);
                try {
                    return header != null && offer(exchange, request, header, brokerAddress) ? null : request;
                } catch (RuntimeException e) {
                    request.release();
                    throw e;
                }
            }

            /** A send it may take is stored whole: its body becomes a batch entry. */
            @Override
            public boolean readsBody() {
                return active();
            }

            @Override
            public String toString() {
                return "coalescing";
            }
        };
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
    public boolean offer(Exchange exchange, RemotingFrame request, SendRequestHeader header, String brokerAddress) {
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
            meters.passedThrough(reason);
            return false;
        }
        long now = System.nanoTime();
        int flag = SendEligibility.orZero(header.messageFlag());
        ByteBuf entry = exchange.alloc().buffer(SendEligibility.ENTRY_OVERHEAD + bodyLength
            + properties.readableBytes());
        try {
            BatchBody.write(flag, request.bodySlice(), properties, entry);
        } catch (RuntimeException e) {
            entry.release();
            throw e;
        }
        long born = header.bornTimestamp();
        int queueNums = header.defaultTopicQueueNums();
        CoalescedSend send = new CoalescedSend(exchange, request.opaque(), request.code(),
            exchange.answerEncoding(), entry, now, new CoalescedSend.BatchFields(
                header.producerGroup(), header.defaultTopic(),
                queueNums == CommandHeader.ABSENT_INT ? DEFAULT_TOPIC_QUEUE_NUMS : queueNums, flag, header.brokerName()),
            born == CommandHeader.ABSENT_LONG ? System.currentTimeMillis() : born);
        request.release();
        QueueKey key = new QueueKey(brokerAddress, header.topic(), header.queueId());
        Lane lane = lanes.computeIfAbsent(key, k -> new Lane(k, pool.broker(k.brokerAddress())));
        QueueBatcher.Offer offer = lane.batcher.offer(send, limits(s));
        if (offer == QueueBatcher.Offer.REFUSED) {
            entry.release();
            meters.send("busy");
            exchange.answer(Frames.errorResponse(exchange.alloc(), send.opaque(), send.answerEncoding(),
                RemotingSysResponseCode.SYSTEM_BUSY, "[COALESCING] " + lane.batcher.waiting() + " sends already wait for "
                    + key.topic() + " queue " + key.queueId() + " at broker " + brokerAddress + "; retry later"));
            return true;
        }
        if (offer == QueueBatcher.Offer.DRAIN) {
            lane.drainSoon();
        } else if (offer == QueueBatcher.Offer.LINGER) {
            try {
                lane.loop().schedule(lane::lingerEnded, s.maxDelay().toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                lane.lingerEnded(); // the gateway is stopping: at once (the pool answers it)
            }
        }
        meters.send("coalesced"); // after the drain is asked for: a test that saw the count sees its order
        return true;
    }

    private static QueueBatcher.Limits limits(CoalescingConfig s) {
        return new QueueBatcher.Limits(s.maxMessages(), s.maxBytes(), s.maxDelay().toNanos(),
            s.maxMessages() * WAITING_BATCHES, s.maxInFlight());
    }

    /**
     * One broker queue's sends and the pooled connection its batches go on. Batches are taken and written on
     * that connection's event loop only, so they reach the broker in the order they were taken; the loop also
     * owns {@link #shared}.
     */
    private final class Lane {
        final QueueKey key;
        final UpstreamConnection connection;
        final QueueBatcher<CoalescedSend> batcher = new QueueBatcher<>(CoalescedSend::bytes);
        private final Runnable drain = this::drain;
        /** The header fields the latest batch shared with earlier ones (owned by the loop). */
        private BatchRequestFields.Shared shared;

        Lane(QueueKey key, UpstreamConnection connection) {
            this.key = key;
            this.connection = connection;
        }

        EventLoop loop() {
            return connection.eventLoop();
        }

        /** Has the waiting sends taken on the connection's loop: now when already there. */
        void drainSoon() {
            EventLoop loop = loop();
            if (loop.inEventLoop()) {
                drain();
                return;
            }
            try {
                loop.execute(drain);
            } catch (RejectedExecutionException e) {
                drain(); // the gateway is stopping: the pool answers each batch CLOSED
            }
        }

        void lingerEnded() {
            batcher.lingerEnded();
            drain();
        }

        /** On the loop: sends batches while sends wait and a slot is free, each written before the next is taken. */
        void drain() {
            QueueBatcher.Limits limits = limits(settings);
            for (List<CoalescedSend> batch = batcher.take(limits); !batch.isEmpty(); batch = batcher.take(limits)) {
                send(batch);
            }
        }

        private void send(List<CoalescedSend> batch) {
            long sent = System.nanoTime();
            CoalescedSend first = batch.get(0);
            CompositeByteBuf body = first.exchange().alloc().compositeBuffer(batch.size());
            for (CoalescedSend s : batch) {
                body.addComponent(true, s.entry());
                meters.delay(sent - s.arrivalNanos());
            }
            BatchRequestFields.Shared fields = shared;
            if (fields == null || !fields.fits(first.fields())) {
                fields = new BatchRequestFields.Shared(key.topic(), key.queueId(), first.fields());
                shared = fields;
            }
            connection.request(RequestCode.SEND_BATCH_MESSAGE, new BatchRequestFields(fields, first.bornTimestamp()),
                    body, context.upstream().requestTimeoutNanos(), connection.eventLoop())
                .addListener((Future<RemotingFrame> f) -> answered(this, batch, sent, f));
        }
    }

    // ---------------------------------------------------------------- answers

    private void answered(Lane lane, List<CoalescedSend> batch, long sent, Future<RemotingFrame> f) {
        // the next batch first: the request's slot is free once the broker answered
        lane.batcher.answered();
        lane.drain();
        QueueKey key = lane.key;
        long received = System.nanoTime();
        if (!f.isSuccess()) {
            Throwable cause = f.cause();
            int code = cause instanceof UpstreamException u && u.reason() == UpstreamException.Reason.TIMEOUT
                ? RemotingSysResponseCode.SYSTEM_BUSY : RemotingSysResponseCode.SYSTEM_ERROR;
            meters.batch("failed", batch.size());
            failAll(batch, code, cause.getMessage() + " (" + describe(batch) + ")");
            return;
        }
        RemotingFrame response = f.getNow();
        try {
            CommandHeader header = HeaderTranscoder.decodeResponse(response, RequestCode.SEND_BATCH_MESSAGE);
            try {
                deliver(key, batch, response.code(), (SendResponseHeader) header, sent, received);
            } finally {
                header.release();
            }
        } catch (RuntimeException e) {
            log.warn("coalesced batch to {} {} queue {}: unreadable answer: {}", key.brokerAddress(), key.topic(),
                key.queueId(), e.toString());
            meters.batch("failed", batch.size());
            failAll(batch, RemotingSysResponseCode.SYSTEM_ERROR, "unreadable answer from broker " + key.brokerAddress()
                + " to " + describe(batch) + ": " + e.getMessage());
        } finally {
            response.release();
        }
    }

    private void deliver(QueueKey key, List<CoalescedSend> batch, int code, SendResponseHeader header, long sent,
                         long received) {
        if (!stores(code)) {
            meters.batch("refused", batch.size());
            String remark = header.remark();
            failAll(batch, code, (remark == null ? "" : remark) + " (" + describe(batch) + "; none was stored)");
            return;
        }
        SendResponseTemplate answers = SendResponseTemplate.of(code, header, storeHosts);
        if (answers.count() != batch.size() || answers.baseOffset() < 0) {
            // stored, but the answer cannot be split: say so instead of inventing ids
            String offset = header.get("queueOffset");
            log.warn("coalesced batch to {} {} queue {}: {} messages stored, answer has {} ids and queue offset {}",
                key.brokerAddress(), key.topic(), key.queueId(), batch.size(), answers.count(), offset);
            meters.batch("stored", batch.size());
            failAll(batch, RemotingSysResponseCode.SYSTEM_ERROR, "broker " + key.brokerAddress() + " stored "
                + describe(batch) + " but answered " + answers.count() + " ids and queue offset " + offset
                + " (the message may be stored: deduplicate by its unique key)");
            return;
        }
        meters.batch("stored", batch.size());
        long now = System.nanoTime();
        Map<EventLoop, List<Answer>> byLoop = new IdentityHashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            CoalescedSend s = batch.get(i);
            int index = i;
            add(byLoop, s, alloc -> answers.encode(alloc, s.answerEncoding(), s.opaque(), index));
            metrics.requestCompleted(s.requestCode(), code, (sent - s.arrivalNanos()) + (now - received),
                received - sent);
        }
        handOff(byLoop);
    }

    private void failAll(List<CoalescedSend> batch, int code, String remark) {
        Map<EventLoop, List<Answer>> byLoop = new IdentityHashMap<>();
        for (CoalescedSend s : batch) {
            metrics.requestAnswered(s.requestCode(), code);
            add(byLoop, s, alloc -> Frames.encode(alloc, RemotingHeader.response(s.opaque(), code, remark),
                s.answerEncoding(), null));
        }
        handOff(byLoop);
    }

    /** A client's answer, encoded, waiting to be handed to its connection's event loop. */
    private record Answer(Exchange exchange, ByteBuf frame) {
    }

    /** "a coalesced batch of 3 sends", for remarks. */
    private static String describe(List<CoalescedSend> batch) {
        return "a coalesced batch of " + batch.size() + (batch.size() == 1 ? " send" : " sends");
    }

    /** Encodes {@code s}'s answer with its client's allocator, to be handed to its client's loop. */
    private static void add(Map<EventLoop, List<Answer>> byLoop, CoalescedSend s,
                            Function<ByteBufAllocator, ByteBuf> answer) {
        EventLoop loop = s.exchange().loop();
        if (loop.isShuttingDown()) {
            return; // the gateway stopped past its drain: the client's connection is gone with its loop
        }
        byLoop.computeIfAbsent(loop, l -> new ArrayList<>()).add(new Answer(s.exchange(),
            answer.apply(s.exchange().alloc())));
    }

    /** One task per client event loop for a batch's answers, not one per answer: fewer thread hops. */
    private static void handOff(Map<EventLoop, List<Answer>> byLoop) {
        byLoop.forEach((loop, answers) -> {
            Runnable write = () -> answers.forEach(a -> a.exchange().answer(a.frame()));
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
