package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.gateway.limits.RateLimits;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/** A client connection as handlers see it: who it is, and how frames reach it. On its event loop. */
public interface ClientConnection {

    /** The channel, for registries keyed by connection (client ids, consumer groups). */
    Channel channel();

    /** The client's address, for logs. */
    String address();

    default ByteBufAllocator alloc() {
        return channel().alloc();
    }

    default EventLoop loop() {
        return channel().eventLoop();
    }

    /** The header encoding of the client's latest request, or null before its first. */
    SerializeType latestEncoding();

    /**
     * An upstream frame (a request the upstream sends the client) in the encoding of the client's latest request.
     * Takes ownership of {@code frame} and {@code decoded}.
     */
    ByteBuf forClient(RemotingFrame frame, CommandHeader decoded);

    /** An upstream frame rebuilt with a changed {@code header}, in the client's latest encoding. Takes ownership of both. */
    ByteBuf rebuiltForClient(RemotingFrame frame, CommandHeader header);

    /**
     * The client id the connection's heartbeats named, or, before its first heartbeat, {@code unidentified@ip}, so
     * that the unidentified connections of one address share one client's buckets.
     */
    String idForLimits();

    /** The connection's source address for {@code rate-limits.per-address}. */
    RateLimits.Source sourceForLimits();
}
