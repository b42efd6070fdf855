package io.rmqgw.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.coalesce.Coalescing;
import io.rmqgw.gateway.coalesce.CoalescingMeters;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.core.Feature;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.core.UpstreamSettings;
import io.rmqgw.gateway.fanout.Fanout;
import io.rmqgw.gateway.fanout.FanoutMeters;
import io.rmqgw.gateway.multicluster.LogicalTopics;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.gateway.route.RouteQueries;
import io.rmqgw.gateway.route.RouteShaper;
import io.rmqgw.gateway.vq.VirtualQueues;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.BrokerPortMap;
import io.rmqgw.routing.RouteCache;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A feature that is not configured puts nothing on the request path: the tables built with the three features off
 * hold exactly the filters of tables built with no feature at all, and a configured one adds its filter.
 */
class FeaturesOffTest {

    private static final String BROKER = "127.0.0.1:10911";
    private static final String NAMESRV = "upstream:\n  namesrv: a:9876\n";
    private static final int[] CODES = {RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2,
        RequestCode.SEND_BATCH_MESSAGE, RequestCode.PULL_MESSAGE, RequestCode.HEART_BEAT,
        RequestCode.GET_CONSUMER_LIST_BY_GROUP, RequestCode.GET_ROUTEINFO_BY_TOPIC, RequestCode.UPDATE_CONSUMER_OFFSET};

    /** The admin policy's place: every code not registered passes it. */
    private static final RequestFilter PASS = (exchange, frame) -> frame;

    private final GatewayMetrics metrics = GatewayMetrics.inMemory();
    private final Dialer noDials = (target, loop, timeout, handler) -> {
        throw new AssertionError("building a table dials nothing: " + target);
    };
    private final Transport transport = new Transport(1);
    private final RelayContext context = new RelayContext(transport, noDials, metrics, 1 << 20,
        new UpstreamSettings(null, 1000, TimeUnit.SECONDS.toNanos(30), TimeUnit.SECONDS.toNanos(60)));
    private final BrokerListeners brokers = new BrokerListeners(context, "127.0.0.1", "127.0.0.1",
        new BrokerPortMap(20000, 20011), (address, hosts) -> HandlerTable.builder(io.rmqgw.gateway.core.Role.BROKER)
            .build());
    private final UpstreamPool pool = new UpstreamPool(context);
    private final RouteQueries routes = new RouteQueries(pool, context);

    @AfterEach
    void close() {
        pool.close();
        transport.close(Duration.ofMillis(50));
    }

    private Fanout fanout(FanoutConfig settings) {
        return new Fanout(settings, brokers, context, pool, routes, brokers.storeHosts(), HandlerTables::fanout);
    }

    private HandlerTable broker(List<Feature> features) {
        return HandlerTables.broker(BROKER, StoreHostMapper.NONE, context.clients(), metrics, context.rateLimits(),
            PASS, features);
    }

    private HandlerTable namesrv(List<Feature> features, RouteShaper shaper) {
        return HandlerTables.namesrv(brokers, new RouteCache(Duration.ofSeconds(30)), context.cluster(), metrics,
            shaper, PASS, features);
    }

    /** The classes of {@code code}'s filters, in order (each table builds its own instances). */
    private static List<Class<?>> kinds(HandlerTable table, int code) {
        return Arrays.stream(table.filters(code)).<Class<?>>map(Object::getClass).toList();
    }

    @Test
    void featuresThatAreOffAddNoFilterToAnyCode() {
        VirtualQueues virtualQueues = new VirtualQueues(List.of(), brokers, context, pool, routes, "127.0.0.1:9876",
            HandlerTables::virtualBroker);
        List<Feature> off = List.of(fanout(FanoutConfig.DEFAULT),
            new Coalescing(CoalescingConfig.NONE, context, pool, brokers.storeHosts()), virtualQueues,
            new LogicalTopics(ConfigLoader.parse(NAMESRV), context, pool, brokers));
        HandlerTable brokerWithout = broker(List.of());
        HandlerTable brokerWithOff = broker(off);
        HandlerTable namesrvWithout = namesrv(List.of(), RouteShaper.NONE);
        HandlerTable namesrvWithOff = namesrv(off, virtualQueues.routeShaper());
        for (int code : CODES) {
            assertEquals(kinds(brokerWithout, code), kinds(brokerWithOff, code), "broker role, code " + code);
            assertEquals(kinds(namesrvWithout, code), kinds(namesrvWithOff, code), "name-server role, code " + code);
        }
        assertSame(RouteShaper.NONE, virtualQueues.routeShaper(), "no route passes the virtual queues' shaper");
    }

    @Test
    void aConfiguredFeatureAddsItsFilterToItsCodesOnly() {
        Coalescing coalescing = new Coalescing(CoalescingConfig.of("Orders"), context, pool, brokers.storeHosts());
        HandlerTable without = broker(List.of());
        HandlerTable with = broker(List.of(coalescing));
        assertEquals(without.filters(RequestCode.SEND_MESSAGE_V2).length + 1,
            with.filters(RequestCode.SEND_MESSAGE_V2).length);
        assertEquals(kinds(without, RequestCode.PULL_MESSAGE), kinds(with, RequestCode.PULL_MESSAGE));

        FanoutConfig on = new FanoutConfig(true, null, null, null, null, null);
        HandlerTable namesrvOn = namesrv(List.of(fanout(on)), RouteShaper.NONE);
        assertTrue(namesrvOn.filters(RequestCode.GET_ROUTEINFO_BY_TOPIC).length
            > namesrv(List.of(), RouteShaper.NONE).filters(RequestCode.GET_ROUTEINFO_BY_TOPIC).length);
    }

    @Test
    void logicalTopicsTakeRoutesAndTheClusterListOnTheNameServerAndSendsOnEveryBroker() {
        GatewayConfig config = ConfigLoader.parse(NAMESRV + "clusters:\n  idc2: {namesrv: 'b:9876'}\n"
            + "logical-topics:\n  - {topic: Orders, clusters: [default, idc2]}\n");
        LogicalTopics logical = new LogicalTopics(config, context, pool, brokers);
        try {
            HandlerTable brokerWith = broker(List.of(logical));
            HandlerTable namesrvWith = namesrv(List.of(logical), RouteShaper.NONE);
            for (int code : new int[] {RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2,
                RequestCode.SEND_BATCH_MESSAGE}) {
                assertEquals(broker(List.of()).filters(code).length + 1, brokerWith.filters(code).length);
            }
            assertEquals(kinds(broker(List.of()), RequestCode.PULL_MESSAGE), kinds(brokerWith, RequestCode.PULL_MESSAGE));
            for (int code : new int[] {RequestCode.GET_ROUTEINFO_BY_TOPIC, RequestCode.GET_BROKER_CLUSTER_INFO}) {
                assertEquals(namesrv(List.of(), RouteShaper.NONE).filters(code).length + 1,
                    namesrvWith.filters(code).length, "code " + code);
            }
            // a reload that removes the topics takes the filters off again
            assertTrue(logical.reload(config.withLogicalTopics(java.util.Map.of(), List.of())));
            assertEquals(kinds(broker(List.of()), RequestCode.SEND_MESSAGE_V2),
                kinds(broker(List.of(logical)), RequestCode.SEND_MESSAGE_V2));
        } finally {
            logical.close();
        }
    }

    /** Off or on, the gateway builds fan-out and coalescing, and with them their meters: exported at 0 from the start. */
    @Test
    void featuresThatAreOffStillExportTheirMetersFromTheStart() {
        fanout(FanoutConfig.DEFAULT);
        new Coalescing(CoalescingConfig.NONE, context, pool, brokers.storeHosts());
        MeterRegistry registry = metrics.registry();
        assertEquals(FanoutMeters.RESULTS.size(), registry.find("rmqgw.fanout.requests").counters().size());
        for (String meter : List.of("rmqgw.fanout.request", "rmqgw.fanout.partial.failures", "rmqgw.fanout.part.retries",
            "rmqgw.coalesce.batch", "rmqgw.coalesce.delay")) {
            assertEquals(1, registry.find(meter).meters().size(), meter);
        }
        assertEquals(CoalescingMeters.RESULTS.size(), registry.find("rmqgw.coalesce.sends").counters().size());
        assertEquals(CoalescingMeters.PASS_REASONS.size(),
            registry.find("rmqgw.coalesce.passed.through").counters().size());
        assertEquals(CoalescingMeters.BATCH_RESULTS.size(), registry.find("rmqgw.coalesce.batches").counters().size());
    }
}
