package io.rmqgw.gateway.vq;

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
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestFilter;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * HEART_BEAT and GET_CONSUMER_LIST_BY_GROUP on a real broker's ports while the gateway stands for some
 * consumer groups ({@link ServedGroups}, virtual queues): a heartbeat reaches the broker without those
 * groups, so the broker counts only gateways as their members, and a client asking the broker for such a
 * group's members is answered by the gateway with the list its rebalance must see. The virtual-queue feature's
 * filter on the broker role; everything else goes on unchanged.
 */
final class ServedGroupsFilter implements RequestFilter {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ServedGroups groups;

    ServedGroupsFilter(ServedGroups groups) {
        this.groups = groups;
    }

    @Override
    public RemotingFrame filter(Exchange exchange, RemotingFrame request) {
        if (!groups.any()) {
            return request;
        }
        if (request.code() == RequestCode.HEART_BEAT) {
            return withoutServedGroups(exchange, request, groups);
        }
        if (request.code() == RequestCode.GET_CONSUMER_LIST_BY_GROUP && answerMembers(exchange, request, groups)) {
            return null;
        }
        return request;
    }

    /** The heartbeat without the served groups' consumer data (the same frame when it names none). Takes ownership. */
    private static RemotingFrame withoutServedGroups(Exchange exchange, RemotingFrame request, ServedGroups groups) {
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
        RemotingFrame filtered = request.replace(Frames.withBody(exchange.alloc(), request,
            Unpooled.wrappedBuffer(bytes)));
        request.release();
        return filtered;
    }

    /** Answers GET_CONSUMER_LIST_BY_GROUP for a served group; false (nothing taken) for any other. */
    private static boolean answerMembers(Exchange exchange, RemotingFrame request, ServedGroups groups) {
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
        SerializeType encoding = exchange.answerEncoding();
        boolean oneway = request.isOneway();
        request.release();
        if (!oneway) {
            exchange.answer(membersAnswer(exchange, opaque, encoding, groups, group));
        }
        return true;
    }

    /** A GET_CONSUMER_LIST_BY_GROUP answer listing the group's members as the gateway sees them. */
    static ByteBuf membersAnswer(Exchange exchange, int opaque, SerializeType encoding, ServedGroups groups,
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
        return Frames.encode(exchange.alloc(), RemotingHeader.response(opaque, ResponseCode.SUCCESS, null),
            encoding, Unpooled.wrappedBuffer(bytes));
    }

    @Override
    public String toString() {
        return "served groups kept from the brokers";
    }
}
