package io.rmqgw.gateway.fanout;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;
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
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        int opaque = request.opaque();
        boolean oneway = request.isOneway();
        SerializeType encoding = session.answerEncoding(request.encoding());
        FanoutConfig settings = fanout.settings();
        FanoutMessages messages;
        try {
            if (!settings.enabled()) {
                throw new FanoutRefusal(ResponseCode.NO_PERMISSION, "fan-out is turned off on this gateway");
            }
            messages = FanoutMessages.read(request, settings, session.client().alloc());
        } catch (FanoutRefusal refusal) {
            fanout.context().metrics().fanoutRequest("refused", 0);
            if (!oneway) {
                session.answerLocally(Frames.errorResponse(session.client().alloc(), opaque, encoding, refusal.code(),
                    refusal.getMessage()));
            }
            return null;
        } finally {
            request.release();
        }
        new FanoutRequest(fanout, settings, session, opaque, oneway, encoding, messages).start();
        return null;
    }

    @Override
    public String toString() {
        return "fan-out send";
    }
}
