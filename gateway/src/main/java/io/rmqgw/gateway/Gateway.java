package io.rmqgw.gateway;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.rmqgw.gateway.admin.AdminServer;
import io.rmqgw.gateway.admin.Readiness;
import io.rmqgw.gateway.adminpolicy.AdminRequests;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.coalesce.Coalescing;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.core.ClientPipeline;
import io.rmqgw.gateway.core.Feature;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.core.UpstreamSettings;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.fanout.Fanout;
import io.rmqgw.gateway.multicluster.LogicalTopics;
import io.rmqgw.gateway.namesrv.ClusterDiscovery;
import io.rmqgw.gateway.namesrv.NamesrvRole;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.gateway.route.RouteQueries;
import io.rmqgw.gateway.vq.VirtualQueues;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.BrokerPortMap;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.RouteCache;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running gateway: the name-server listener, one listener pair per upstream broker, and the
 * upstream connections behind them. {@link #start} returns once the listen port is bound and the
 * brokers the name servers know of have listeners.
 */
public final class Gateway implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private volatile GatewayConfig config;
    private final GatewayMetrics metrics;
    private final Transport transport;
    private final RelayContext context;
    private final BrokerListeners brokers;
    private final Channel listener;
    private final Readiness readiness;
    private final AdminServer admin;
    private final UpstreamPool upstreamPool;
    private final RouteQueries routeQueries;
    private final Fanout fanout;
    private final VirtualQueues virtualQueues;
    private final Coalescing coalescing;
    /** Every feature, in the order their filters run: reloaded and closed together. */
    private final List<Feature> features;
    /** The settings bound at start, compared by each reload. */
    private final RestartBoundSettings restartBound = new RestartBoundSettings();
    private final AdminRequests adminRequests;
    /** Builds every role's table again: after a reload that changed a feature, which registers only while configured. */
    private final Runnable rebuildTables;
    private volatile boolean closed;

    private Gateway(GatewayConfig config, GatewayMetrics metrics, Transport transport, RelayContext context,
                    BrokerListeners brokers, Channel listener, Readiness readiness, AdminServer admin,
                    UpstreamPool upstreamPool, RouteQueries routeQueries, Fanout fanout, VirtualQueues virtualQueues,
                    Coalescing coalescing, List<Feature> features, AdminRequests adminRequests,
                    Runnable rebuildTables) {
        this.config = config;
        this.metrics = metrics;
        this.transport = transport;
        this.context = context;
        this.brokers = brokers;
        this.listener = listener;
        this.readiness = readiness;
        this.admin = admin;
        this.upstreamPool = upstreamPool;
        this.routeQueries = routeQueries;
        this.fanout = fanout;
        this.virtualQueues = virtualQueues;
        this.coalescing = coalescing;
        this.features = features;
        this.adminRequests = adminRequests;
        this.rebuildTables = rebuildTables;
        if (admin != null) {
            String advertised = config.advertiseHost() + ":" + listenAddress().getPort();
            admin.namesrvAddress(() -> advertised);
        }
    }

    /** Binds the listen port, asks the name servers for the cluster, and binds a listener per broker found. */
    public static Gateway start(GatewayConfig config, GatewayMetrics metrics) throws InterruptedException {
        return start(config, metrics, UnaryOperator.identity());
    }

    /**
     * As {@link #start(GatewayConfig, GatewayMetrics)}, with every upstream connection opened through
     * {@code dialers} applied to the TCP dialer (tests observe the gateway's upstream connections so).
     */
    public static Gateway start(GatewayConfig config, GatewayMetrics metrics, UnaryOperator<Dialer> dialers)
        throws InterruptedException {
        Transport transport = new Transport(Math.max(2, Runtime.getRuntime().availableProcessors()));
        AdminServer admin = null;
        try {
            metrics.topicLabels(config.admin().topicLabels(), config.admin().topicLabelLimit());
            Readiness readiness = new Readiness();
            warnIfDirectMemoryUncounted();
            // first, so probes see "not ready" during startup rather than a refused connection
            admin = config.admin().enabled() ? AdminServer.start(config.admin().listen(), metrics, readiness,
                config.admin().bearerToken(), config.admin().tokenProtectsMetrics()) : null;
            RelayContext context = new RelayContext(transport, dialers.apply(Dialer.tcp(transport)), metrics,
                config.maxFrameLength(), UpstreamSettings.of(config.upstream()));
            context.edge(EdgeSettings.of(config));
            context.downstream(config.downstream());
            context.tls().apply(config.tls());
            context.tls().watch(transport.boss().next());
            context.rateLimits().apply(config.rateLimits());
            // ready only while there is memory to serve with and every event loop runs
            readiness.check(context.allocationFailures()::recentReason);
            readiness.check(transport.loopWatch()::stalledReason);
            // every code the name-server and broker tables do not register passes the policy
            AdminRequests adminRequests = new AdminRequests(config.adminRequests(), metrics);
            RequestFilter unregistered = adminRequests.filter();
            metrics.downstreamQueued(() -> context.queuedBytes().total(), () -> context.queuedBytes().largest());
            // the features stand on the broker listeners (store hosts, served brokers) and plug into the tables of
            // the brokers' roles, built once a broker is discovered, after every feature is in this list
            List<Feature> features = new CopyOnWriteArrayList<>();
            BrokerListeners brokers = new BrokerListeners(context, config.listen().host(), config.advertiseHost(),
                new BrokerPortMap(config.brokerPorts().from(), config.brokerPorts().to()),
                (brokerAddress, storeHosts) -> HandlerTables.broker(brokerAddress, storeHosts, context.clients(),
                    metrics, context.rateLimits(), unregistered, features));
            List<String> namesrvList = config.upstream().namesrv().stream().map(HostPort::toString).toList();
            RouteCache routes = new RouteCache(config.routes().ttl());
            UpstreamPool pool = new UpstreamPool(context); // dials nothing until used
            RouteQueries routeQueries = new RouteQueries(pool, context);
            Fanout fanout = new Fanout(config.fanout(), brokers, context, pool, routeQueries, brokers.storeHosts(),
                HandlerTables::fanout);
            VirtualQueues virtualQueues = new VirtualQueues(config.virtualQueues(), brokers, context, pool, routeQueries,
                config.advertiseHost() + ":" + config.listen().port(), HandlerTables::virtualBroker);
            Coalescing coalescing = new Coalescing(config.coalescing(), context, pool, brokers.storeHosts());
            features.addAll(List.of(fanout, coalescing, virtualQueues, new LogicalTopics(config, context, pool, brokers)));
            Supplier<HandlerTable> namesrvTable = () -> HandlerTables.namesrv(brokers, routes, context.cluster(),
                metrics, virtualQueues.routeShaper(), unregistered, features);
            NamesrvRole namesrvRole = new NamesrvRole(context, namesrvTable.get(), readiness);
            Runnable rebuildTables = () -> {
                namesrvRole.handlers(namesrvTable.get());
                brokers.rebuildTables();
            };

            Channel listener = new ServerBootstrap()
                .group(transport.boss(), transport.workers())
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
                .childHandler(ClientPipeline.initializer(context, metrics.namesrvListener(), namesrvRole))
                .bind(config.listen().host(), config.listen().port())
                .sync()
                .channel();
            Gateway gateway = new Gateway(config, metrics, transport, context, brokers, listener, readiness, admin,
                pool, routeQueries, fanout, virtualQueues, coalescing, features, adminRequests, rebuildTables);
            if (config.fanout().enabled()) {
                fanout.bindListener();
            }
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

    /**
     * Netty allocates direct memory itself, counted against {@code -XX:MaxDirectMemorySize} and failing at once, only
     * when it may use the JDK's DirectByteBuffer constructor; otherwise each allocation goes through the JDK, which,
     * at the limit, runs a full GC and sleeps on the event loop (up to about half a second per allocation) before it
     * fails: under memory pressure every connection of that loop waits. bin/rmqgw opens java.nio for it.
     */
    private static void warnIfDirectMemoryUncounted() {
        if (!io.netty.util.internal.PlatformDependent.useDirectBufferNoCleaner()) {
            log.warn("Netty cannot allocate direct memory on its own (start the JVM with --add-opens"
                + " java.base/java.nio=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true, as bin/rmqgw does):"
                + " when direct memory runs out, allocations stall the event loops instead of failing at once");
        }
    }

    /**
     * What name-server discovery hands each list it finds: swaps the upstream name servers, and when no name server
     * has answered yet (the gateway started before the address server did), asks the new ones for the cluster so
     * brokers get listeners and the gateway becomes ready.
     */
    public java.util.function.Consumer<List<HostPort>> namesrvUpdater() {
        return list -> {
            boolean changed = updateNamesrv(list);
            if (changed && !readiness().namesrvHasAnswered()) {
                discoverCluster();
            }
        };
    }

    /** Where clients point {@code namesrvAddr}. */
    public InetSocketAddress listenAddress() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** The gateway's own connections to brokers and name servers, for requests it originates. */
    public UpstreamPool upstreamPool() {
        return upstreamPool;
    }

    /** Brokers, clusters and topic queues as the name servers described them to the gateway. */
    public ClusterView cluster() {
        return context.cluster();
    }

    /** The gateway's own route queries, which teach {@link #cluster()} (over the upstream pool). */
    public RouteQueries routeQueries() {
        return routeQueries;
    }

    /** Multi-topic fan-out: its settings and the broker the gateway serves for the fan-out topic. */
    public Fanout fanout() {
        return fanout;
    }

    /** Virtual queues: the opted-in groups' consumers and the broker the gateway serves for their topics. */
    public VirtualQueues virtualQueues() {
        return virtualQueues;
    }

    /** Server-side coalescing of small sends: its settings. */
    public Coalescing coalescing() {
        return coalescing;
    }

    /** Client connections by client id and group. */
    public ClientRegistry clients() {
        return context.clients();
    }

    /** Real broker address to the gateway address advertised for it, for every broker seen so far. */
    public Map<String, String> brokerListeners() {
        return brokers.snapshot();
    }

    /**
     * Applies a new configuration without dropping connections: upstream name servers and timeouts
     * apply to the next dial and request, metric options at once. Settings bound to sockets
     * (listen address, broker ports, admin port, frame limit, embedded cluster) are reported as
     * needing a restart and left as they are. The caller has validated {@code next} (records
     * validate themselves), so a refused file never gets here.
     */
    public synchronized ReloadResult reload(GatewayConfig next) {
        GatewayConfig current = config;
        List<String> applied = new java.util.ArrayList<>();
        List<String> needsRestart = new java.util.ArrayList<>();
        // first: unusable TLS files refuse the whole reload (ConfigException) before anything is applied;
        // the files are read again even when the settings are unchanged
        if (context.tls().apply(next.tls())) {
            applied.add("tls");
        }
        if (context.rateLimits().apply(next.rateLimits())) {
            applied.add("rate-limits");
        }
        if (adminRequests.apply(next.adminRequests())) {
            applied.add("admin-requests");
        }
        if (!current.upstream().equals(next.upstream())) {
            UpstreamSettings previous = context.upstream();
            UpstreamSettings replacement = UpstreamSettings.of(next.upstream());
            context.upstream(replacement);
            forgetRemovedNamesrv(previous, replacement);
            applied.add("upstream");
        }
        if (!current.names().equals(next.names()) || !current.downstream().equals(next.downstream())
            || current.upstream().headerEncoding() != next.upstream().headerEncoding()) {
            context.edge(EdgeSettings.of(next));
            context.downstream(next.downstream());
            applied.add("names, header encodings, downstream");
        }
        boolean featuresChanged = false;
        for (Feature feature : features) {
            if (feature.reload(next)) {
                applied.add(feature.name());
                featuresChanged = true;
            }
        }
        if (featuresChanged) {
            rebuildTables.run();
        }
        if (!current.admin().topicLabels().equals(next.admin().topicLabels())
            || !current.admin().topicLabelLimit().equals(next.admin().topicLabelLimit())) {
            metrics.topicLabels(next.admin().topicLabels(), next.admin().topicLabelLimit());
            applied.add("admin.topic-labels");
        }
        if (!current.drainTimeout().equals(next.drainTimeout())) {
            applied.add("drain-timeout");
        }
        List<String> pendingRestart = new java.util.ArrayList<>();
        restartBound.compare(current, next, needsRestart, pendingRestart);
        config = RestartBoundSettings.inForce(current, next);
        ReloadResult result = new ReloadResult(applied, needsRestart, pendingRestart);
        log.info("reload: applied {}, newly needs a restart {}, pending a restart {}", applied, needsRestart,
            pendingRestart);
        return result;
    }

    /** A name server no longer configured loses its health gauge, which would otherwise mislead alerts. */
    private void forgetRemovedNamesrv(UpstreamSettings previous, UpstreamSettings replacement) {
        if (previous.namesrv() == null) {
            return;
        }
        java.util.Set<String> kept = new java.util.HashSet<>();
        if (replacement.namesrv() != null) {
            replacement.namesrv().all().forEach(a -> kept.add(a.toString()));
        }
        previous.namesrv().all().forEach(a -> {
            if (!kept.contains(a.toString())) {
                metrics.namesrvRemoved(a.toString());
            }
        });
    }

    /**
     * Replaces the upstream name servers (name-server discovery found others), keeping timeouts and every
     * other setting: the next client connection dials the new list, connections already up keep theirs.
     * Health gauges of name servers no longer listed are dropped. An empty list leaves none (every dial
     * then fails until a list arrives).
     *
     * @return whether anything changed (the same list, in the same order, changes nothing)
     */
    public synchronized boolean updateNamesrv(List<HostPort> namesrv) {
        UpstreamSettings previous = context.upstream();
        List<String> next = namesrv.stream().map(HostPort::toString).toList();
        List<String> current = previous.namesrv() == null ? List.of()
            : previous.namesrv().all().stream().map(Object::toString).toList();
        if (next.equals(current)) {
            return false;
        }
        UpstreamSettings replacement = new UpstreamSettings(
            next.isEmpty() ? null : io.rmqgw.routing.NamesrvAddresses.of(next), previous.connectTimeoutMillis(),
            previous.requestTimeoutNanos(), previous.longPollTimeoutNanos(), previous.signer(),
            previous.tls());
        context.upstream(replacement);
        forgetRemovedNamesrv(previous, replacement);
        config = config.withNamesrv(namesrv);
        log.info("upstream name servers now {} (were {})", String.join(";", next), String.join(";", current));
        return true;
    }

    /**
     * Asks the current upstream name servers for the cluster, as start does: binds a listener per broker
     * found and marks the gateway ready when one answered. Asks them all at once and blocks for up to
     * connect plus request timeout in all (twice that when the listeners are slow to bind); call it from a
     * thread of its own.
     */
    public boolean discoverCluster() {
        UpstreamSettings upstream = context.upstream();
        if (upstream.namesrv() == null || closed) {
            return false;
        }
        List<String> list = upstream.namesrv().all().stream().map(Object::toString).toList();
        boolean answered = ClusterDiscovery.discover(list, Duration.ofMillis(upstream.connectTimeoutMillis())
            .plusNanos(upstream.requestTimeoutNanos()), brokers, metrics);
        if (answered) {
            readiness.namesrvAnswered();
        }
        return answered;
    }

    /** Records the log levels now in force ({@code logging.levels}; the caller applied them to its backend). */
    public synchronized void loggingApplied(io.rmqgw.gateway.config.LoggingConfig levels) {
        config = config.withLogging(levels);
    }

    /**
     * What {@code POST /reload} on the admin port runs (null: the endpoint answers 503). The future completes
     * with the outcome; it must not complete exceptionally for a refused configuration.
     */
    public void reloadHandler(java.util.function.Supplier<java.util.concurrent.CompletableFuture<
        io.rmqgw.gateway.admin.ReloadOutcome>> handler) {
        if (admin != null) {
            admin.reloadHandler(handler);
        }
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

    /**
     * Stops: readiness false, listeners closed, and every client connection stops forwarding new requests (they
     * get SYSTEM_BUSY at once, which RocketMQ clients retry on another address). Requests already upstream, and
     * the gateway's own (fan-out), finish and are answered; then everything closes, as soon as nothing is in
     * flight or after {@code drain} at the latest.
     */
    public void close(Duration drain) {
        if (closed) {
            return;
        }
        closed = true;
        long start = System.nanoTime();
        readiness.draining();
        listener.close().syncUninterruptibly();
        brokers.close();
        context.startDraining();
        virtualQueues.drain(); // held virtual-queue pulls answered, no more fetching: nothing of theirs to wait for
        long deadline = start + drain.toNanos();
        // every loop has run its sessions' drain tasks: nothing is forwarded from here on
        passEveryLoop(deadline);
        while (inFlight() > 0 && System.nanoTime() - deadline < 0) {
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        int abandoned = inFlight();
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (abandoned > 0) {
            log.warn("stopping with {} requests still in flight after {} ms (drain-timeout {} ms): {}, {} of the"
                + " gateway's own", abandoned, tookMillis, drain.toMillis(), context.describeInFlight(),
                upstreamPool.inFlight());
        } else {
            log.info("drained in {} ms: nothing in flight", tookMillis);
        }
        context.closeAll();
        features.forEach(Feature::close); // virtual queues push their real commits while the pool still runs
        upstreamPool.close();
        // the failures of held requests (virtual-queue fetches, coalesced batches) are told on their callers'
        // loops: those run them before any loop ends
        passEveryLoop(System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
        transport.close(Duration.ofMillis(100));
        if (admin != null) {
            admin.close();
        }
        log.info("rmqgw stopped");
    }

    /**
     * Client requests and the gateway's own requests in flight (forwarded and unanswered, or owed an answer by
     * their handler): what a stalled upstream makes the gateway hold.
     */
    public int inFlight() {
        // the virtual queues' own fetches are long polls that deliver nothing once draining
        return context.inFlight() + Math.max(0, upstreamPool.inFlight() - virtualQueues.fetchesInFlight());
    }

    /** Waits (until {@code deadline} at most) for a task on every worker loop to run. */
    private void passEveryLoop(long deadline) {
        for (io.netty.util.concurrent.EventExecutor loop : transport.workers()) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !loop.submit(() -> { }).awaitUninterruptibly(left, TimeUnit.NANOSECONDS)) {
                return;
            }
        }
    }

    @Override
    public void close() {
        close(config.drainTimeout());
    }
}
