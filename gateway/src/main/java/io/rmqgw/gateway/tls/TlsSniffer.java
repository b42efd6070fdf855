package io.rmqgw.gateway.tls;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.rmqgw.gateway.config.TlsMode;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * First in an accepted client connection's pipeline while TLS is on: looks at the first five bytes, as
 * RocketMQ's own servers do, and puts an {@link SslHandler} in its own place for a TLS record, or steps aside
 * for a plain RocketMQ frame (whose first byte, the high byte of the frame length, is 0) in {@code permissive}
 * mode. In {@code enforcing} mode a plain connection is closed and counted ({@code tls_required}). Bytes read
 * while deciding go on to whoever takes over.
 */
final class TlsSniffer extends ByteToMessageDecoder {

    static final String NAME = "tls-sniff";
    static final String TLS = "tls";
    private static final Logger log = LoggerFactory.getLogger(TlsSniffer.class);
    private static final long WARN_INTERVAL_NANOS = 10_000_000_000L;
    private static final AtomicLong lastWarnNanos = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

    private final SslContext context;
    private final TlsMode mode;
    private final String role;
    private final GatewayMetrics metrics;

    TlsSniffer(SslContext context, TlsMode mode, String role, GatewayMetrics metrics) {
        this.context = context;
        this.mode = mode;
        this.role = role;
        this.metrics = metrics;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < 5) {
            return;
        }
        if (SslHandler.isEncrypted(in, false)) {
            SslHandler tls = context.newHandler(ctx.alloc());
            ctx.pipeline().replace(this, TLS, tls);
            ctx.pipeline().addAfter(TLS, "tls-errors", new HandshakeFailures(role, metrics));
        } else if (mode == TlsMode.PERMISSIVE) {
            ctx.pipeline().remove(this);
        } else {
            in.skipBytes(in.readableBytes());
            metrics.connectionClosed(role, CloseReason.TLS_REQUIRED);
            warn("closing plain connection {} on a TLS-only listener (tls.mode: enforcing); start the client with"
                + " -Dtls.enable=true", Addresses.of(ctx.channel().remoteAddress()));
            ctx.close();
        }
    }

    /** At WARN at most every 10 s (a flood of refused peers must not flood the log), else at DEBUG. */
    static void warn(String format, Object... args) {
        long now = System.nanoTime();
        long last = lastWarnNanos.get();
        if (now - last >= WARN_INTERVAL_NANOS && lastWarnNanos.compareAndSet(last, now)) {
            log.warn(format, args);
        } else {
            log.debug(format, args);
        }
    }

    /**
     * Right after the {@link SslHandler}: counts a failed handshake once ({@code tls_handshake_failed}) and keeps
     * TLS errors, which only mean the peer is gone or wrong, from reaching the relay as internal errors.
     */
    static final class HandshakeFailures extends ChannelInboundHandlerAdapter {
        private final String role;
        private final GatewayMetrics metrics;

        HandshakeFailures(String role, GatewayMetrics metrics) {
            this.role = role;
            this.metrics = metrics;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof SslHandshakeCompletionEvent done && !done.isSuccess()) {
                metrics.connectionClosed(role, CloseReason.TLS_HANDSHAKE_FAILED);
                warn("TLS handshake with {} failed: {}", Addresses.of(ctx.channel().remoteAddress()),
                    String.valueOf(done.cause()));
                ctx.close();
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            for (Throwable t = cause; t != null; t = t.getCause()) {
                if (t instanceof SSLException) {
                    log.debug("TLS error on {}: {}", Addresses.of(ctx.channel().remoteAddress()), cause.toString());
                    ctx.close();
                    return;
                }
            }
            ctx.fireExceptionCaught(cause);
        }
    }
}
