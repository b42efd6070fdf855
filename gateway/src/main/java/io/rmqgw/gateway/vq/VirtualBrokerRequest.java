package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.core.Exchange;
import java.io.IOException;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * A request to the virtual broker, decoded once ({@link VirtualBrokerFamily}): its header, the encoding of its
 * answer, and the JSON body of HEART_BEAT and (UN)LOCK_BATCH_MQ (else null). The frame itself is released by then,
 * so what answers later holds no buffer.
 */
record VirtualBrokerRequest(RemotingHeader header, SerializeType encoding, JsonNode json) {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** RemotingCommand's oneway flag bit. */
    private static final int ONEWAY_FLAG = 1 << 1;

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

    /** A JSON body, or null when it is none ({@code body} not owned, not moved). */
    static JsonNode readJson(ByteBuf body) {
        try {
            return JSON.readTree(new ByteBufInputStream(body.duplicate()));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Answers SUCCESS with {@code ext} (none for a oneway request). */
    void success(Exchange exchange, Map<String, String> ext) {
        if (!oneway()) {
            exchange.answer(Frames.encode(exchange.alloc(),
                RemotingHeader.response(opaque(), ResponseCode.SUCCESS, null).withExtFields(ext), encoding, null));
        }
    }

    /** Answers {@code code} with {@code remark} (none for a oneway request). */
    void error(Exchange exchange, int code, String remark) {
        if (!oneway()) {
            exchange.answer(Frames.errorResponse(exchange.alloc(), opaque(), encoding, code, remark));
        }
    }
}
