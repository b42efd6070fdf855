package io.rmqgw.gateway.pool;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.core.AllocationFailures;
import io.rmqgw.gateway.net.Dialer;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A pooled connection's channel handler: answers, upstream requests, loss, and why it closed. */
final class PooledInbound extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(PooledInbound.class);

    private final UpstreamConnection connection;

    PooledInbound(UpstreamConnection connection) {
        this.connection = connection;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof RemotingFrame frame) {
            connection.fromUpstream(frame);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        connection.channelClosed(ctx.channel());
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        String tlsRefusal = Dialer.tlsRefusal(cause);
        if (cause instanceof MalformedFrameException m) {
            log.warn("closing pooled connection to {}: {}", connection.describe(), m.getMessage());
            connection.context().metrics().decodeError(m.reason().label());
            connection.closeReason("malformed frame: " + m.getMessage());
        } else if (tlsRefusal != null) {
            connection.closeReason(tlsRefusal);
            log.warn("closing pooled connection to {}: {}", connection.describe(), tlsRefusal);
        } else if (cause instanceof IOException) {
            log.debug("pooled connection to {}: {}", connection.describe(), cause.toString());
        } else if (AllocationFailures.isAllocationFailure(cause)) {
            connection.context().allocationFailures().record();
            connection.closeReason("no memory for it: " + cause);
            log.warn("closing pooled connection to {}: no memory for it: {}", connection.describe(), cause.toString());
        } else {
            log.warn("closing pooled connection to {}", connection.describe(), cause);
            connection.closeReason("internal error: " + cause);
        }
        ctx.close();
    }
}
