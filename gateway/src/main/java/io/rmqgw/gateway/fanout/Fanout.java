package io.rmqgw.gateway.fanout;

import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.core.Feature;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.RequestHandler;
import io.rmqgw.gateway.core.Role;
import io.rmqgw.gateway.core.UpstreamRole;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.gateway.route.RouteQueries;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Multi-topic fan-out, one per gateway: the settings (replaced whole by a reload), the broker the
 * gateway serves itself for the fan-out topic ({@link #BROKER_NAME}, a local role bound with
 * {@link BrokerListeners#ensureServed}), and what its handlers share: the cluster view, route
 * queries, the upstream pool and the store-host mapping of message ids.
 */
public final class Fanout implements Feature {

    private static final Logger log = LoggerFactory.getLogger(Fanout.class);

    /** The served broker's name in the fan-out topic's route. */
    public static final String BROKER_NAME = "rmqgw-fanout";
    /** Its cluster name. */
    public static final String CLUSTER_NAME = "rmqgw";

    private volatile FanoutConfig settings;
    private final BrokerListeners brokers;
    private final RelayContext context;
    private final UpstreamPool pool;
    private final RouteQueries routes;
    private final StoreHostMapper storeHosts;
    private final UpstreamRole role;
    private final FanoutMeters meters;
    /** The round robin over a topic's queues for messages without a sharding key, across requests. */
    private final AtomicInteger roundRobin = new AtomicInteger();

    /** @param table the fan-out broker's handler table around its send handler (where the gateway registers codes) */
    public Fanout(FanoutConfig settings, BrokerListeners brokers, RelayContext context, UpstreamPool pool,
                  RouteQueries routes, StoreHostMapper storeHosts,
                  java.util.function.Function<RequestHandler, HandlerTable> table) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.brokers = brokers;
        this.context = context;
        this.pool = pool;
        this.routes = routes;
        this.storeHosts = storeHosts;
        this.meters = new FanoutMeters(context.metrics().registry()); // on or off: exported at 0 from the start
        HandlerTable handlers = table.apply(new FanoutSendHandler(this));
        this.role = UpstreamRole.served(handlers, "fan-out broker " + BROKER_NAME);
    }

    /** The settings in force. */
    public FanoutConfig settings() {
        return settings;
    }

    /** Applies reloaded settings to every later request; binds the served broker when fan-out is now on. */
    public void settings(FanoutConfig next) {
        FanoutConfig previous = settings;
        settings = Objects.requireNonNull(next, "next");
        if (next.enabled() && !previous.enabled()) {
            bindListener();
        }
        log.info("fan-out {}: topic {}, destination property {}, sharding key property {}, {} retries",
            next.enabled() ? "on" : "off", next.topic(), next.destinationProperty(), next.shardingKeyProperty(),
            next.maxRetries());
    }

    @Override
    public String name() {
        return "fanout";
    }

    /** On the name-server role while fan-out is on, the fan-out topic's route is the gateway's own. */
    @Override
    public void register(Role role, String upstream, HandlerTable.Builder table) {
        if (role == Role.NAMESRV && settings.enabled()) {
            table.filter(new FanoutRouteFilter(this), RequestCode.GET_ROUTEINFO_BY_TOPIC);
        }
    }

    @Override
    public boolean reload(GatewayConfig next) {
        if (settings.equals(next.fanout())) {
            return false;
        }
        settings(next.fanout());
        return true;
    }

    /** Whether a route request for {@code topic} is answered by the gateway itself. */
    public boolean servesRoute(String topic) {
        FanoutConfig s = settings;
        return s.enabled() && s.topic().equals(topic);
    }

    /** The served broker's advertised {@code host:port}, once its listeners are bound. */
    public CompletableFuture<String> listener() {
        return brokers.ensureServed(BROKER_NAME, role);
    }

    /** The served broker's advertised address if its listeners are bound now, else null. */
    public String listenerNow() {
        CompletableFuture<String> f = listener();
        return f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
    }

    /** Binds the served broker now (at start, or when a reload turns fan-out on), logging a failure. */
    public void bindListener() {
        listener().whenComplete((address, failure) -> {
            if (failure != null) {
                log.warn("fan-out broker {} has no listener yet (the next route request tries again): {}", BROKER_NAME,
                    failure.getMessage());
            }
        });
    }

    /** The fan-out meters, on the gateway's registry. */
    FanoutMeters meters() {
        return meters;
    }

    int nextRoundRobin() {
        return roundRobin.getAndIncrement();
    }

    RelayContext context() {
        return context;
    }

    UpstreamPool pool() {
        return pool;
    }

    RouteQueries routes() {
        return routes;
    }

    StoreHostMapper storeHosts() {
        return storeHosts;
    }
}
