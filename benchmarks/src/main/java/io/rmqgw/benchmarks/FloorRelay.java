package io.rmqgw.benchmarks;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.rmqgw.gateway.net.Transport;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The floor of any relay on this machine: a TCP forwarder built as rmqgw is (Netty, native epoll, rmqgw's own
 * {@link Transport} and socket options, each upstream connection on its client connection's event loop, one
 * flush per read burst, reads paused while the other side's write buffer is full) that does no work at all on
 * what it forwards. The load benchmark runs it as the target {@code relay}, so that rmqgw's ratio to direct
 * access can be split into what any relay costs here (its system calls and thread wake-ups) and what rmqgw
 * itself adds.
 *
 * <p>Clients are routed through it as through rmqgw, but by bytes rather than by protocol: name-server answers
 * (whole frames) have every broker address {@code host:port} replaced by {@code host:relayPort}, which must have
 * as many digits so that no length changes; every other byte passes untouched. A benchmark tool, not a product:
 * nothing is checked or counted.
 *
 * <pre>
 * java -cp benchmarks.jar io.rmqgw.benchmarks.FloorRelay --namesrv 127.0.0.1:59876=127.0.0.1:19876 \
 *     --broker 127.0.0.1:59911=127.0.0.1:10911 [--broker ...] [--threads 2]
 * </pre>
 */
public final class FloorRelay {

    private record Route(InetSocketAddress listen, InetSocketAddress upstream) {

        static Route parse(String arg) {
            String[] sides = arg.split("=", 2);
            if (sides.length != 2) {
                throw new IllegalArgumentException("expected listen=upstream, got " + arg);
            }
            return new Route(address(sides[0]), address(sides[1]));
        }

        private static InetSocketAddress address(String hostPort) {
            int colon = hostPort.lastIndexOf(':');
            return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        }

        /** The upstream's {@code host:port} as a name server writes it, and the relay's in its place. */
        byte[][] rewrite() {
            String from = upstream.getHostString() + ":" + upstream.getPort();
            String to = upstream.getHostString() + ":" + listen.getPort();
            if (from.length() != to.length()) {
                throw new IllegalArgumentException("relay port " + listen.getPort() + " must have as many digits as "
                    + upstream.getPort());
            }
            return new byte[][] {from.getBytes(StandardCharsets.US_ASCII), to.getBytes(StandardCharsets.US_ASCII)};
        }
    }

    private FloorRelay() {
    }

    public static void main(String[] args) throws Exception {
        Route namesrv = null;
        List<Route> brokers = new ArrayList<>();
        int threads = Math.max(2, Runtime.getRuntime().availableProcessors()); // as rmqgw's Gateway
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--namesrv" -> namesrv = Route.parse(args[i + 1]);
                case "--broker" -> brokers.add(Route.parse(args[i + 1]));
                case "--threads" -> threads = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (namesrv == null || brokers.isEmpty() || args.length % 2 != 0) {
            System.err.println("usage: FloorRelay --namesrv listen=upstream --broker listen=upstream [--broker ...] [--threads N]");
            System.exit(2);
        }
        List<byte[][]> rewrites = brokers.stream().map(Route::rewrite).toList();
        Transport transport = new Transport(threads);
        listen(transport, namesrv, rewrites);
        for (Route b : brokers) {
            listen(transport, b, null);
        }
        System.out.println("floor relay ready: name server " + namesrv.listen() + ", brokers "
            + brokers.stream().map(r -> r.listen().toString()).toList());
        CountDownLatch forever = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            transport.close();
            forever.countDown();
        }));
        forever.await();
    }

    /** Accepts on {@code route}'s listen address; {@code rewrites} (null: none) applies to upstream frames. */
    private static void listen(Transport transport, Route route, List<byte[][]> rewrites) {
        new ServerBootstrap().group(transport.boss(), transport.workers()).channel(transport.serverChannel())
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
            .childOption(ChannelOption.AUTO_READ, false)
            .childHandler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel client) {
                    client.pipeline().addLast(new Forward(null));
                    dial(transport, client, route.upstream(), rewrites);
                }
            })
            .bind(route.listen()).syncUninterruptibly();
    }

    /** Dials the upstream on the client's event loop; the client is read once it is connected. */
    private static void dial(Transport transport, Channel client, InetSocketAddress upstream, List<byte[][]> rewrites) {
        new Bootstrap().group(client.eventLoop()).channel(transport.socketChannel())
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
            .handler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel up) {
                    if (rewrites != null) {
                        up.pipeline().addLast(new LengthFieldBasedFrameDecoder(16 * 1024 * 1024, 0, 4),
                            new Rewrite(rewrites));
                    }
                    up.pipeline().addLast(new Forward(client));
                }
            })
            .connect(upstream).addListener((ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    client.close();
                    return;
                }
                if (!client.isActive()) { // the client left during the dial
                    f.channel().close();
                    return;
                }
                client.pipeline().get(Forward.class).peer = f.channel();
                client.config().setAutoRead(true); // starts reading
            });
    }

    /** Writes what it reads to its peer, flushed once per read burst; reads pause while the peer's buffer is full. */
    private static final class Forward extends ChannelInboundHandlerAdapter {

        private Channel peer;

        Forward(Channel peer) {
            this.peer = peer;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            peer.write(msg, peer.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            peer.flush();
            if (!peer.isWritable()) {
                ctx.channel().config().setAutoRead(false);
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable() && peer != null) {
                peer.config().setAutoRead(true);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (peer != null) {
                peer.close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** Replaces every broker address in a name-server frame by the relay's (same length: the frame stays valid). */
    private static final class Rewrite extends ChannelInboundHandlerAdapter {

        private final List<byte[][]> rewrites;

        Rewrite(List<byte[][]> rewrites) {
            this.rewrites = rewrites;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            for (byte[][] r : rewrites) {
                int from = frame.readerIndex();
                int at;
                while ((at = indexOf(frame, from, r[0])) >= 0) {
                    frame.setBytes(at, r[1]);
                    from = at + r[1].length;
                }
            }
            ctx.fireChannelRead(frame);
        }

        private static int indexOf(ByteBuf buf, int from, byte[] needle) {
            int last = buf.writerIndex() - needle.length;
            outer:
            for (int i = from; i <= last; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (buf.getByte(i + j) != needle[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }
}
