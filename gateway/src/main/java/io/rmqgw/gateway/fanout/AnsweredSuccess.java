package io.rmqgw.gateway.fanout;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestHandler;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * HEART_BEAT and UNREGISTER_CLIENT on the fan-out broker: answered SUCCESS. Producers heartbeat every
 * broker of their routes; the fan-out broker keeps no client state, so there is nothing to record.
 */
public final class AnsweredSuccess implements RequestHandler {

    public static final AnsweredSuccess INSTANCE = new AnsweredSuccess();

    private AnsweredSuccess() {
    }

    @Override
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        try {
            if (!request.isOneway()) {
                exchange.answer(Frames.errorResponse(exchange.alloc(), request.opaque(),
                    exchange.answerEncoding(), ResponseCode.SUCCESS, null));
            }
            return null;
        } finally {
            request.release();
        }
    }

    @Override
    public String toString() {
        return "answered SUCCESS";
    }
}
