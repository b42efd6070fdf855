package io.rmqgw.gateway.broker;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.core.ClientPipeline;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.UpstreamRole;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.routing.BrokerPortMap;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One gateway listener pair per upstream broker: the main port advertised in routes and the VIP
 * port two below it (clients with vipChannelEnabled dial main - 2). Both relay to the broker's main
 * address, which serves every request the VIP port does. Listeners are bound on first sight of a
 * broker and kept for the life of the process, so a route once returned stays valid.
 */
public final class BrokerListeners implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BrokerListeners.class);
    private static final int MAX_BIND_ATTEMPTS = 8;

    private final RelayContext context;
    private final String listenHost;
    private final String advertiseHost;
    private final int advertiseIp;
    private final BrokerPortMap ports;
    private final Map<String, CompletableFuture<String>> listeners = new ConcurrentHashMap<>();
    /** Real store host (ip << 32 | port) to the advertised one, for message-id rewriting. */
    private final Map<Long, Long> storeHosts = new ConcurrentHashMap<>();
    private final List<Channel> serverChannels = new CopyOnWriteArrayList<>();
    private final StoreHostMapper globalMapper;
    private final Tables tables;
    /** Each real broker's role (the latest of its bind attempts): a reload may rebuild their tables. */
    private final Map<String, BrokerRole> roles = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** The handler table of a real broker's ports, given its address and the store-host mapping of its records. */
    @FunctionalInterface
    public interface Tables {
        HandlerTable forBroker(String brokerAddress, StoreHostMapper storeHosts);
    }

    /** @param tables each broker's handler table (the gateway's registrations of request codes) */
    public BrokerListeners(RelayContext context, String listenHost, String advertiseHost, BrokerPortMap ports,
                           Tables tables) {
        this.context = context;
        this.tables = tables;
        this.listenHost = listenHost;
        this.advertiseHost = advertiseHost;
        this.advertiseIp = ipv4(advertiseHost);
        this.ports = ports;
        this.globalMapper = (ip, port) -> {
            Long mapped = storeHosts.get(storeHostKey(ip, port));
            return mapped == null ? StoreHostMapper.UNKNOWN : mapped;
        };
    }

    /** The advertised {@code host:port} for {@code brokerAddress}, once its listeners are bound. */
    public CompletableFuture<String> ensure(String brokerAddress) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("gateway stopping: no new broker listeners"));
        }
        try {
            return listeners.computeIfAbsent(brokerAddress, a -> bind(a, port -> roleFor(a, port), true));
        } catch (RuntimeException e) {
            // no free port block: the route answer becomes a SYSTEM_ERROR naming the range
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The advertised {@code host:port} of a broker the gateway serves itself, named {@code name} (not
     * an address: it has no upstream), once its listeners are bound. {@code role} is
     * {@link UpstreamRole#local()}; its port block comes from the same range as real brokers'.
     */
    public CompletableFuture<String> ensureServed(String name, UpstreamRole role) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("gateway stopping: no new broker listeners"));
        }
        try {
            return listeners.computeIfAbsent(name, n -> bind(n, port -> role, false));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Every real broker's store host to its gateway listener: for ids of messages the gateway stored itself. */
    public StoreHostMapper storeHosts() {
        return globalMapper;
    }

    /** The advertised address of a broker whose listeners are bound, or null. */
    public String advertised(String brokerAddress) {
        CompletableFuture<String> f = listeners.get(brokerAddress);
        return f != null && f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
    }

    /** Real broker address to advertised gateway address, for every bound broker. */
    public Map<String, String> snapshot() {
        Map<String, String> out = new TreeMap<>();
        listeners.forEach((real, f) -> {
            String adv = advertised(real);
            if (adv != null) {
                out.put(real, adv);
            }
        });
        return out;
    }

    /** {@code real}: a broker with an address, whose store host message ids name. */
    private CompletableFuture<String> bind(String brokerAddress, IntFunction<UpstreamRole> roles, boolean real) {
        CompletableFuture<String> result = new CompletableFuture<>();
        bindAttempt(brokerAddress, roles, real, ports.allocate(brokerAddress).mainPort(), 1, result);
        result.whenComplete((adv, err) -> {
            if (err != null) {
                // let a later route try again rather than remembering the failure forever
                listeners.remove(brokerAddress, result);
            }
        });
        return result;
    }

    private void bindAttempt(String brokerAddress, IntFunction<UpstreamRole> roles, boolean real, int mainPort, int attempt,
                             CompletableFuture<String> result) {
        int vipPort = mainPort - 2;
        UpstreamRole role = roles.apply(mainPort);
        ServerBootstrap b = new ServerBootstrap()
            .group(context.transport().boss(), context.transport().workers())
            .channel(context.transport().serverChannel())
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
            .childHandler(ClientPipeline.initializer(context, context.metrics().brokerListener(brokerAddress),
                role));
        ChannelFuture main = b.bind(listenHost, mainPort);
        ChannelFuture vip = b.bind(listenHost, vipPort);
        main.addListener(m -> vip.addListener(v -> {
            if (m.isSuccess() && v.isSuccess() && closed) {
                main.channel().close();
                vip.channel().close();
                result.completeExceptionally(new IllegalStateException("gateway stopping: no new broker listeners"));
                return;
            }
            if (m.isSuccess() && v.isSuccess()) {
                serverChannels.add(main.channel());
                serverChannels.add(vip.channel());
                String advertised = advertiseHost + ':' + mainPort;
                log.info("broker {} -> gateway {} (VIP port {})", brokerAddress, advertised, vipPort);
                if (real) {
                    registerStoreHost(brokerAddress, mainPort, main.channel().eventLoop(),
                        () -> result.complete(advertised));
                } else {
                    result.complete(advertised);
                }
                return;
            }
            if (m.isSuccess()) {
                main.channel().close();
            }
            if (v.isSuccess()) {
                vip.channel().close();
            }
            Throwable cause = m.isSuccess() ? v.cause() : m.cause();
            if (attempt >= MAX_BIND_ATTEMPTS) {
                result.completeExceptionally(new IllegalStateException("cannot bind a gateway listener for broker "
                    + brokerAddress + " (last tried ports " + vipPort + " and " + mainPort + "): " + Addresses.describe(cause)));
                return;
            }
            log.warn("ports {}/{} for broker {} unavailable ({}), trying the next pair", vipPort, mainPort,
                brokerAddress, Addresses.describe(cause));
            try {
                bindAttempt(brokerAddress, roles, real, ports.reassign(brokerAddress).mainPort(), attempt + 1, result);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        }));
    }

    private BrokerRole roleFor(String brokerAddress, int mainPort) {
        StoreHostMapper mapper = globalMapper;
        InetSocketAddress real = Addresses.parse(brokerAddress);
        int realIp = real.getAddress() instanceof Inet4Address ? ipv4(real.getAddress()) : 0;
        if (realIp != 0 && advertiseIp != 0) {
            // nearly every record a broker returns was stored by that broker: answer it without a lookup
            int realPort = real.getPort();
            long advertised = storeHostKey(advertiseIp, mainPort);
            StoreHostMapper fallback = globalMapper;
            mapper = (ip, port) -> ip == realIp && port == realPort ? advertised : fallback.map(ip, port);
        }
        BrokerRole role = new BrokerRole(brokerAddress, mapper, tables.forBroker(brokerAddress, mapper), context);
        roles.put(brokerAddress, role);
        return role;
    }

    /**
     * Builds every real broker's table again (a reload changed which features are configured): later requests on
     * each broker's connections, open ones too, are dispatched by the new one.
     */
    public void rebuildTables() {
        roles.values().forEach(role -> role.handlers(tables.forBroker(role.brokerAddress(), role.storeHosts())));
    }

    /** Maps the broker's store host, then runs {@code then}; a host name is resolved on {@code loop} first. */
    private void registerStoreHost(String brokerAddress, int mainPort, EventLoop loop, Runnable then) {
        InetSocketAddress real = Addresses.parse(brokerAddress);
        if (advertiseIp == 0 || !real.isUnresolved()) {
            putStoreHost(real, mainPort);
            then.run();
            return;
        }
        // a broker registered by host name stores the address that name resolves to in its message ids
        context.transport().resolver().getResolver(loop).resolve(real).addListener(f -> {
            if (f.isSuccess()) {
                putStoreHost((InetSocketAddress) f.getNow(), mainPort);
            } else {
                log.warn("broker {} does not resolve ({}): its message ids keep naming it", brokerAddress,
                    Addresses.describe(f.cause()));
            }
            then.run();
        });
    }

    private void putStoreHost(InetSocketAddress real, int mainPort) {
        if (advertiseIp != 0 && real.getAddress() instanceof Inet4Address) {
            storeHosts.put(storeHostKey(ipv4(real.getAddress()), real.getPort()), storeHostKey(advertiseIp, mainPort));
        }
    }

    static long storeHostKey(int ip, int port) {
        return StoreHostMapper.pack(ip, port);
    }

    private static int ipv4(String host) {
        try {
            return ipv4(InetAddress.getByName(host));
        } catch (UnknownHostException e) {
            log.warn("advertise host {} does not resolve: message ids keep naming the brokers", host);
            return 0;
        }
    }

    private static int ipv4(InetAddress address) {
        if (!(address instanceof Inet4Address)) {
            log.warn("advertise address {} is not IPv4: message ids keep naming the brokers", address);
            return 0;
        }
        byte[] b = address.getAddress();
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    /** Stops accepting on every broker port; established sessions are closed separately. */
    @Override
    public void close() {
        closed = true;
        for (Channel c : serverChannels) {
            c.close().syncUninterruptibly();
        }
    }
}
