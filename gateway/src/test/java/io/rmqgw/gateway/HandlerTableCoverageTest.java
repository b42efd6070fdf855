package io.rmqgw.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RequestHandler;
import io.rmqgw.gateway.core.Role;
import io.rmqgw.gateway.core.UpstreamRequestHandler;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.route.RouteShaper;
import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.vq.VirtualBrokerHandlers;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.Test;
import org.junit.platform.commons.support.ReflectionSupport;

/** Every code the handler tables register has an end-to-end test, and every such test names a registered code. */
public class HandlerTableCoverageTest {

    private static final StoreHostMapper NO_STORE_HOSTS = (ip, port) -> StoreHostMapper.UNKNOWN;

    public static HandlerTable namesrv() {
        return HandlerTables.namesrv(null, null, new ClusterView(), GatewayMetrics.inMemory(), RouteShaper.NONE,
            (exchange, request) -> request, List.of());
    }

    public static HandlerTable broker() {
        GatewayMetrics metrics = GatewayMetrics.inMemory();
        return HandlerTables.broker("127.0.0.1:10911", NO_STORE_HOSTS, new ClientRegistry(), metrics,
            new RateLimits(metrics), (exchange, request) -> request, List.of());
    }

    private static List<HandlerTable> tables() {
        return List.of(namesrv(), broker(), HandlerTables.fanout(RequestHandler.PASS_THROUGH),
            HandlerTables.virtualBroker(VirtualBrokerHandlers.all(RequestHandler.PASS_THROUGH)));
    }

    /** Registered code -> where it is registered, e.g. {@code 310 -> broker request}. */
    private static Map<Integer, String> registeredCodes() {
        Map<Integer, String> codes = new TreeMap<>();
        for (HandlerTable t : tables()) {
            t.requestRegistrations().keySet().forEach(c -> codes.put(c, t.role() + " request"));
            t.upstreamRequestRegistrations().keySet().forEach(c -> codes.put(c, t.role() + " upstream request"));
        }
        return codes;
    }

    /** Code -> the test methods that say they cover it. */
    private static Map<Integer, List<String>> coveredCodes() {
        Map<Integer, List<String>> covered = new TreeMap<>();
        for (Class<?> test : ReflectionSupport.findAllClassesInPackage("io.rmqgw.gateway", c -> true, n -> true)) {
            for (Method m : test.getDeclaredMethods()) {
                CoversCodes covers = m.getAnnotation(CoversCodes.class);
                if (covers == null) {
                    continue;
                }
                for (int code : covers.value()) {
                    covered.computeIfAbsent(code, c -> new ArrayList<>()).add(test.getSimpleName() + "." + m.getName());
                }
            }
        }
        return covered;
    }

    @Test
    void everyRegisteredCodeHasATest() {
        Map<Integer, List<String>> covered = coveredCodes();
        List<String> untested = new ArrayList<>();
        registeredCodes().forEach((code, where) -> {
            if (!covered.containsKey(code)) {
                untested.add(code + " (" + where + ")");
            }
        });
        assertTrue(untested.isEmpty(), "registered codes without a @CoversCodes test: " + untested);
    }

    @Test
    void everyCoveredCodeIsRegistered() {
        TreeSet<Integer> stale = new TreeSet<>(coveredCodes().keySet());
        stale.removeAll(registeredCodes().keySet());
        assertTrue(stale.isEmpty(), "@CoversCodes names codes no table registers: " + stale + " in "
            + coveredCodes().entrySet().stream().filter(e -> stale.contains(e.getKey())).toList());
    }

    @Test
    void unregisteredCodesPassThrough() {
        HandlerTable broker = broker();
        assertSame(RequestHandler.PASS_THROUGH, broker.request(RequestCode.GET_MAX_OFFSET));
        assertSame(UpstreamRequestHandler.PASS_THROUGH, broker.upstreamRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED));
        assertSame(RequestHandler.PASS_THROUGH, namesrv().request(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER));
    }

    @Test
    void longPollingIsWhatTheBrokerHolds() {
        HandlerTable broker = broker();
        TreeSet<Integer> longPolls = new TreeSet<>();
        broker.requestRegistrations().forEach((code, h) -> {
            if (h.longPolling()) {
                longPolls.add(code);
            }
        });
        assertEquals(new TreeSet<>(List.of(RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE, RequestCode.POP_MESSAGE)),
            longPolls);
    }

    @Test
    void aCodeRegistersOnce() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> HandlerTable.builder(Role.BROKER)
            .request(RequestHandler.PASS_THROUGH, RequestCode.HEART_BEAT)
            .request(RequestHandler.PASS_THROUGH, RequestCode.HEART_BEAT));
        assertTrue(e.getMessage().contains("34"), e.getMessage());
    }
}
