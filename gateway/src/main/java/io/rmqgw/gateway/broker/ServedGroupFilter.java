package io.rmqgw.gateway.broker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.clients.ServedGroups;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * HEART_BEAT and GET_CONSUMER_LIST_BY_GROUP on a real broker's ports while the gateway stands for some
 * consumer groups ({@link ServedGroups}, virtual queues): a heartbeat reaches the broker without those
 * groups, so the broker counts only gateways as their members, and a client asking the broker for such a
 * group's members is answered by the gateway with the list its rebalance must see. Everything else goes to
 * the role's own handlers.
 */
public final class ServedGroupFilter implements RequestHandler {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Supplier<ServedGroups> served;
    private final RequestHandler heartbeats;
    private final RequestHandler consumerLists;

    /**
     * @param served        the groups served now (read per request: a reload changes them)
     * @param heartbeats    what handles HEART_BEAT and UNREGISTER_CLIENT otherwise
     * @param consumerLists what handles GET_CONSUMER_LIST_BY_GROUP otherwise
     */
    public ServedGroupFilter(Supplier<ServedGroups> served, RequestHandler heartbeats, RequestHandler consumerLists) {
        this.served = served;
        this.heartbeats = heartbeats;
        this.consumerLists = consumerLists;
    }

    private RequestHandler delegate(int code) {
        return code == RequestCode.GET_CONSUMER_LIST_BY_GROUP ? consumerLists : heartbeats;
    }

    @Override
    public Object requestContext(RemotingFrame request) {
        return delegate(request.code()).requestContext(request);
    }

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        ServedGroups groups = served.get();
        if (groups != ServedGroups.NONE) {
            if (request.code() == RequestCode.HEART_BEAT) {
                return heartbeats.toUpstream(session, withoutServedGroups(session, request, groups));
            }
            if (request.code() == RequestCode.GET_CONSUMER_LIST_BY_GROUP && answerMembers(session, request, groups)) {
                return null;
            }
        }
        return delegate(request.code()).toUpstream(session, request);
    }

    /** The heartbeat without the served groups' consumer data (the same frame when it names none). Takes ownership. */
    private static RemotingFrame withoutServedGroups(RelaySession session, RemotingFrame request, ServedGroups groups) {
        JsonNode root;
        try {
            root = JSON.readTree(new ByteBufInputStream(request.bodySlice()));
        } catch (IOException | RuntimeException e) {
            return request; // the broker answers what it cannot read
        }
        if (!(root instanceof ObjectNode body) || !(body.get("consumerDataSet") instanceof ArrayNode consumers)) {
            return request;
        }
        boolean removed = false;
        for (Iterator<JsonNode> it = consumers.elements(); it.hasNext(); ) {
            if (groups.isServed(it.next().path("groupName").asText(null))) {
                it.remove();
                removed = true;
            }
        }
        if (!removed) {
            return request;
        }
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            return request;
        }
        RemotingFrame filtered = request.replace(Frames.withBody(session.client().alloc(), request,
            Unpooled.wrappedBuffer(bytes)));
        request.release();
        return filtered;
    }

    /** Answers GET_CONSUMER_LIST_BY_GROUP for a served group; false (nothing taken) for any other. */
    private static boolean answerMembers(RelaySession session, RemotingFrame request, ServedGroups groups) {
        Map<String, String> ext;
        try {
            ext = HeaderCodec.decodeHeader(request).extFields();
        } catch (RuntimeException e) {
            return false; // the role's handler refuses it with its reason
        }
        String group = ext == null ? null : ext.get("consumerGroup");
        if (!groups.isServed(group)) {
            return false;
        }
        int opaque = request.opaque();
        SerializeType encoding = session.answerEncoding(request.encoding());
        boolean oneway = request.isOneway();
        request.release();
        if (!oneway) {
            session.answerLocally(membersAnswer(session, opaque, encoding, groups, group));
        }
        return true;
    }

    /** A GET_CONSUMER_LIST_BY_GROUP answer listing the group's members as the gateway sees them. */
    public static ByteBuf membersAnswer(RelaySession session, int opaque, SerializeType encoding, ServedGroups groups,
                                        String group) {
        ObjectNode body = JSON.createObjectNode();
        ArrayNode ids = body.putArray("consumerIdList");
        groups.memberIds(group).forEach(ids::add);
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return Frames.encode(session.client().alloc(), RemotingHeader.response(opaque, ResponseCode.SUCCESS, null),
            encoding, Unpooled.wrappedBuffer(bytes));
    }

    @Override
    public ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response,
                              SerializeType requestEncoding) {
        return delegate(requestCode).onResponse(session, requestCode, context, response, requestEncoding);
    }

    @Override
    public boolean longPolling() {
        return false;
    }

    @Override
    public String toString() {
        return "served groups kept from the brokers, else " + heartbeats + " / " + consumerLists;
    }
}
