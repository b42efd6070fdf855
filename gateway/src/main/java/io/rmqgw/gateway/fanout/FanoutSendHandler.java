package io.rmqgw.gateway.fanout;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestHandler;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * SEND_MESSAGE, SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE to the fan-out topic, on the gateway's own
 * fan-out broker: the messages are read ({@link FanoutMessages}) and a {@link FanoutRequest} writes
 * them to their destinations and answers the client once. Nothing is forwarded.
 */
final class FanoutSendHandler implements RequestHandler {

    private final Fanout fanout;

    FanoutSendHandler(Fanout fanout) {
        this.fanout = fanout;
    }

    @Override
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        int opaque = request.opaque();
        boolean oneway = request.isOneway();
        SerializeType encoding = exchange.answerEncoding();
        FanoutConfig settings = fanout.settings();
        FanoutMessages messages;
        try {
            if (!settings.enabled()) {
                throw new FanoutRefusal(ResponseCode.NO_PERMISSION, "fan-out is turned off on this gateway");
            }
            messages = FanoutMessages.read(request, settings, exchange.alloc());
        } catch (FanoutRefusal refusal) {
            fanout.meters().request("refused", 0);
            if (!oneway) {
                exchange.answer(Frames.errorResponse(exchange.alloc(), opaque, encoding, refusal.code(),
                    refusal.getMessage()));
            }
            return null;
        } finally {
            request.release();
        }
        new FanoutRequest(fanout, settings, exchange, opaque, oneway, encoding, messages).start();
        return null;
    }

    @Override
    public String toString() {
        return "fan-out send";
    }
}
