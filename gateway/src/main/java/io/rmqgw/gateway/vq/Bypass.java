package io.rmqgw.gateway.vq;

import static io.rmqgw.gateway.vq.VirtualBrokerHandler.error;
import static io.rmqgw.gateway.vq.VirtualBrokerHandler.success;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.relay.Exchange;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The virtual broker's requests from groups that are not served on a virtual-queue topic (any group not listed
 * for it: clustering, orderly or broadcasting): their virtual queues are the topic's real queues, one to one
 * ({@link BypassMap}), read and committed with real offsets on the real brokers. Each request goes on to the broker
 * of its real queue over the gateway's pooled upstream connections (the gateway's own opaques), and the broker's
 * answer comes back with the client's opaque; the records of a pull say the virtual queue they were pulled from.
 * Virtual queues with no real queue behind them are empty. Called on the client connection's event loop, where every
 * answer of the pool arrives too.
 */
final class Bypass {

    private static final Logger log = LoggerFactory.getLogger(Bypass.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The topics a connection registered (HEART_BEAT) bypass groups for: offset requests name no group. */
    private static final AttributeKey<Set<String>> TOPICS = AttributeKey.valueOf("rmqgw.vq.bypass.topics");
    /** PullSysFlag's suspend bit: the client lets the broker hold the pull. */
    private static final int FLAG_SUSPEND = 1 << 1;
    /** The property holding a message's client id (MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX). */
    private static final String UNIQUE_KEY = "UNIQ_KEY";
    /** The longest a pull on an empty virtual queue is held: what brokers allow a push consumer's long poll. */
    private static final long MAX_EMPTY_HOLD_MILLIS = 15_000;

    /** A pull on a virtual queue with no real queue behind it, held as a broker holds a long poll. */
    private static final class HeldEmpty {
        final Exchange exchange;
        final VirtualBrokerHandler.Request request;
        ScheduledFuture<?> timer;

        HeldEmpty(Exchange exchange, VirtualBrokerHandler.Request request) {
            this.exchange = exchange;
            this.request = request;
        }
    }

    /** A pull sent on to a broker; answered once, by the broker's answer or by a stop's drain. */
    private static final class PullInFlight {
        final Exchange exchange;
        final VirtualBrokerHandler.Request request;
        private final AtomicBoolean answered = new AtomicBoolean();

        PullInFlight(Exchange exchange, VirtualBrokerHandler.Request request) {
            this.exchange = exchange;
            this.request = request;
        }

        boolean claim() {
            return answered.compareAndSet(false, true);
        }
    }

    private final VirtualQueues queues;
    private final Set<PullInFlight> pulls = ConcurrentHashMap.newKeySet();
    private final Map<Integer, Counter> counters = new ConcurrentHashMap<>();
    /** Each virtual-queue topic's bypass map as last used. */
    private final Map<String, BypassMap> maps = new ConcurrentHashMap<>();
    private final Set<HeldEmpty> held = ConcurrentHashMap.newKeySet();

    Bypass(VirtualQueues queues) {
        this.queues = queues;
    }

    // ---------------------------------------------------------------- who bypasses

    /**
     * Whether {@code group}'s requests on {@code topic} bypass: the topic is on virtual queues and the group is served
     * on none. A group served on another topic is kept from the brokers' heartbeats, so the brokers do not know it as
     * a consumer of this one: it stays refused.
     */
    boolean applies(String group, String topic) {
        return group != null && topic != null && queues.servesTopic(topic) && !queues.isServed(group);
    }

    /** A heartbeat on the virtual broker named {@code group} consuming {@code topic}: remembered when it bypasses. */
    void registered(Channel connection, String group, String topic) {
        if (applies(group, topic)) {
            Set<String> topics = connection.attr(TOPICS).get();
            if (topics == null) {
                Set<String> fresh = ConcurrentHashMap.newKeySet();
                topics = connection.attr(TOPICS).setIfAbsent(fresh);
                topics = topics == null ? fresh : topics;
            }
            topics.add(topic);
        }
    }

    /**
     * Whether offset requests on {@code topic}, which name no group (GET_MAX_OFFSET, GET_MIN_OFFSET,
     * SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME), come from a bypass group: its connection registered
     * one for the topic.
     */
    boolean connectionBypasses(Channel connection, String topic) {
        Set<String> topics = connection.attr(TOPICS).get();
        return topics != null && topic != null && topics.contains(topic) && queues.servesTopic(topic);
    }

    // ---------------------------------------------------------------- requests

    /**
     * PULL_MESSAGE (and LITE_PULL_MESSAGE, sent on as PULL_MESSAGE): the broker's answer with the records re-addressed
     * to the virtual queue, or an empty queue.
     */
    void pull(Exchange exchange, VirtualBrokerHandler.Request r) {
        counted(r);
        String topic = r.field("topic");
        int virtualQueue = r.intField("queueId", -1);
        withRoute(exchange, r, topic, map -> {
            RealQueue real = map.real(virtualQueue);
            if (real == null) {
                holdEmpty(exchange, r);
                return;
            }
            long suspend = Math.max(0, r.longField("suspendTimeoutMillis", 0));
            long timeout = TimeUnit.MILLISECONDS.toNanos(suspend) + queues.context().upstream().requestTimeoutNanos();
            PullInFlight p = new PullInFlight(exchange, r);
            pulls.add(p);
            sendQuietly(exchange, r, real.brokerName(), withQueue(r, real), null, timeout, answer -> {
                pulls.remove(p);
                if (p.claim()) {
                    answerPull(exchange, r, answer, virtualQueue);
                } else {
                    answer.release(); // answered when the gateway began to stop: the client pulls this offset again
                }
            }, failure -> {
                pulls.remove(p);
                if (p.claim()) {
                    error(exchange, r, RemotingSysResponseCode.SYSTEM_ERROR, failure);
                }
            });
        });
    }

    /** Bypass pulls held at brokers now (long polls a stop need not wait for: they are answered when it begins). */
    int pullsInFlight() {
        return pulls.size();
    }

    /**
     * QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP,
     * GET_EARLIEST_MSG_STORETIME: on to the real queue's broker, answered as it answers.
     */
    void offsets(Exchange exchange, VirtualBrokerHandler.Request r) {
        counted(r);
        int virtualQueue = r.intField("queueId", -1);
        withRoute(exchange, r, r.field("topic"), map -> {
            RealQueue real = map.real(virtualQueue);
            if (real == null) {
                answerEmptyOffsets(exchange, r, virtualQueue, map.size());
            } else {
                send(exchange, r, real.brokerName(), withQueue(r, real), null,
                    queues.context().upstream().requestTimeoutNanos(), relayed(exchange, r));
            }
        });
    }

    /**
     * GET_CONSUMER_LIST_BY_GROUP: the members the brokers know (the group's clients heartbeat the real brokers
     * themselves), from the first broker of a virtual-queue topic the connection consumes in bypass (any such
     * topic when it registered none).
     */
    void members(Exchange exchange, VirtualBrokerHandler.Request r) {
        counted(r);
        Set<String> mine = exchange.client().channel().attr(TOPICS).get();
        String topic = mine == null || mine.isEmpty() ? null : new TreeSet<>(mine).first();
        if (topic == null) {
            topic = queues.settings().isEmpty() ? null : queues.settings().get(0).topic();
        }
        withRoute(exchange, r, topic, map -> {
            if (map.size() == 0) {
                error(exchange, r, RemotingSysResponseCode.SYSTEM_ERROR, "no readable queue on a virtual-queue topic: "
                    + "no broker to ask for the members of " + r.field("consumerGroup"));
                return;
            }
            send(exchange, r, map.real(0).brokerName(), r.ext(), null, queues.context().upstream().requestTimeoutNanos(),
                relayed(exchange, r));
        });
    }

    /**
     * CONSUMER_SEND_MSG_BACK of a message pulled from a virtual queue: on to the broker that stores it, which the
     * request names only by commit-log offset. With one broker behind the topic that is that broker; with several,
     * each is asked for the record at that offset (VIEW_MESSAGE_BY_ID), and the one whose record is the message (its
     * topic, and its UNIQ_KEY where it has one, the id the client sent) takes it. When none or several match, the
     * send-back is refused: the client then sends the message to the group's retry topic itself, as RocketMQ clients
     * do when a send-back fails (nothing is lost; the delay level is the client's own choice).
     */
    void sendBack(Exchange exchange, VirtualBrokerHandler.Request r) {
        counted(r);
        String topic = r.field("originTopic");
        withRoute(exchange, r, topic, map -> {
            List<String> brokers = new ArrayList<>(map.brokerNames());
            if (brokers.size() == 1) {
                sendBackTo(exchange, r, brokers.get(0));
                return;
            }
            long offset = r.longField("offset", -1);
            List<String> storing = new ArrayList<>();
            int[] waiting = {brokers.size()};
            for (String broker : brokers) {
                Map<String, String> ext = new LinkedHashMap<>();
                ext.put("topic", topic);
                ext.put("offset", Long.toString(offset));
                ask(exchange, broker, RequestCode.VIEW_MESSAGE_BY_ID, ext, answer -> {
                    try {
                        if (answer != null && answer.code() == ResponseCode.SUCCESS
                            && isTheMessage(answer.bodySlice(), topic, offset, r.field("originMsgId"))) {
                            storing.add(broker);
                        }
                    } finally {
                        if (answer != null) {
                            answer.release();
                        }
                    }
                    if (--waiting[0] == 0) {
                        if (storing.size() == 1) {
                            sendBackTo(exchange, r, storing.get(0));
                        } else {
                            error(exchange, r, RemotingSysResponseCode.SYSTEM_ERROR, "send-back through the virtual "
                                + "broker: " + storing.size() + " of topic " + topic + "'s " + brokers.size()
                                + " brokers store a message at commit-log offset " + offset + " that is this one; send "
                                + "the message to the retry topic instead");
                        }
                    }
                });
            }
        });
    }

    /** Whether {@code record} (a VIEW_MESSAGE_BY_ID answer) is the message a send-back names. */
    static boolean isTheMessage(ByteBuf record, String topic, long commitLogOffset, String originMsgId) {
        int at = record.readerIndex();
        if (StoredRecords.recordLength(record, at) <= 0 || StoredRecords.commitLogOffset(record, at) != commitLogOffset
            || !topic.equals(StoredRecords.topic(record, at))) {
            return false;
        }
        String id = StoredRecords.property(record, at, UNIQUE_KEY);
        return id == null || originMsgId == null || id.equals(originMsgId);
    }

    private void sendBackTo(Exchange exchange, VirtualBrokerHandler.Request r, String broker) {
        Map<String, String> ext = r.ext() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(r.ext());
        if (ext.containsKey("bname")) {
            ext.put("bname", broker);
        }
        send(exchange, r, broker, ext, null, queues.context().upstream().requestTimeoutNanos(), relayed(exchange, r));
    }

    /**
     * LOCK_BATCH_MQ and UNLOCK_BATCH_MQ of an orderly bypass group: its virtual queues mapped to real ones, one
     * request per broker with the client's own fields (its client id holds the lock), and the queues the brokers
     * locked mapped back. A virtual queue with no real queue behind it counts as locked: it never holds a message.
     */
    void locks(Exchange exchange, VirtualBrokerHandler.Request r, ObjectNode body) {
        counted(r);
        lockWithRoutes(exchange, r, body);
    }

    /** {@link #locks} once the gateway knows the route of every topic named (asking the name servers first). */
    private void lockWithRoutes(Exchange exchange, VirtualBrokerHandler.Request r, ObjectNode body) {
        ClusterView cluster = queues.context().cluster();
        for (JsonNode mq : body.path("mqSet")) {
            String topic = mq.path("topic").asText(null);
            if (topic != null && !cluster.knowsTopic(topic)) {
                withRoute(exchange, r, topic, known -> lockWithRoutes(exchange, r, body));
                return;
            }
        }
        Map<String, BypassMap> byTopic = new HashMap<>();
        Map<String, List<JsonNode>> perBroker = new TreeMap<>();
        List<JsonNode> lockedHere = new ArrayList<>();
        for (JsonNode mq : body.path("mqSet")) {
            String topic = mq.path("topic").asText(null);
            if (topic == null) {
                continue; // not locked
            }
            BypassMap map = byTopic.computeIfAbsent(topic, this::mapOf);
            RealQueue real = map.real(mq.path("queueId").asInt(-1));
            if (real == null) {
                lockedHere.add(mq);
                continue;
            }
            ObjectNode realMq = JSON.createObjectNode();
            realMq.put("topic", topic);
            realMq.put("brokerName", real.brokerName());
            realMq.put("queueId", real.queueId());
            perBroker.computeIfAbsent(real.brokerName(), b -> new ArrayList<>()).add(realMq);
        }
        ArrayNode locked = JSON.createArrayNode();
        lockedHere.forEach(locked::add);
        int[] waiting = {perBroker.size()};
        Runnable done = () -> {
            if (--waiting[0] == 0) {
                answerLocks(exchange, r, locked);
            }
        };
        if (perBroker.isEmpty()) {
            waiting[0] = 1;
            done.run();
            return;
        }
        perBroker.forEach((broker, mqs) -> {
            ObjectNode toBroker = body.deepCopy();
            toBroker.putArray("mqSet").addAll(mqs);
            byte[] bytes;
            try {
                bytes = JSON.writeValueAsBytes(toBroker);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            sendQuietly(exchange, r, broker, r.ext(), Unpooled.wrappedBuffer(bytes), answer -> {
                try {
                    if (answer != null && answer.code() == ResponseCode.SUCCESS && answer.bodyLength() > 0) {
                        JsonNode ok = VirtualBrokerHandler.readJson(answer.bodySlice());
                        for (JsonNode mq : ok == null ? JSON.createArrayNode() : ok.path("lockOKMQSet")) {
                            String topic = mq.path("topic").asText(null);
                            BypassMap map = topic == null ? null : byTopic.get(topic);
                            int virtualQueue = map == null ? -1
                                : map.virtualOf(mq.path("brokerName").asText(null), mq.path("queueId").asInt(-1));
                            if (virtualQueue >= 0) {
                                ObjectNode virtualMq = locked.addObject();
                                virtualMq.put("topic", topic);
                                virtualMq.put("brokerName", VirtualQueues.BROKER_NAME);
                                virtualMq.put("queueId", virtualQueue);
                            }
                        }
                    } else if (answer != null && answer.code() != ResponseCode.SUCCESS) {
                        log.debug("bypass {} of {} on broker {} answered {}: {}", r.code(), mqs, broker, answer.code(),
                            HeaderCodec.decodeHeader(answer).remark());
                    }
                } finally {
                    if (answer != null) {
                        answer.release();
                    }
                    done.run();
                }
            });
        });
    }

    /**
     * The gateway stops: pulls held on empty virtual queues and pulls held at brokers are answered now (no message, or
     * SYSTEM_BUSY); the client pulls the same offset again elsewhere, so nothing is lost, and brokers' late answers
     * are dropped.
     */
    void drain() {
        for (PullInFlight p : pulls) {
            if (p.claim()) {
                error(p.exchange, p.request, ResponseCode.SYSTEM_BUSY, "the gateway is stopping: pull again");
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

    // ---------------------------------------------------------------- answers

    private void answerPull(Exchange exchange, VirtualBrokerHandler.Request r, RemotingFrame answer,
                            int virtualQueue) {
        try {
            ByteBuf records = null;
            if (answer.code() == ResponseCode.SUCCESS && answer.bodyLength() > 0) {
                records = readdressed(exchange, answer, virtualQueue);
            }
            relay(exchange, r, answer, records);
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

    /** Relays a broker's answer to the client as it is ({@link #relay}), then releases it. */
    private static Consumer<RemotingFrame> relayed(Exchange exchange, VirtualBrokerHandler.Request r) {
        return answer -> {
            try {
                relay(exchange, r, answer, null);
            } finally {
                answer.release();
            }
        };
    }

    /**
     * The broker's answer to the client: its code, remark and fields with the client's opaque, and {@code body}
     * (owned; null for the answer's own, retained here: {@code answer} stays the caller's). A broker's suggestion
     * to pull from a slave is dropped: the virtual broker has none.
     */
    private static void relay(Exchange exchange, VirtualBrokerHandler.Request r, RemotingFrame answer, ByteBuf body) {
        if (r.oneway()) {
            if (body != null) {
                body.release();
            }
            return;
        }
        RemotingHeader brokers = HeaderCodec.decodeHeader(answer);
        Map<String, String> ext = brokers.extFields() == null ? null : new LinkedHashMap<>(brokers.extFields());
        if (ext != null && ext.containsKey("suggestWhichBrokerId")) {
            ext.put("suggestWhichBrokerId", "0");
        }
        ByteBuf out = body != null ? body : answer.bodyLength() > 0 ? answer.retainedBody() : null;
        exchange.answer(Frames.encode(exchange.alloc(),
            RemotingHeader.response(r.opaque(), answer.code(), brokers.remark()).withExtFields(ext), r.encoding(), out));
    }

    private void holdEmpty(Exchange exchange, VirtualBrokerHandler.Request r) {
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

    private static void answerNoMessage(Exchange exchange, VirtualBrokerHandler.Request r) {
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

    /** Offset requests on a virtual queue with no real queue behind it: an empty queue's answers. */
    private static void answerEmptyOffsets(Exchange exchange, VirtualBrokerHandler.Request r, int virtualQueue,
                                           int realQueues) {
        String why = "virtual queue " + virtualQueue + " has no real queue behind it (topic " + r.field("topic")
            + " has " + realQueues + " readable queues)";
        switch (r.code()) {
            case RequestCode.QUERY_CONSUMER_OFFSET -> error(exchange, r, ResponseCode.QUERY_NOT_FOUND, why);
            case RequestCode.UPDATE_CONSUMER_OFFSET -> success(exchange, r, null);
            case RequestCode.GET_EARLIEST_MSG_STORETIME -> error(exchange, r, RemotingSysResponseCode.SYSTEM_ERROR, why);
            default -> success(exchange, r, Map.of("offset", "0"));
        }
    }

    private static void answerLocks(Exchange exchange, VirtualBrokerHandler.Request r, ArrayNode locked) {
        if (r.oneway()) {
            return;
        }
        ByteBuf body = null;
        if (r.code() == RequestCode.LOCK_BATCH_MQ) {
            ObjectNode answer = JSON.createObjectNode();
            answer.set("lockOKMQSet", locked);
            try {
                body = Unpooled.wrappedBuffer(JSON.writeValueAsBytes(answer));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        exchange.answer(Frames.encode(exchange.alloc(),
            RemotingHeader.response(r.opaque(), ResponseCode.SUCCESS, null), r.encoding(), body));
    }

    // ---------------------------------------------------------------- plumbing

    /** The request's fields for the real queue: its queue id, and its broker name where the client sent one (5.x). */
    private static Map<String, String> withQueue(VirtualBrokerHandler.Request r, RealQueue real) {
        Map<String, String> ext = r.ext() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(r.ext());
        ext.put("queueId", Integer.toString(real.queueId()));
        if (ext.containsKey("bname")) {
            ext.put("bname", real.brokerName());
        }
        return ext;
    }

    /** Runs {@code then} with the topic's bypass map, asking the name servers first when the gateway knows no route. */
    private void withRoute(Exchange exchange, VirtualBrokerHandler.Request r, String topic, Consumer<BypassMap> then) {
        ClusterView cluster = queues.context().cluster();
        if (topic == null) {
            error(exchange, r, ResponseCode.SYSTEM_ERROR, "the request names no topic");
            return;
        }
        if (cluster.knowsTopic(topic)) {
            then.accept(mapOf(topic));
            return;
        }
        queues.routes().refresh(topic, exchange.loop()).addListener(f -> {
            if (cluster.knowsTopic(topic)) {
                then.accept(mapOf(topic));
            } else {
                // an empty answer here would make a client start over from its consumeFromWhere
                error(exchange, r, ResponseCode.SYSTEM_ERROR, "the route of topic " + topic + " is not known to the "
                    + "gateway" + (f.isSuccess() ? "" : " (name servers: " + f.cause().getMessage() + ")"));
            }
        });
    }

    /**
     * The bypass map of {@code topic} (its route known): what the route says, with every real queue this gateway saw
     * before keeping its place ({@link BypassMap#with}), so a broker that drops out of the route while it restarts
     * renames no virtual queue; its own are answered with errors meanwhile (no master known, or not reachable). A
     * change that still renames (a new broker whose name sorts before a known one) is logged and counted
     * ({@code rmqgw_vq_bypass_remaps_total}): the clients of bypassing groups holding those virtual queues read and
     * commit another real queue's offsets until they restart.
     */
    private BypassMap mapOf(String topic) {
        BypassMap routed = BypassMap.of(queues.context().cluster().queues(topic));
        BypassMap before = maps.get(topic);
        BypassMap map = before == null ? routed : before.with(routed);
        if (map.equals(before)) {
            return before;
        }
        maps.put(topic, map);
        if (before != null && before.renamedBy(map)) {
            log.warn("virtual queues of topic {} now stand for other real queues for groups that bypass ({} -> {}): "
                + "restart those groups' consumers", topic, before.queues(), map.queues());
            Counter.builder("rmqgw.vq.bypass.remaps").description("Route changes that put other real queues behind "
                + "the virtual queues of groups that bypass").tag("topic", topic)
                .register(queues.context().metrics().registry()).increment();
        }
        return map;
    }

    /**
     * Sends the request on to {@code brokerName}'s master with {@code ext} and {@code body} (owned); {@code then} gets
     * the broker's answer (owned), or the client is answered SYSTEM_ERROR naming what failed. A oneway request goes
     * on as a oneway.
     */
    private void send(Exchange exchange, VirtualBrokerHandler.Request r, String brokerName, Map<String, String> ext,
                      ByteBuf body, long timeoutNanos, Consumer<RemotingFrame> then) {
        sendQuietly(exchange, r, brokerName, ext, body, timeoutNanos, answer -> {
            if (answer != null) {
                then.accept(answer);
            }
        }, failure -> error(exchange, r, RemotingSysResponseCode.SYSTEM_ERROR, failure));
    }

    /** {@link #send} whose {@code then} also gets null after a failure (logged), with the request timeout. */
    private void sendQuietly(Exchange exchange, VirtualBrokerHandler.Request r, String brokerName,
                             Map<String, String> ext, ByteBuf body, Consumer<RemotingFrame> then) {
        sendQuietly(exchange, r, brokerName, ext, body, queues.context().upstream().requestTimeoutNanos(), then,
            failure -> {
                log.debug("bypass request {}: {}", r.code(), failure);
                then.accept(null);
            });
    }

    private void sendQuietly(Exchange exchange, VirtualBrokerHandler.Request r, String brokerName,
                             Map<String, String> ext, ByteBuf body, long timeoutNanos, Consumer<RemotingFrame> then,
                             Consumer<String> failed) {
        Optional<String> master = queues.context().cluster().masterAddress(brokerName);
        if (master.isEmpty()) {
            if (body != null) {
                body.release();
            }
            failed.accept("no master address known for broker " + brokerName);
            return;
        }
        // a lite pull (361) goes as PULL_MESSAGE: same header and answer, and brokers before 5.0.0 refuse 361
        int code = r.code();
        if (code == RequestCode.LITE_PULL_MESSAGE) {
            code = RequestCode.PULL_MESSAGE;
            queues.context().metrics().litePullTranslated();
        }
        RemotingHeader header = new RemotingHeader(code, r.header().language(), r.header().version(), 0, 0, null, ext);
        if (r.oneway()) {
            queues.pool().broker(master.get()).oneway(header, body, exchange.loop()).addListener(f -> {
                if (!f.isSuccess()) {
                    log.debug("bypass oneway {} to broker {} not sent: {}", r.code(), brokerName, f.cause().getMessage());
                }
            });
            return;
        }
        queues.pool().broker(master.get()).request(header, body, timeoutNanos, exchange.loop())
            .addListener(f -> {
                if (f.isSuccess()) {
                    then.accept((RemotingFrame) f.getNow());
                } else {
                    failed.accept("broker " + brokerName + " through the gateway: " + f.cause().getMessage());
                }
            });
    }

    /** The gateway's own request {@code code} to {@code brokerName}'s master; {@code then} gets the answer or null. */
    private void ask(Exchange exchange, String brokerName, int code, Map<String, String> ext,
                     Consumer<RemotingFrame> then) {
        Optional<String> master = queues.context().cluster().masterAddress(brokerName);
        if (master.isEmpty()) {
            then.accept(null);
            return;
        }
        queues.pool().broker(master.get()).request(code, ext, null, queues.context().upstream().requestTimeoutNanos(),
            exchange.loop()).addListener(f -> then.accept(f.isSuccess() ? (RemotingFrame) f.getNow() : null));
    }

    private void counted(VirtualBrokerHandler.Request r) {
        counters.computeIfAbsent(r.code(), code -> Counter.builder("rmqgw.vq.bypass.requests")
            .description("Virtual-broker requests of groups not served on the topic, sent on to its real queues")
            .tag("code", GatewayMetrics.requestCodeLabel(code)).register(queues.context().metrics().registry()))
            .increment();
    }
}
