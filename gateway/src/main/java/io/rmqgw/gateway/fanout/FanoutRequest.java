package io.rmqgw.gateway.fanout;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.ClusterView.QueueRef;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * One send to the fan-out topic, from its checked destinations to the client's one answer. Runs on
 * the client connection's event loop (route refreshes and pool answers complete there), so its
 * fields need no locks.
 *
 * <ol>
 *   <li>Every destination is checked (name rules, a route, a writable queue); routes unknown or older
 *       than {@link #ROUTE_MAX_AGE} are asked of a name server first. Any problem refuses the whole
 *       request before anything is sent.</li>
 *   <li>Messages are grouped by destination queue: the sharding key's hash picks the queue, else one
 *       queue per topic and request, round robin across requests. Each group is one part.</li>
 *   <li>Every part goes out at once as a SEND_BATCH_MESSAGE on the upstream pool; a failed part is sent
 *       again (at most {@code max-retries} times) to another writable queue of its topic (a sharded part
 *       to the same queue, so a key stays on its queue).</li>
 *   <li>When every part has settled the client gets one answer: every message id (each message's ids in
 *       its destinations' order), or an error naming the destinations that failed and those that stored.</li>
 * </ol>
 */
final class FanoutRequest {

    /** A route older than this is asked again before messages go to it (clients poll every 30 s too). */
    static final Duration ROUTE_MAX_AGE = Duration.ofSeconds(30);
    private static final String DEFAULT_TOPIC = "TBW102";

    /** Messages of one request bound for one queue. */
    private static final class Part {
        final String topic;
        final boolean sharded;
        final List<FanoutMessages.Message> messages = new ArrayList<>();
        final Set<QueueRef> tried = new HashSet<>();
        QueueRef queue;
        int attempts;
        String[] ids;
        int storedCode = -1;
        int failedCode = -1;
        String failure;

        Part(String topic, QueueRef queue, boolean sharded) {
            this.topic = topic;
            this.queue = queue;
            this.sharded = sharded;
        }

        boolean stored() {
            return storedCode >= 0;
        }

        String where() {
            return queue.brokerName() + " queue " + queue.queueId();
        }
    }

    /** Where one of a message's copies went: its part and its position in that part's batch. */
    private record Slot(Part part, int position) {
    }

    private final Fanout fanout;
    private final FanoutConfig settings;
    private final Exchange exchange;
    private final int opaque;
    private final boolean oneway;
    private final SerializeType encoding;
    private final FanoutMessages in;
    private final ClusterView view;
    private final EventLoop loop;
    private final FanoutMeters meters;
    private final long deadline;
    private final Map<String, Throwable> refreshFailures = new HashMap<>();
    /** Destinations whose names passed, checked for a route once the refreshes are back. */
    private final List<String> checkRoute = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private int problemCode;
    private final List<Part> parts = new ArrayList<>();
    private final List<List<Slot>> slots = new ArrayList<>();
    private int refreshing;
    private int unsettled;

    FanoutRequest(Fanout fanout, FanoutConfig settings, Exchange exchange, int opaque, boolean oneway,
                  SerializeType encoding, FanoutMessages in) {
        this.fanout = fanout;
        this.settings = settings;
        this.exchange = exchange;
        this.opaque = opaque;
        this.oneway = oneway;
        this.encoding = encoding;
        this.in = in;
        this.view = fanout.context().cluster();
        this.loop = exchange.loop();
        this.meters = fanout.meters();
        this.deadline = System.nanoTime() + fanout.context().upstream().requestTimeoutNanos();
    }

    // ---------------------------------------------------------------- 1. destinations

    void start() {
        NameValidator names = exchange.edge().names() != null ? exchange.edge().names() : NameValidator.DEFAULT;
        List<String> refresh = new ArrayList<>();
        for (String topic : in.topics()) {
            NameCheck check = names.checkSendTopic(topic);
            if (!check.isValid()) {
                problem(NameValidator.responseCode(check, exchange.edge().legacyBrokers()),
                    "destination " + names.topicRemark(check, topic));
            } else if (topic.startsWith(NameValidator.RETRY_PREFIX) || topic.startsWith(NameValidator.DLQ_PREFIX)) {
                problem(ResponseCode.INVALID_PARAMETER, "destination " + topic + " is a retry or dead-letter topic");
            } else if (topic.equals(settings.topic())) {
                problem(ResponseCode.INVALID_PARAMETER, "destination " + topic + " is the fan-out topic itself");
            } else {
                checkRoute.add(topic);
                if (stale(topic)) {
                    refresh.add(topic);
                }
            }
        }
        refreshing = refresh.size();
        if (refreshing == 0) {
            routesKnown();
            return;
        }
        for (String topic : refresh) {
            fanout.routes().refresh(topic, loop).addListener(f -> {
                if (!f.isSuccess()) {
                    refreshFailures.put(topic, f.cause());
                }
                if (--refreshing == 0) {
                    routesKnown();
                }
            });
        }
    }

    /** A reason to refuse the request; the first one's code is the answer's. */
    private void problem(int code, String remark) {
        problemCode = problems.isEmpty() ? code : problemCode;
        problems.add(remark);
    }

    private boolean stale(String topic) {
        return view.route(topic).map(r -> r.learnedAt().isBefore(Instant.now().minus(ROUTE_MAX_AGE))).orElse(true)
            || view.writableQueues(topic).isEmpty();
    }

    private void routesKnown() {
        for (String topic : checkRoute) {
            Throwable failure = refreshFailures.get(topic);
            if (!view.knowsTopic(topic)) {
                if (failure != null) {
                    problem(RemotingSysResponseCode.SYSTEM_ERROR, "the route of destination " + topic + " is unknown: "
                        + failure.getMessage());
                } else {
                    problem(ResponseCode.TOPIC_NOT_EXIST, "destination " + topic
                        + " has no route (the name server does not know the topic)");
                }
            } else if (view.writableQueues(topic).isEmpty()) {
                problem(ResponseCode.NO_PERMISSION, "destination " + topic + " has no writable queue (perm "
                    + view.queues(topic).stream().map(q -> q.brokerName() + ":" + q.perm()).toList() + ")");
            }
        }
        if (!problems.isEmpty()) {
            refuse();
            return;
        }
        plan();
        unsettled = parts.size();
        for (Part part : parts) {
            send(part);
        }
    }

    // ---------------------------------------------------------------- 2. parts

    private void plan() {
        Map<String, List<QueueRef>> queues = new HashMap<>();
        Map<String, QueueRef> roundRobin = new HashMap<>();
        Map<List<Object>, Part> byQueue = new LinkedHashMap<>();
        for (FanoutMessages.Message m : in.messages()) {
            List<Slot> copies = new ArrayList<>(m.destinations().size());
            for (String topic : m.destinations()) {
                List<QueueRef> writable = queues.computeIfAbsent(topic, view::writableQueues);
                boolean sharded = m.shardingKey() != null;
                QueueRef queue = sharded
                    ? writable.get(Math.floorMod(m.shardingKey().hashCode(), writable.size()))
                    : roundRobin.computeIfAbsent(topic,
                        t -> writable.get(Math.floorMod(fanout.nextRoundRobin(), writable.size())));
                Part part = byQueue.computeIfAbsent(List.of(topic, queue, sharded), k -> new Part(topic, queue, sharded));
                copies.add(new Slot(part, part.messages.size()));
                part.messages.add(m);
            }
            slots.add(copies);
        }
        parts.addAll(byQueue.values());
    }

    // ---------------------------------------------------------------- 3. sending

    private void send(Part part) {
        part.attempts++;
        part.tried.add(part.queue);
        String address = view.masterAddress(part.queue.brokerName()).orElse(null);
        long remaining = deadline - System.nanoTime();
        if (address == null || remaining <= 0) {
            failed(part, RemotingSysResponseCode.SYSTEM_ERROR, address == null
                ? "broker " + part.queue.brokerName() + " has no master" : "no time left (upstream.request-timeout)");
            return;
        }
        int size = part.messages.stream().mapToInt(FanoutMessages.Message::entryLength).sum();
        ByteBuf body = exchange.alloc().buffer(size);
        for (FanoutMessages.Message m : part.messages) {
            body.writeBytes(in.stripped(), m.entryIndex(), m.entryLength());
        }
        fanout.pool().broker(address).request(RequestCode.SEND_BATCH_MESSAGE, header(part), body, remaining, loop)
            .addListener((Future<RemotingFrame> f) -> answered(part, address, f));
    }

    /** SendMessageRequestHeaderV2 of a part: the client's fields, the part's topic and queue, batch set. */
    private Map<String, String> header(Part part) {
        FanoutMessages.SendFields s = in.send();
        Map<String, String> ext = new LinkedHashMap<>();
        if (s.producerGroup() != null) {
            ext.put("a", s.producerGroup());
        }
        ext.put("b", part.topic);
        ext.put("c", DEFAULT_TOPIC);
        ext.put("d", "4");
        ext.put("e", Integer.toString(part.queue.queueId()));
        ext.put("f", Integer.toString(s.sysFlag()));
        ext.put("g", Long.toString(s.bornTimestamp()));
        ext.put("h", Integer.toString(s.flag()));
        if (s.batchProperties() != null) {
            ext.put("i", s.batchProperties());
        }
        ext.put("j", Integer.toString(s.reconsumeTimes()));
        ext.put("k", "false");
        ext.put("m", "true");
        ext.put("n", part.queue.brokerName());
        return ext;
    }

    private void answered(Part part, String address, Future<RemotingFrame> f) {
        if (!f.isSuccess()) {
            failed(part, RemotingSysResponseCode.SYSTEM_ERROR, f.cause().getMessage());
            return;
        }
        RemotingFrame response = f.getNow();
        int code = response.code();
        String remark = null;
        String ids = null;
        try {
            CommandHeader header = HeaderTranscoder.decodeResponse(response, RequestCode.SEND_BATCH_MESSAGE);
            try {
                remark = header.remark();
                ids = header instanceof SendResponseHeader send ? send.msgId() : header.get("msgId");
            } finally {
                header.release();
            }
        } catch (RuntimeException e) {
            failed(part, RemotingSysResponseCode.SYSTEM_ERROR, "unreadable answer from broker " + address + ": " + e.getMessage());
            return;
        } finally {
            response.release();
        }
        if (stores(code)) {
            String rewritten = MessageIds.rewriteList(ids == null ? "" : ids, fanout.storeHosts());
            part.ids = rewritten.isEmpty() ? new String[0] : rewritten.split(",");
            part.storedCode = code;
            settled();
        } else {
            failed(part, code, "code " + code + (remark == null ? "" : " " + remark));
        }
    }

    private void failed(Part part, int code, String reason) {
        part.failedCode = code;
        part.failure = part.where() + ": " + reason;
        if (retriable(code) && part.attempts <= settings.maxRetries() && deadline - System.nanoTime() > 0) {
            QueueRef next = part.sharded ? part.queue : anotherQueue(part);
            if (next != null) {
                meters.retry();
                part.queue = next;
                send(part);
                return;
            }
        }
        settled();
    }

    /** A writable queue of the part's topic not tried yet, on a broker not tried yet if there is one. */
    private QueueRef anotherQueue(Part part) {
        List<QueueRef> writable = view.writableQueues(part.topic);
        Set<String> triedBrokers = new HashSet<>();
        part.tried.forEach(q -> triedBrokers.add(q.brokerName()));
        QueueRef untried = null;
        for (QueueRef q : writable) {
            if (!part.tried.contains(q)) {
                if (!triedBrokers.contains(q.brokerName())) {
                    return q;
                }
                untried = untried == null ? q : untried;
            }
        }
        return untried != null ? untried : writable.contains(part.queue) ? part.queue : null;
    }

    /** Answers whose messages the broker stored (flush or replica timeouts included, as clients count them). */
    private static boolean stores(int code) {
        return code == ResponseCode.SUCCESS || code == ResponseCode.FLUSH_DISK_TIMEOUT
            || code == ResponseCode.FLUSH_SLAVE_TIMEOUT || code == ResponseCode.SLAVE_NOT_AVAILABLE;
    }

    /** The answers a producer retries on (and a failed connection or timeout, SYSTEM_ERROR here). */
    private static boolean retriable(int code) {
        return code == RemotingSysResponseCode.SYSTEM_ERROR || code == RemotingSysResponseCode.SYSTEM_BUSY
            || code == ResponseCode.SERVICE_NOT_AVAILABLE || code == ResponseCode.TOPIC_NOT_EXIST
            || code == ResponseCode.NO_PERMISSION;
    }

    // ---------------------------------------------------------------- 4. the answer

    private void settled() {
        if (--unsettled > 0) {
            return;
        }
        try {
            if (parts.stream().allMatch(Part::stored)) {
                succeed();
            } else {
                fail();
            }
        } finally {
            in.stripped().release();
        }
    }

    private void succeed() {
        List<String> ids = new ArrayList<>();
        for (List<Slot> copies : slots) {
            for (Slot s : copies) {
                if (s.position() < s.part().ids.length) {
                    ids.add(s.part().ids[s.position()]);
                }
            }
        }
        int code = parts.stream().mapToInt(p -> p.storedCode).filter(c -> c != ResponseCode.SUCCESS).findFirst()
            .orElse(ResponseCode.SUCCESS);
        Map<String, String> ext = new LinkedHashMap<>();
        ext.put("msgId", String.join(",", ids));
        ext.put("queueId", Integer.toString(in.send().queueId()));
        // the messages live in other topics' queues: no offset of the fan-out queue describes them
        ext.put("queueOffset", "-1");
        meters.request("success", parts.size());
        answer(RemotingHeader.response(opaque, code, null).withExtFields(ext));
    }

    private void fail() {
        Map<String, List<Part>> byTopic = new LinkedHashMap<>();
        parts.forEach(p -> byTopic.computeIfAbsent(p.topic, t -> new ArrayList<>()).add(p));
        List<String> failed = new ArrayList<>();
        List<String> stored = new ArrayList<>();
        byTopic.forEach((topic, topicParts) -> {
            List<Part> bad = topicParts.stream().filter(p -> !p.stored()).toList();
            if (bad.isEmpty()) {
                stored.add(topic);
            } else {
                boolean partly = bad.size() < topicParts.size();
                failed.add(topic + (partly ? " (partly stored)" : "") + " [" + String.join("; ",
                    bad.stream().map(p -> p.failure + " after " + p.attempts + " attempt" + (p.attempts == 1 ? "" : "s"))
                        .toList()) + "]");
            }
        });
        boolean anyStored = parts.stream().anyMatch(Part::stored);
        int code = parts.stream().filter(p -> !p.stored()).mapToInt(p -> p.failedCode).findFirst()
            .orElse(RemotingSysResponseCode.SYSTEM_ERROR);
        String remark = "fan-out failed: not stored in " + String.join(", ", failed) + "; stored in "
            + (stored.isEmpty() ? "none" : String.join(", ", stored))
            + (anyStored ? " (a retry stores those again: deduplicate by the messages' unique keys)" : "");
        meters.request("failed", parts.size());
        if (anyStored) {
            meters.partialFailure();
        }
        answer(RemotingHeader.response(opaque, code, remark));
    }

    private void refuse() {
        in.stripped().release();
        meters.request("refused", 0);
        answer(RemotingHeader.response(opaque, problemCode, "fan-out refused, nothing was sent: "
            + String.join("; ", problems)));
    }

    private void answer(RemotingHeader header) {
        if (!oneway) {
            exchange.answer(Frames.encode(exchange.alloc(), header, encoding, null));
        }
    }
}
