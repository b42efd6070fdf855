package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.channel.Channel;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.relay.Exchange;
import io.rmqgw.gateway.relay.RequestHandler;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The requests a consumer sends the virtual-queue broker ({@link VirtualQueues#BROKER_NAME}), all answered
 * by the gateway: registrations and the group's member list, pulls (PULL_MESSAGE, and a 5.x lite pull consumer's
 * LITE_PULL_MESSAGE, which has the same header and answer) that lease messages on virtual queues,
 * commits that acknowledge them, the offsets of virtual queues, and send-backs that hand a message back for
 * redelivery. Decoded on the client's event loop, carried out on the virtual queues' own loop, answered with
 * {@link RelaySession#writeToClient}. Groups not served on the topic (any other group, orderly and broadcasting
 * ones too) go to {@link Bypass}: their virtual queues are the real ones.
 */
final class VirtualBrokerHandler implements RequestHandler {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final VirtualQueues queues;
    private final Bypass bypass;

    VirtualBrokerHandler(VirtualQueues queues, Bypass bypass) {
        this.queues = queues;
        this.bypass = bypass;
    }

    /** A request's header, decoded once; {@code json} is the body of HEART_BEAT and (UN)LOCK_BATCH_MQ, else null. */
    record Request(RemotingHeader header, SerializeType encoding, JsonNode json) {
        int code() {
            return header.code();
        }

        int opaque() {
            return header.opaque();
        }

        boolean oneway() {
            return (header.flag() & ONEWAY_FLAG) != 0;
        }

        Map<String, String> ext() {
            return header.extFields();
        }

        String field(String name) {
            return ext() == null ? null : ext().get(name);
        }

        long longField(String name, long fallback) {
            String v = field(name);
            try {
                return v == null ? fallback : Long.parseLong(v.trim());
            } catch (NumberFormatException e) {
                return fallback;
            }
        }

        int intField(String name, int fallback) {
            long v = longField(name, fallback);
            return v < Integer.MIN_VALUE || v > Integer.MAX_VALUE ? fallback : (int) v;
        }
    }

    /** RemotingCommand's oneway flag bit. */
    private static final int ONEWAY_FLAG = 1 << 1;

    @Override
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        Request r;
        try {
            JsonNode json = null;
            if (request.code() == RequestCode.HEART_BEAT) {
                queues.clients().heartbeat(exchange.client().channel(), VirtualQueues.REGISTRY_KEY, request.bodySlice());
                json = readJson(request.bodySlice());
            } else if (request.code() == RequestCode.LOCK_BATCH_MQ || request.code() == RequestCode.UNLOCK_BATCH_MQ) {
                json = readJson(request.bodySlice());
            }
            r = new Request(HeaderCodec.decodeHeader(request), exchange.answerEncoding(), json);
        } finally {
            request.release();
        }
        String group = r.field("consumerGroup");
        String topic = r.field("topic");
        switch (r.code()) {
            case RequestCode.HEART_BEAT -> registered(exchange, r);
            case RequestCode.UNREGISTER_CLIENT -> unregistered(exchange, r);
            case RequestCode.GET_CONSUMER_LIST_BY_GROUP -> {
                if (group != null && !queues.isServed(group)) {
                    bypass.members(exchange, r); // its members are the real clients, registered on the brokers
                } else if (!r.oneway()) {
                    exchange.answer(ServedGroupsFilter.membersAnswer(exchange, r.opaque(), r.encoding(), queues,
                        group));
                }
            }
            // a 5.x lite pull consumer's LITE_PULL_MESSAGE: the same header, leases and answer as PULL_MESSAGE
            case RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE -> {
                if (bypass.applies(group, topic)) {
                    bypass.pull(exchange, r);
                } else {
                    pull(exchange, r);
                }
            }
            case RequestCode.UPDATE_CONSUMER_OFFSET -> {
                VirtualConsumer c = bypass.applies(group, topic) ? null : consumerOr(exchange, r, group, topic);
                if (bypass.applies(group, topic)) {
                    bypass.offsets(exchange, r);
                } else if (c != null) {
                    Channel channel = exchange.client().channel();
                    int queue = r.intField("queueId", -1);
                    long offset = r.longField("commitOffset", -1);
                    queues.loop().execute(() -> c.commit(channel, queue, offset));
                    success(exchange, r, null);
                }
            }
            case RequestCode.QUERY_CONSUMER_OFFSET -> {
                VirtualConsumer c = queues.consumer(group, topic);
                if (c == null && bypass.applies(group, topic)) {
                    bypass.offsets(exchange, r);
                } else if (c == null) {
                    error(exchange, r, ResponseCode.QUERY_NOT_FOUND, notServed(group, topic));
                } else {
                    int queue = r.intField("queueId", -1);
                    Channel channel = exchange.client().channel();
                    queues.loop().execute(() -> success(exchange, r,
                        Map.of("offset", Long.toString(c.startOver(channel, queue)))));
                }
            }
            // these name no group: the connection's registrations tell whether a bypass group asks
            case RequestCode.GET_MAX_OFFSET, RequestCode.GET_MIN_OFFSET, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
                RequestCode.GET_EARLIEST_MSG_STORETIME -> {
                if (bypass.connectionBypasses(exchange.client().channel(), topic)) {
                    bypass.offsets(exchange, r);
                } else if (r.code() == RequestCode.GET_MAX_OFFSET) {
                    maxOffset(exchange, r);
                } else if (r.code() == RequestCode.GET_MIN_OFFSET) {
                    success(exchange, r, Map.of("offset", "0"));
                } else {
                    error(exchange, r, RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED, "request code " + r.code()
                        + " is not served on virtual queues (served groups start where their virtual queue's head is)");
                }
            }
            case RequestCode.CONSUMER_SEND_MSG_BACK -> {
                if (queues.consumer(r.field("group"), r.field("originTopic")) == null
                    && bypass.applies(r.field("group"), r.field("originTopic"))) {
                    bypass.sendBack(exchange, r);
                } else {
                    sendBack(exchange, r);
                }
            }
            case RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ -> locks(exchange, r);
            default -> error(exchange, r, RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                "request code " + r.code() + " is not supported by the gateway's virtual-queue broker");
        }
        return null;
    }

    /**
     * LOCK_BATCH_MQ / UNLOCK_BATCH_MQ: an orderly group that is not served on any of the queues' topics locks the
     * real queues behind them; the served group cannot consume in order (its messages go to many consumers).
     */
    private void locks(Exchange exchange, Request r) {
        if (r.json() instanceof ObjectNode body) {
            String group = body.path("consumerGroup").asText(null);
            boolean bypassed = body.path("mqSet").size() > 0;
            for (JsonNode mq : body.path("mqSet")) {
                bypassed &= bypass.applies(group, mq.path("topic").asText(null));
            }
            if (bypassed) {
                bypass.locks(exchange, r, body);
                return;
            }
        }
        error(exchange, r, RemotingSysResponseCode.SYSTEM_ERROR, "orderly consumption is not served on virtual queues "
            + "for their group: take the group out of virtual-queues to consume it in order");
    }

    static JsonNode readJson(ByteBuf body) {
        try {
            return JSON.readTree(new ByteBufInputStream(body.duplicate()));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private void registered(Exchange exchange, Request r) {
        Set<String> joined = new LinkedHashSet<>();
        JsonNode heartbeat = r.json();
        if (heartbeat != null) {
            for (JsonNode cd : heartbeat.path("consumerDataSet")) {
                String group = cd.path("groupName").asText(null);
                for (JsonNode sub : cd.path("subscriptionDataSet")) {
                    bypass.registered(exchange.client().channel(), group, sub.path("topic").asText(null));
                }
                for (VirtualConsumer c : queues.consumers()) {
                    if (c.config().group().equals(group)) {
                        if (!"CLUSTERING".equals(cd.path("messageModel").asText("CLUSTERING"))) {
                            continue; // broadcasting members read every queue themselves: nothing to lease
                        }
                        Subscription s = Subscription.fromConsumerData(cd, c.config().topic());
                        Subscription retry = Subscription.fromConsumerData(cd, "%RETRY%" + group);
                        StartPoint from = StartPoint.of(cd.path("consumeFromWhere").asText(null));
                        joined.add(group);
                        queues.loop().execute(() -> c.member(s, retry, from));
                    }
                }
            }
        }
        if (!joined.isEmpty()) {
            queues.watchMembers(exchange.client().channel(), joined);
        }
        success(exchange, r, null);
    }

    private void unregistered(Exchange exchange, Request r) {
        String group = r.field("consumerGroup");
        queues.clients().unregister(exchange.client().channel(), r.field("clientID"), r.field("producerGroup"), group);
        if (group != null && queues.isServed(group)) {
            long holder = VirtualConsumer.holderOf(exchange.client().channel());
            for (VirtualConsumer c : queues.consumers()) {
                if (c.config().group().equals(group)) {
                    queues.loop().execute(() -> c.holderGone(holder));
                }
            }
            queues.membersChanged(group);
        }
        success(exchange, r, null);
    }

    private void pull(Exchange exchange, Request r) {
        VirtualConsumer c = consumerOr(exchange, r, r.field("consumerGroup"), r.field("topic"));
        if (c == null) {
            return;
        }
        int queue = r.intField("queueId", -1);
        long offset = r.longField("queueOffset", 0);
        int max = r.intField("maxMsgNums", 32);
        int sysFlag = r.intField("sysFlag", 0);
        long commitOffset = r.longField("commitOffset", -1);
        long suspend = r.longField("suspendTimeoutMillis", 0);
        queues.loop().execute(() -> c.pull(exchange, r.opaque(), r.encoding(), queue, offset, max, sysFlag, commitOffset,
            suspend));
    }

    private void maxOffset(Exchange exchange, Request r) {
        String topic = r.field("topic");
        int queue = r.intField("queueId", -1);
        queues.loop().execute(() -> {
            long max = 0;
            for (VirtualConsumer c : queues.consumers()) {
                if (c.config().topic().equals(topic)) {
                    max = Math.max(max, c.head(queue));
                }
            }
            success(exchange, r, Map.of("offset", Long.toString(max)));
        });
    }

    private void sendBack(Exchange exchange, Request r) {
        String group = r.field("group");
        VirtualConsumer c = queues.consumer(group, r.field("originTopic"));
        if (c == null) {
            c = queues.consumers().stream().filter(x -> x.config().group().equals(group)).findFirst().orElse(null);
        }
        if (c == null) {
            error(exchange, r, ResponseCode.NO_PERMISSION, notServed(group, r.field("originTopic")));
            return;
        }
        VirtualConsumer consumer = c;
        Channel channel = exchange.client().channel();
        Map<String, String> fields = r.ext() == null ? Map.of() : r.ext();
        queues.loop().execute(() -> consumer.sendBack(channel, fields, (code, remark) -> {
            if (code == ResponseCode.SUCCESS) {
                success(exchange, r, null);
            } else {
                error(exchange, r, code, remark);
            }
        }));
    }

    /** The consumer of {@code group} on {@code topic}; answers the refusal and returns null when there is none. */
    private VirtualConsumer consumerOr(Exchange exchange, Request r, String group, String topic) {
        VirtualConsumer c = queues.consumer(group, topic);
        if (c == null) {
            error(exchange, r, ResponseCode.NO_PERMISSION, notServed(group, topic));
        }
        return c;
    }

    private String notServed(String group, String topic) {
        if (!queues.servesTopic(topic)) {
            return "group " + group + ": topic " + topic + " is not on the gateway's virtual queues; consume it from "
                + "the brokers its route names";
        }
        return "group " + group + " is served on virtual queues for another topic, so the brokers do not know it as a "
            + "consumer of " + topic + ": list it for " + topic + " too, or consume " + topic + " through another gateway";
    }

    static void success(Exchange exchange, Request r, Map<String, String> ext) {
        if (!r.oneway()) {
            exchange.answer(Frames.encode(exchange.alloc(),
                RemotingHeader.response(r.opaque(), ResponseCode.SUCCESS, null).withExtFields(ext), r.encoding(), null));
        }
    }

    static void error(Exchange exchange, Request r, int code, String remark) {
        if (!r.oneway()) {
            exchange.answer(Frames.errorResponse(exchange.alloc(), r.opaque(), r.encoding(), code, remark));
        }
    }

    @Override
    public String toString() {
        return "virtual-queue broker";
    }
}
