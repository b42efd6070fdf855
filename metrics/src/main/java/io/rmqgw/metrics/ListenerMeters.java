package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The meters of one listener: the name-server listener, or the listener of one upstream broker.
 * Tags are {@code role} ({@code namesrv}, {@code broker}) and {@code upstream} (the broker address
 * for a broker listener, {@code namesrv} for the name-server listener), both bounded by the routes.
 *
 * <p>Counting happens in two {@link ChannelHandler}s, one per side, shared by every channel of the
 * listener: put {@link #clientHandler()} first in each accepted client channel's pipeline and
 * {@link #upstreamHandler()} first in each upstream channel's pipeline. They count connections
 * (active to inactive) and the raw bytes read and written, without allocating.
 */
public final class ListenerMeters {

    private final String role;
    private final String upstream;
    private final AtomicLong clientConnections = new AtomicLong();
    private final AtomicLong upstreamConnections = new AtomicLong();
    private final Side client;
    private final Side upstreamSide;

    ListenerMeters(MeterRegistry registry, String role, String upstream) {
        this.role = role;
        this.upstream = upstream;
        Tags tags = Tags.of("role", role, "upstream", upstream);
        Gauge.builder("rmqgw.client.connections", clientConnections, AtomicLong::get)
            .description("Open client connections, by listener role and the upstream it fronts")
            .tags(tags)
            .strongReference(true)
            .register(registry);
        Gauge.builder("rmqgw.upstream.connections", upstreamConnections, AtomicLong::get)
            .description("Open upstream connections, by listener role and upstream")
            .tags(tags)
            .strongReference(true)
            .register(registry);
        client = new Side(clientConnections, bytes(registry, RECEIVED, tags, "client", RECEIVED_HELP),
            bytes(registry, SENT, tags, "client", SENT_HELP));
        upstreamSide = new Side(upstreamConnections, bytes(registry, RECEIVED, tags, "upstream", RECEIVED_HELP),
            bytes(registry, SENT, tags, "upstream", SENT_HELP));
    }

    private static final String RECEIVED = "rmqgw.received";
    private static final String SENT = "rmqgw.sent";
    private static final String RECEIVED_HELP = "Bytes read by the gateway, by listener role, upstream and peer (client or upstream)";
    private static final String SENT_HELP = "Bytes written by the gateway, by listener role, upstream and peer (client or upstream)";

    private static Counter bytes(MeterRegistry registry, String name, Tags tags, String peer, String description) {
        return Counter.builder(name)
            .description(description)
            .baseUnit("bytes")
            .tags(tags)
            .tag("peer", peer)
            .register(registry);
    }

    public String role() {
        return role;
    }

    public String upstream() {
        return upstream;
    }

    /** Counts connections and bytes of accepted client channels; {@link ChannelHandler.Sharable}. */
    public ChannelHandler clientHandler() {
        return client;
    }

    /** Counts connections and bytes of upstream channels; {@link ChannelHandler.Sharable}. */
    public ChannelHandler upstreamHandler() {
        return upstreamSide;
    }

    public long clientConnections() {
        return clientConnections.get();
    }

    public long upstreamConnections() {
        return upstreamConnections.get();
    }

    public double bytesFromClients() {
        return client.received.count();
    }

    public double bytesToClients() {
        return client.sent.count();
    }

    public double bytesFromUpstream() {
        return upstreamSide.received.count();
    }

    public double bytesToUpstream() {
        return upstreamSide.sent.count();
    }

    @ChannelHandler.Sharable
    private static final class Side extends ChannelDuplexHandler {

        private final AtomicLong connections;
        private final Counter received;
        private final Counter sent;

        Side(AtomicLong connections, Counter received, Counter sent) {
            this.connections = connections;
            this.received = received;
            this.sent = sent;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            connections.incrementAndGet();
            super.channelActive(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            connections.decrementAndGet();
            super.channelInactive(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            count(received, msg);
            super.channelRead(ctx, msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            count(sent, msg);
            super.write(ctx, msg, promise);
        }

        private static void count(Counter counter, Object msg) {
            int n;
            if (msg instanceof ByteBuf b) {
                n = b.readableBytes();
            } else if (msg instanceof ByteBufHolder h) {
                n = h.content().readableBytes();
            } else {
                return;
            }
            if (n > 0) {
                counter.increment(n);
            }
        }
    }
}
