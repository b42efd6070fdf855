package io.rmqgw.gateway.core;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.ListenerMeters;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An accepted client connection's pipeline: admitted within the connection limits or closed at once, then TLS (when
 * on), meters, the frame decoder and the session's {@link ClientSide}.
 */
public final class ClientPipeline {

    private static final Logger log = LoggerFactory.getLogger(ClientPipeline.class);
    private static final long REFUSAL_WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final AtomicLong lastRefusalWarnNanos = new AtomicLong(System.nanoTime() - REFUSAL_WARN_INTERVAL_NANOS);

    private ClientPipeline() {
    }

    /** The pipeline for accepted client connections; the client is read only once its upstream is settled. */
    public static ChannelInitializer<Channel> initializer(RelayContext context, ListenerMeters meters,
                                                                UpstreamRole role) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                DownstreamConfig downstream = context.downstream();
                ConnectionLimits.Refusal refusal = context.connections()
                    .admit(ch, downstream.maxConnections(), downstream.maxConnectionsPerAddress());
                if (refusal != null) {
                    refuse(context, role, ch, refusal, downstream);
                    return;
                }
                // the ReadGate's initial state: nothing is read before the session starts
                ch.config().setAutoRead(false);
                // first in the pipeline when TLS is on: TLS or plain is told from the first bytes
                context.tls().install(ch, role.handlers().role().label());
                ch.pipeline().addLast("meters", meters.clientHandler());
                ClientSide side = new ClientSide(context, meters, role);
                // frames up to max-incomplete-frame-bytes are stored whole; a large one may stream up to max-frame-length
                ch.pipeline().addLast("frames", new FrameDecoder(context.maxFrameLength(),
                    context.clientFrameLimit(downstream), FrameDecoder.LARGE_FRAME_LENGTH, context.incompleteFrames(),
                    side));
                ch.pipeline().addLast("relay", side);
            }
        };
    }

    /** Closes a connection refused at accept: logged (at most every 10 s at WARN) and counted. */
    private static void refuse(RelayContext context, UpstreamRole role, Channel ch, ConnectionLimits.Refusal refusal,
                               DownstreamConfig downstream) {
        context.metrics().connectionClosed(role.handlers().role().label(), CloseReason.CONNECTION_LIMIT);
        String why = refusal == ConnectionLimits.Refusal.TOTAL
            ? "the gateway holds downstream.max-connections (" + downstream.maxConnections() + ") client connections"
            : "its address holds downstream.max-connections-per-address (" + downstream.maxConnectionsPerAddress() + ")";
        long now = System.nanoTime();
        long last = lastRefusalWarnNanos.get();
        if (now - last >= REFUSAL_WARN_INTERVAL_NANOS && lastRefusalWarnNanos.compareAndSet(last, now)) {
            log.warn("refusing client connection {}: {} (further refusals within 10 s are logged at DEBUG)",
                Addresses.of(ch.remoteAddress()), why);
        } else {
            log.debug("refusing client connection {}: {}", Addresses.of(ch.remoteAddress()), why);
        }
        ch.close();
    }
}
