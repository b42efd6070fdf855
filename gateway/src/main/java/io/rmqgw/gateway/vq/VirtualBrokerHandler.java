package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.channel.Channel;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.broker.ServedGroupFilter;
import io.rmqgw.gateway.relay.RelaySession;
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
 * by the gateway: registrations and the group's member list, pulls that lease messages on virtual queues,
 * commits that acknowledge them, the offsets of virtual queues, and send-backs that hand a message back for
 * redelivery. Decoded on the client's event loop, carried out on the virtual queues' own loop, answered with
 * {@link RelaySession#writeToClient}.
 */
final class VirtualBrokerHandler implements RequestHandler {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final VirtualQueues queues;

    VirtualBrokerHandler(VirtualQueues queues) {
        this.queues = queues;
    }

    /** A request's header fields, decoded once; {@code body} only for HEART_BEAT. */
    private record Request(int code, int opaque, boolean oneway, SerializeType encoding, Map<String, String> ext,
                           JsonNode heartbeat) {
        String field(String name) {
            return ext == null ? null : ext.get(name);
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

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        Request r;
        try {
            JsonNode heartbeat = null;
            if (request.code() == RequestCode.HEART_BEAT) {
                queues.clients().heartbeat(session.client(), VirtualQueues.REGISTRY_KEY, request.bodySlice());
                heartbeat = readJson(request.bodySlice());
            }
            r = new Request(request.code(), request.opaque(), request.isOneway(),
                session.answerEncoding(request.encoding()), HeaderCodec.decodeHeader(request).extFields(), heartbeat);
        } finally {
            request.release();
        }
        switch (r.code()) {
            case RequestCode.HEART_BEAT -> registered(session, r);
            case RequestCode.UNREGISTER_CLIENT -> unregistered(session, r);
            case RequestCode.GET_CONSUMER_LIST_BY_GROUP -> {
                if (!r.oneway()) {
                    session.answerLocally(ServedGroupFilter.membersAnswer(session, r.opaque(), r.encoding(), queues,
                        r.field("consumerGroup")));
                }
            }
            case RequestCode.PULL_MESSAGE -> pull(session, r);
            case RequestCode.UPDATE_CONSUMER_OFFSET -> {
                VirtualConsumer c = consumerOr(session, r, r.field("consumerGroup"), r.field("topic"));
                if (c != null) {
                    Channel channel = session.client();
                    int queue = r.intField("queueId", -1);
                    long offset = r.longField("commitOffset", -1);
                    queues.loop().execute(() -> c.commit(channel, queue, offset));
                    success(session, r, null);
                }
            }
            case RequestCode.QUERY_CONSUMER_OFFSET -> {
                VirtualConsumer c = queues.consumer(r.field("consumerGroup"), r.field("topic"));
                if (c == null) {
                    error(session, r, ResponseCode.QUERY_NOT_FOUND, notServed(r.field("consumerGroup"), r.field("topic")));
                } else {
                    int queue = r.intField("queueId", -1);
                    Channel channel = session.client();
                    queues.loop().execute(() -> success(session, r,
                        Map.of("offset", Long.toString(c.startOver(channel, queue)))));
                }
            }
            case RequestCode.GET_MAX_OFFSET -> maxOffset(session, r);
            case RequestCode.GET_MIN_OFFSET -> success(session, r, Map.of("offset", "0"));
            case RequestCode.CONSUMER_SEND_MSG_BACK -> sendBack(session, r);
            case RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ -> error(session, r,
                RemotingSysResponseCode.SYSTEM_ERROR, "orderly consumption is not served on virtual queues: take the "
                    + "group out of virtual-queues to consume it in order");
            default -> error(session, r, RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                "request code " + r.code() + " is not supported by the gateway's virtual-queue broker");
        }
        return null;
    }

    private static JsonNode readJson(ByteBuf body) {
        try {
            return JSON.readTree(new ByteBufInputStream(body.duplicate()));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private void registered(RelaySession session, Request r) {
        Set<String> joined = new LinkedHashSet<>();
        JsonNode heartbeat = r.heartbeat();
        if (heartbeat != null) {
            for (JsonNode cd : heartbeat.path("consumerDataSet")) {
                String group = cd.path("groupName").asText(null);
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
            queues.watchMembers(session.client(), joined);
        }
        success(session, r, null);
    }

    private void unregistered(RelaySession session, Request r) {
        String group = r.field("consumerGroup");
        queues.clients().unregister(session.client(), r.field("clientID"), r.field("producerGroup"), group);
        if (group != null && queues.isServed(group)) {
            long holder = VirtualConsumer.holderOf(session.client());
            for (VirtualConsumer c : queues.consumers()) {
                if (c.config().group().equals(group)) {
                    queues.loop().execute(() -> c.holderGone(holder));
                }
            }
            queues.membersChanged(group);
        }
        success(session, r, null);
    }

    private void pull(RelaySession session, Request r) {
        VirtualConsumer c = consumerOr(session, r, r.field("consumerGroup"), r.field("topic"));
        if (c == null) {
            return;
        }
        int queue = r.intField("queueId", -1);
        long offset = r.longField("queueOffset", 0);
        int max = r.intField("maxMsgNums", 32);
        int sysFlag = r.intField("sysFlag", 0);
        long commitOffset = r.longField("commitOffset", -1);
        long suspend = r.longField("suspendTimeoutMillis", 0);
        queues.loop().execute(() -> c.pull(session, r.opaque(), r.encoding(), queue, offset, max, sysFlag, commitOffset,
            suspend));
    }

    private void maxOffset(RelaySession session, Request r) {
        String topic = r.field("topic");
        int queue = r.intField("queueId", -1);
        queues.loop().execute(() -> {
            long max = 0;
            for (VirtualConsumer c : queues.consumers()) {
                if (c.config().topic().equals(topic)) {
                    max = Math.max(max, c.head(queue));
                }
            }
            success(session, r, Map.of("offset", Long.toString(max)));
        });
    }

    private void sendBack(RelaySession session, Request r) {
        String group = r.field("group");
        VirtualConsumer c = queues.consumer(group, r.field("originTopic"));
        if (c == null) {
            c = queues.consumers().stream().filter(x -> x.config().group().equals(group)).findFirst().orElse(null);
        }
        if (c == null) {
            error(session, r, ResponseCode.NO_PERMISSION, notServed(group, r.field("originTopic")));
            return;
        }
        VirtualConsumer consumer = c;
        Channel channel = session.client();
        Map<String, String> fields = r.ext() == null ? Map.of() : r.ext();
        queues.loop().execute(() -> consumer.sendBack(channel, fields, (code, remark) -> {
            if (code == ResponseCode.SUCCESS) {
                success(session, r, null);
            } else {
                error(session, r, code, remark);
            }
        }));
    }

    /** The consumer of {@code group} on {@code topic}; answers the refusal and returns null when there is none. */
    private VirtualConsumer consumerOr(RelaySession session, Request r, String group, String topic) {
        VirtualConsumer c = queues.consumer(group, topic);
        if (c == null) {
            error(session, r, ResponseCode.NO_PERMISSION, notServed(group, topic));
        }
        return c;
    }

    private static String notServed(String group, String topic) {
        return "the gateway serves topic " + topic + " on virtual queues for the groups in virtual-queues only; "
            + "group " + group + " is not one of them (list it, or consume the topic through another gateway)";
    }

    private static void success(RelaySession session, Request r, Map<String, String> ext) {
        if (!r.oneway()) {
            session.writeToClient(Frames.encode(session.client().alloc(),
                RemotingHeader.response(r.opaque(), ResponseCode.SUCCESS, null).withExtFields(ext), r.encoding(), null));
        }
    }

    private static void error(RelaySession session, Request r, int code, String remark) {
        if (!r.oneway()) {
            session.writeToClient(Frames.errorResponse(session.client().alloc(), r.opaque(), r.encoding(), code, remark));
        }
    }

    @Override
    public String toString() {
        return "virtual-queue broker";
    }
}
