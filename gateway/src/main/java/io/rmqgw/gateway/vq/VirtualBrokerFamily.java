package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestHandler;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * One family of the virtual broker's requests, registered for its codes in the virtual broker's table
 * ({@link VirtualBrokerHandlers}): every request is answered by the gateway, never forwarded as it is. The frame
 * is decoded and released on the client's event loop; served groups' work hops onto the virtual queues' loop,
 * other groups' requests go to {@link Bypass}, and the answer goes through the exchange.
 */
abstract class VirtualBrokerFamily implements RequestHandler {

    final VirtualQueues queues;
    final Bypass bypass;
    private final String name;

    VirtualBrokerFamily(VirtualQueues queues, Bypass bypass, String name) {
        this.queues = queues;
        this.bypass = bypass;
        this.name = name;
    }

    @Override
    public final ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        VirtualBrokerRequest r;
        try {
            JsonNode json = readBody(exchange, request);
            r = new VirtualBrokerRequest(HeaderCodec.decodeHeader(request), exchange.answerEncoding(), json);
        } finally {
            request.release();
        }
        serve(exchange, r);
        return null;
    }

    /** What the family reads of the body before the frame is released ({@code request} stays the caller's). */
    JsonNode readBody(Exchange exchange, RemotingFrame request) {
        return null;
    }

    abstract void serve(Exchange exchange, VirtualBrokerRequest r);

    /** The consumer of {@code group} on {@code topic}; answers the refusal and returns null when there is none. */
    final VirtualConsumer consumerOr(Exchange exchange, VirtualBrokerRequest r, String group, String topic) {
        VirtualConsumer c = queues.consumer(group, topic);
        if (c == null) {
            r.error(exchange, ResponseCode.NO_PERMISSION, notServed(group, topic));
        }
        return c;
    }

    final String notServed(String group, String topic) {
        if (!queues.servesTopic(topic)) {
            return "group " + group + ": topic " + topic + " is not on the gateway's virtual queues; consume it from "
                + "the brokers its route names";
        }
        return "group " + group + " is served on virtual queues for another topic, so the brokers do not know it as a "
            + "consumer of " + topic + ": list it for " + topic + " too, or consume " + topic + " through another gateway";
    }

    @Override
    public String toString() {
        return "virtual-queue broker: " + name;
    }
}
