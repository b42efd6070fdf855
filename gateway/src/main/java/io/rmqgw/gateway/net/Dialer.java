package io.rmqgw.gateway.net;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;

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

    /**
     * {@code plain} with TLS first in every pipeline while {@code tls} gives a context (null: plain). The
     * returned future completes once the handshake is done, so a caller's "connected" means usable; a failed
     * handshake fails it (the channel is closed) with an {@link SSLException} naming the target.
     */
    static Dialer withTls(Dialer plain, Supplier<SslContext> tls) {
        return (target, loop, connectTimeoutMillis, handler) -> {
            SslContext context = tls.get();
            if (context == null) {
                return plain.dial(target, loop, connectTimeoutMillis, handler);
            }
            InetSocketAddress address = Addresses.parse(target);
            ChannelFuture connect = plain.dial(target, loop, connectTimeoutMillis, new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    SslHandler ssl = context.newHandler(ch.alloc(), address.getHostString(), address.getPort());
                    ssl.setHandshakeTimeoutMillis(Math.max(connectTimeoutMillis, 1));
                    ch.pipeline().addLast("upstream-tls", ssl);
                    ch.pipeline().addLast(handler);
                }
            });
            ChannelPromise ready = connect.channel().newPromise();
            connect.addListener((ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    ready.tryFailure(f.cause());
                    return;
                }
                f.channel().pipeline().get(SslHandler.class).handshakeFuture().addListener(h -> {
                    if (h.isSuccess()) {
                        ready.trySuccess();
                    } else {
                        f.channel().close();
                        SSLException e = new SSLException("TLS handshake with " + target + " failed: "
                            + Addresses.describe(h.cause()), h.cause());
                        ready.tryFailure(e);
                    }
                });
            });
            return ready;
        };
    }

    /**
     * Why a server ended an upstream TLS session after the handshake, or null when {@code cause} is no TLS failure.
     * Under TLS 1.3 a server that requires a client certificate checks it only after the client's handshake is
     * done, so its refusal (an alert such as {@code certificate_required}) arrives on the first read, wrapped by
     * the decoder; the words say what to configure.
     */
    static String tlsRefusal(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SSLException) {
                String why = "TLS session ended: " + Addresses.describe(t);
                return why.contains("certificate") ? why + " (a server requiring client certificates needs"
                    + " upstream.tls.cert-file and key-file, signed by what it trusts)" : why;
            }
        }
        return null;
    }

    /**
     * TCP with Nagle off and the gateway's water marks. A host name is resolved by the transport's resolver on
     * {@code loop} without blocking it; a name that does not resolve fails the dial with an
     * {@link java.net.UnknownHostException} naming it. The lookup counts against {@code connectTimeoutMillis}: a
     * dial whose lookup and connect together take longer fails with a {@link ConnectTimeoutException} then (the
     * resolver's own query timeout, from resolv.conf or 5 s, may be longer).
     */
    static Dialer tcp(Transport transport) {
        return (target, loop, connectTimeoutMillis, handler) -> {
            InetSocketAddress address = Addresses.parse(target);
            ChannelFuture connect = new Bootstrap()
                .group(loop)
                .channel(transport.socketChannel())
                .resolver(transport.resolver())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
                .handler(handler)
                .connect(address);
            if (!address.isUnresolved() || connect.isDone() || connectTimeoutMillis <= 0) {
                return connect; // the channel's own connect timeout bounds it all
            }
            return withinTimeout(connect, target, connectTimeoutMillis);
        };
    }

    /** {@code connect} (lookup included), failed and its channel closed once {@code millis} pass without an outcome. */
    private static ChannelFuture withinTimeout(ChannelFuture connect, String target, int millis) {
        Channel channel = connect.channel();
        ChannelPromise bounded = channel.newPromise();
        ScheduledFuture<?> deadline = channel.eventLoop().schedule(() -> {
            if (bounded.tryFailure(new ConnectTimeoutException("no connection to " + target + " within the connect"
                + " timeout of " + millis + " ms (host name lookup included)"))) {
                channel.close();
            }
        }, millis, TimeUnit.MILLISECONDS);
        connect.addListener((ChannelFutureListener) f -> {
            deadline.cancel(false);
            if (f.isSuccess()) {
                bounded.trySuccess();
            } else {
                bounded.tryFailure(f.cause());
            }
        });
        return bounded;
    }
}
