package io.rmqgw.gateway;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.rmqgw.gateway.admin.AdminServer;
import io.rmqgw.gateway.admin.Readiness;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.namesrv.ClusterDiscovery;
import io.rmqgw.gateway.namesrv.NamesrvRelayPolicy;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.gateway.relay.RelayContext;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.BrokerPortMap;
import io.rmqgw.routing.NamesrvAddresses;
import io.rmqgw.routing.RouteCache;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running gateway: the name-server listener, one listener pair per upstream broker, and the
 * upstream connections behind them. {@link #start} returns once the listen port is bound and the
 * brokers the name servers know of have listeners.
 */
public final class Gateway implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private final GatewayConfig config;
    private final Transport transport;
    private final RelayContext context;
    private final BrokerListeners brokers;
    private final Channel listener;
    private final Readiness readiness;
    private final AdminServer admin;
    private volatile boolean closed;

    private Gateway(GatewayConfig config, Transport transport, RelayContext context, BrokerListeners brokers, Channel listener,
                    Readiness readiness, AdminServer admin) {
        this.config = config;
        this.transport = transport;
        this.context = context;
        this.brokers = brokers;
        this.listener = listener;
        this.readiness = readiness;
        this.admin = admin;
    }

    /** Binds the listen port, asks the name servers for the cluster, and binds a listener per broker found. */
    public static Gateway start(GatewayConfig config, GatewayMetrics metrics) throws InterruptedException {
        Transport transport = new Transport(Math.max(2, Runtime.getRuntime().availableProcessors()));
        AdminServer admin = null;
        try {
            metrics.topicLabels(config.admin().topicLabels(), config.admin().topicLabelLimit());
            Readiness readiness = new Readiness();
            // first, so probes see "not ready" during startup rather than a refused connection
            admin = config.admin().enabled() ? AdminServer.start(config.admin().listen(), metrics, readiness) : null;
            RelayContext context = new RelayContext(transport, metrics, config.maxFrameLength(),
                (int) config.upstream().connectTimeout().toMillis());
            long requestTimeout = config.upstream().requestTimeout().toNanos();
            BrokerListeners brokers = new BrokerListeners(context, config.listen().host(), config.advertiseHost(),
                new BrokerPortMap(config.brokerPorts().from(), config.brokerPorts().to()),
                requestTimeout, config.upstream().longPollTimeout().toNanos());
            List<String> namesrvList = config.upstream().namesrv().stream().map(HostPort::toString).toList();
            NamesrvAddresses namesrv = NamesrvAddresses.of(namesrvList);
            RouteCache routes = new RouteCache(config.routes().ttl());

            Channel listener = new ServerBootstrap()
                .group(transport.boss(), transport.workers())
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, RelayContext.WATER_MARK)
                .childHandler(RelaySession.clientInitializer(context, metrics.namesrvListener(),
                    () -> new NamesrvRelayPolicy(namesrv, brokers, routes, metrics, readiness, requestTimeout)))
                .bind(config.listen().host(), config.listen().port())
                .sync()
                .channel();
            Gateway gateway = new Gateway(config, transport, context, brokers, listener, readiness, admin);
            log.info("rmqgw listening on {} (name-server role), advertising {}", gateway.listenAddress(), config.advertiseHost());
            if (admin != null) {
                log.info("admin port {}: /metrics, /health/live, /health/ready", admin.localAddress());
            }
            boolean answered = ClusterDiscovery.discover(namesrvList,
                config.upstream().connectTimeout().plus(config.upstream().requestTimeout()), brokers, metrics);
            readiness.listenersBound();
            if (answered) {
                readiness.namesrvAnswered();
            }
            return gateway;
        } catch (InterruptedException | RuntimeException e) {
            if (admin != null) {
                admin.close();
            }
            transport.close();
            throw e;
        }
    }

    /** Where clients point {@code namesrvAddr}. */
    public InetSocketAddress listenAddress() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** Real broker address to the gateway address advertised for it, for every broker seen so far. */
    public Map<String, String> brokerListeners() {
        return brokers.snapshot();
    }

    /** Local addresses ({@code /ip:port}) of every upstream connection the gateway opened. */
    public Set<String> upstreamLocalAddresses() {
        return context.upstreamLocalAddresses();
    }

    /** The admin HTTP address, or null when the admin port is disabled. */
    public InetSocketAddress adminAddress() {
        return admin == null ? null : admin.localAddress();
    }

    /** Readiness as /health/ready reports it. */
    public Readiness readiness() {
        return readiness;
    }

    /** The configuration this gateway runs with. */
    public GatewayConfig config() {
        return config;
    }

    /** Stops accepting, lets in-flight requests finish for at most {@code drain}, then closes everything. */
    public void close(Duration drain) {
        if (closed) {
            return;
        }
        closed = true;
        readiness.draining();
        listener.close().syncUninterruptibly();
        brokers.close();
        long deadline = System.nanoTime() + drain.toNanos();
        while (context.inFlight() > 0 && System.nanoTime() - deadline < 0) {
            try {
                TimeUnit.MILLISECONDS.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        int abandoned = context.inFlight();
        if (abandoned > 0) {
            log.warn("stopping with {} requests still in flight after {} ms", abandoned, drain.toMillis());
        }
        context.closeAll();
        transport.close(Duration.ofMillis(100));
        if (admin != null) {
            admin.close();
        }
        log.info("rmqgw stopped");
    }

    @Override
    public void close() {
        close(config.drainTimeout());
    }
}
