package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.routing.ClusterView;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LOCK_BATCH_MQ and UNLOCK_BATCH_MQ of an orderly bypass group: its virtual queues mapped to real ones, one
 * request per broker with the client's own fields (its client id holds the lock), and the queues the brokers
 * locked mapped back. A virtual queue with no real queue behind it counts as locked: it never holds a message.
 */
final class BypassLocks {

    private static final Logger log = LoggerFactory.getLogger(BypassLocks.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Bypass bypass;

    BypassLocks(Bypass bypass) {
        this.bypass = bypass;
    }

    void locks(Exchange exchange, VirtualBrokerRequest r, ObjectNode body) {
        bypass.counted(r);
        lockWithRoutes(exchange, r, body);
    }

    /** {@link #locks} once the gateway knows the route of every topic named (asking the name servers first). */
    private void lockWithRoutes(Exchange exchange, VirtualBrokerRequest r, ObjectNode body) {
        ClusterView cluster = bypass.queues().context().cluster();
        for (JsonNode mq : body.path("mqSet")) {
            String topic = mq.path("topic").asText(null);
            if (topic != null && !cluster.knowsTopic(topic)) {
                bypass.withRoute(exchange, r, topic, known -> lockWithRoutes(exchange, r, body));
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
            BypassMap map = byTopic.computeIfAbsent(topic, bypass::mapOf);
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
            bypass.relay().sendQuietly(exchange, r, broker, r.ext(), Unpooled.wrappedBuffer(bytes), answer -> {
                try {
                    if (answer != null && answer.code() == ResponseCode.SUCCESS && answer.bodyLength() > 0) {
                        JsonNode ok = VirtualBrokerRequest.readJson(answer.bodySlice());
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

    /** The client's answer: the virtual queues locked (LOCK_BATCH_MQ; an unlock's answer has no body). */
    private static void answerLocks(Exchange exchange, VirtualBrokerRequest r, ArrayNode locked) {
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
}
