package io.rmqgw.gateway.core;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.rmqgw.codec.frame.BodyChunk;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.metrics.ListenerMeters;

/** The client channel's handler: starts the session once the connection is active and hands it what arrives. */
final class ClientSide extends ChannelInboundHandlerAdapter implements FrameDecoder.CutThrough {

    private final RelayContext context;
    private final ListenerMeters meters;
    private final UpstreamRole role;
    RelaySession session;

    ClientSide(RelayContext context, ListenerMeters meters, UpstreamRole role) {
        this.context = context;
        this.meters = meters;
        this.role = role;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        session = RelaySession.start(context, role, meters, ctx.channel());
        ctx.fireChannelActive();
    }

    @Override
    public boolean stream(RemotingFrame head) {
        return session != null && session.mayStream(head);
    }

    @Override
    public boolean open() {
        return session != null && session.streamsOpen();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof BodyChunk chunk) {
            if (session != null) {
                session.bodyChunk(chunk);
            } else {
                chunk.release();
            }
            return;
        }
        if (session != null) {
            // a head not taken by an upstream (refused, answered here, dropped) has its body discarded
            session.headNotStreamed();
        }
        if (session == null || !(msg instanceof RemotingFrame frame) || session.inputEnded()) {
            // after a malformed frame nothing more is relayed
            ReferenceCountUtil.release(msg);
            return;
        }
        session.read(frame);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (session != null) {
            session.clientReadComplete();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (session != null) {
            session.clientWritabilityChanged();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (session != null) {
            session.clientClosed();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (session != null) {
            session.failed(ctx.channel(), "client", cause);
        } else {
            ctx.close();
        }
    }
}
