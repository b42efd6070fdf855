package io.rmqgw.gateway.net;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.resolver.AddressResolverGroup;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.resolver.dns.DnsServerAddressStreamProvider;
import io.netty.resolver.dns.DnsServerAddressStreamProviders;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Event loops and channel classes: native epoll where available, NIO otherwise. Upstream
 * connections are registered on their client connection's event loop, so one loop owns both.
 */
public final class Transport implements AutoCloseable {

    /** Per-connection write buffer bounds: past high, the peer feeding it stops being read. */
    public static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(256 * 1024, 1024 * 1024);

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Class<? extends ServerChannel> serverChannel;
    private final Class<? extends SocketChannel> socketChannel;
    private final AddressResolverGroup<InetSocketAddress> resolver;
    private final LoopWatch loopWatch;
    /** How long a stop waits for the event loops to end past their quiet period: a stalled loop never would. */
    private static final Duration LOOPS_END_WITHIN = Duration.ofSeconds(5);

    public Transport(int workerThreads) {
        this(workerThreads, DnsServerAddressStreamProviders.platformDefault());
    }

    /** @param dnsServers where host names are looked up (tests: a fixed server) */
    public Transport(int workerThreads, DnsServerAddressStreamProvider dnsServers) {
        Class<? extends DatagramChannel> datagramChannel;
        if (Epoll.isAvailable()) {
            boss = new EpollEventLoopGroup(1, new DefaultThreadFactory("rmqgw-accept"));
            workers = new EpollEventLoopGroup(workerThreads, new DefaultThreadFactory("rmqgw-io"));
            serverChannel = EpollServerSocketChannel.class;
            socketChannel = EpollSocketChannel.class;
            datagramChannel = EpollDatagramChannel.class;
        } else {
            boss = new NioEventLoopGroup(1, new DefaultThreadFactory("rmqgw-accept"));
            workers = new NioEventLoopGroup(workerThreads, new DefaultThreadFactory("rmqgw-io"));
            serverChannel = NioServerSocketChannel.class;
            socketChannel = NioSocketChannel.class;
            datagramChannel = NioDatagramChannel.class;
        }
        // /etc/hosts first, then the name servers of /etc/resolv.conf, queried from the dialing loop itself; a dial
        // bounds its lookup by upstream.connect-timeout (Dialer.tcp), whatever the resolver's own query timeout
        resolver = new DnsAddressResolverGroup(new DnsNameResolverBuilder()
            .datagramChannelType(datagramChannel)
            .socketChannelType(socketChannel)
            .nameServerProvider(dnsServers));
        loopWatch = new LoopWatch(workers);
    }

    /** Whether every I/O event loop still runs its tasks. */
    public LoopWatch loopWatch() {
        return loopWatch;
    }

    public EventLoopGroup boss() {
        return boss;
    }

    public EventLoopGroup workers() {
        return workers;
    }

    public Class<? extends ServerChannel> serverChannel() {
        return serverChannel;
    }

    public Class<? extends SocketChannel> socketChannel() {
        return socketChannel;
    }

    /**
     * Resolves upstream host names without blocking the loop that dials (a resolver per loop, answers cached
     * for their TTL); IP literals need none.
     */
    public AddressResolverGroup<InetSocketAddress> resolver() {
        return resolver;
    }

    public void close(Duration quietPeriod) {
        loopWatch.close();
        resolver.close();
        boss.shutdownGracefully(0, quietPeriod.toMillis(), TimeUnit.MILLISECONDS);
        if (!workers.shutdownGracefully(0, quietPeriod.toMillis(), TimeUnit.MILLISECONDS)
            .awaitUninterruptibly(quietPeriod.plus(LOOPS_END_WITHIN).toMillis())) {
            org.slf4j.LoggerFactory.getLogger(Transport.class).warn("the event loops did not end within {} ms of the"
                + " stop (one is stalled): left to end with the process", quietPeriod.plus(LOOPS_END_WITHIN).toMillis());
        }
    }

    @Override
    public void close() {
        close(Duration.ZERO);
    }
}
