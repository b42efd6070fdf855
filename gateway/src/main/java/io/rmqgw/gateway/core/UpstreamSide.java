package io.rmqgw.gateway.core;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.rmqgw.codec.frame.RemotingFrame;

/** The upstream channel's handler: hands the session what its upstream sends. */
final class UpstreamSide extends ChannelInboundHandlerAdapter {

    private final RelaySession session;

    UpstreamSide(RelaySession session) {
        this.session = session;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof RemotingFrame frame) {
            session.fromUpstream(frame);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.upstreamReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        session.upstreamWritabilityChanged();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        session.upstreamLost(ctx.channel());
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        session.failed(ctx.channel(), "upstream", cause);
    }
}
