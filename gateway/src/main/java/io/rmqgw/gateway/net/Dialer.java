package io.rmqgw.gateway.net;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;

/**
 * Opens the gateway's upstream connections. Injectable so that a session's state machine can be
 * driven with {@code EmbeddedChannel}s in unit tests, and so that tests can observe every upstream
 * connection the gateway opens.
 */
@FunctionalInterface
public interface Dialer {

    /**
     * Connects to {@code target} ({@code host:port}) with its channel registered on {@code loop}, the
     * loop that owns the caller's state; {@code handler} initializes the new channel's pipeline.
     */
    ChannelFuture dial(String target, EventLoop loop, int connectTimeoutMillis, ChannelHandler handler);

    /** TCP with Nagle off and the gateway's water marks. */
    static Dialer tcp(Transport transport) {
        return (target, loop, connectTimeoutMillis, handler) -> new Bootstrap()
            .group(loop)
            .channel(transport.socketChannel())
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
            .handler(handler)
            .connect(Addresses.parse(target));
    }
}
