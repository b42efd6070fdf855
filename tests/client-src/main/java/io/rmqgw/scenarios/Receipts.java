package io.rmqgw.scenarios;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * What a consumer received: one "received" line per delivery, distinct messages by client message
 * id (UNIQ_KEY), duplicates, and the queue offsets of each queue in arrival order.
 */
final class Receipts {

    private final Ctx ctx;
    private final Set<String> distinct = new HashSet<>();
    private final Set<String> keys = new HashSet<>();
    private final Map<String, List<Long>> offsetsByQueue = new TreeMap<>();
    private int deliveries;
    private int duplicates;

    Receipts(Ctx ctx) {
        this.ctx = ctx;
    }

    /** Records a delivery and writes its line; returns whether it is new (not a redelivery or duplicate). */
    synchronized boolean add(MessageExt m, MessageQueue queue, String action) {
        deliveries++;
        String msgId = m.getMsgId();
        boolean fresh = distinct.add(msgId);
        if (!fresh) {
            duplicates++;
        }
        if (m.getKeys() != null) {
            keys.add(m.getKeys());
        }
        String broker = queue != null ? queue.getBrokerName() : m.getBrokerName();
        int queueId = queue != null ? queue.getQueueId() : m.getQueueId();
        String queueName = broker + ":" + queueId;
        // Retried messages come back on %RETRY%group queues: keep per-queue order per real topic.
        String topicQueue = m.getTopic() + "@" + queueName;
        offsetsByQueue.computeIfAbsent(topicQueue, k -> new ArrayList<>()).add(m.getQueueOffset());
        Json.Obj line = ctx.line("received")
            .put("key", m.getKeys())
            .put("msgId", msgId)
            .put("offsetMsgId", offsetMsgId(m))
            .put("topic", m.getTopic())
            .put("broker", broker)
            .put("queueId", queueId)
            .put("queueOffset", m.getQueueOffset())
            .put("reconsumeTimes", m.getReconsumeTimes())
            .put("storeHost", host(m.getStoreHost()))
            .put("bornHost", host(m.getBornHost()))
            .put("body", bodyPrefix(m.getBody()))
            .put("bodyLength", m.getBody() == null ? -1 : m.getBody().length)
            .put("bodyIntact", m.getBody() == null ? null : Ctx.randomBodyIntact(m.getKeys(), m.getBody()))
            .put("duplicate", !fresh)
            .put("thread", Thread.currentThread().getName());
        if (action != null) {
            line.put("action", action);
        }
        ctx.out.emit(line);
        return fresh;
    }

    synchronized int distinct() {
        return distinct.size();
    }

    synchronized int deliveries() {
        return deliveries;
    }

    synchronized void summarize(Json.Obj summary) {
        summary.put("received", distinct.size())
            .put("deliveries", deliveries)
            .put("duplicates", duplicates)
            .put("distinctKeys", keys.size());
        Map<String, Object> perQueue = new LinkedHashMap<>();
        boolean allInOrder = true;
        for (Map.Entry<String, List<Long>> e : offsetsByQueue.entrySet()) {
            boolean inOrder = increasing(e.getValue());
            allInOrder &= inOrder;
            perQueue.put(e.getKey(), Json.obj().put("count", e.getValue().size()).put("inOrder", inOrder)
                .put("offsets", e.getValue()));
        }
        summary.put("perQueue", perQueue).put("queuesInOrder", allInOrder);
    }

    static boolean increasing(List<Long> values) {
        for (int i = 1; i < values.size(); i++) {
            if (values.get(i) <= values.get(i - 1)) {
                return false;
            }
        }
        return true;
    }

    static String offsetMsgId(MessageExt m) {
        // Consumers get MessageClientExt, whose getMsgId() is the client id (UNIQ_KEY).
        return m instanceof MessageClientExt ? ((MessageClientExt) m).getOffsetMsgId() : null;
    }

    static String host(SocketAddress address) {
        if (address instanceof InetSocketAddress) {
            InetSocketAddress a = (InetSocketAddress) address;
            String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
            return host + ":" + a.getPort();
        }
        return address == null ? null : address.toString();
    }

    static String bodyPrefix(byte[] body) {
        if (body == null) {
            return null;
        }
        String s = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8);
        int random = s.indexOf("|R");
        if (random >= 0 && s.indexOf('|', random + 2) > 0) {
            return s.substring(0, s.indexOf('|', random + 2) + 1);
        }
        int dots = s.indexOf("|.");
        return dots >= 0 ? s.substring(0, dots + 1) : (s.length() > 80 ? s.substring(0, 80) : s);
    }
}
