package io.rmqgw.gateway.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.testing.FakeExchange;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.RouteCache;
import io.rmqgw.routing.RouteDialect;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.Wire;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The route family's handler against a fake exchange: what it keeps for the answer, the answers it passes on, and
 * the cached route it serves while no name server answers (RouteRewriteTest runs the listeners' rewrite whole).
 */
@ExtendWith(LeakCheckExtension.class)
class RouteAnswerHandlerTest {

    private static final String ROUTE = "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"10.0.0.1:10911\"},"
        + "\"brokerName\":\"b\",\"cluster\":\"c\"}],\"queueDatas\":[{\"brokerName\":\"b\",\"perm\":6,"
        + "\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}";

    private final GatewayMetrics metrics = GatewayMetrics.inMemory();
    private final RouteCache routes = new RouteCache(Duration.ofMinutes(1));
    private final ClusterView cluster = new ClusterView();
    private final RouteAnswerHandler handler = new RouteAnswerHandler(null, routes, cluster, metrics, RouteShaper.NONE);

    private static RemotingFrame routeRequest(String topic) {
        return FakeExchange.frame(Wire.request(RequestCode.GET_ROUTEINFO_BY_TOPIC).type(SerializeType.JSON)
            .version(401).opaque(9).ext("topic", topic).bytes());
    }

    @Test
    void aRouteRequestKeepsItsTopicAndDialectAndGoesAsItCame() {
        RemotingFrame request = routeRequest("T");
        try (FakeExchange exchange = FakeExchange.of(request)) {
            ByteBuf out = handler.toUpstream(exchange, request);
            try {
                assertEquals("T", FakeExchange.parse(out).ext().get("topic"));
                assertNotNull(exchange.kept(), "kept for caching the answer");
                assertTrue(exchange.answers().isEmpty());
            } finally {
                out.release();
            }
        }
    }

    @Test
    void aTopicTheNameServerNoLongerKnowsIsForgottenAndItsAnswerPassesOn() {
        cluster.learnRoute("T", ROUTE.getBytes(StandardCharsets.UTF_8));
        assertTrue(cluster.knowsTopic("T"));
        RemotingFrame request = routeRequest("T");
        try (FakeExchange exchange = FakeExchange.of(request)) {
            handler.toUpstream(exchange, request).release();
            RemotingFrame notExist = FakeExchange.frame(Wire.response(ResponseCode.TOPIC_NOT_EXIST, 9)
                .type(SerializeType.JSON).remark("No topic route info in name server for the topic: T").bytes());
            ByteBuf out = handler.onResponse(exchange, notExist);
            try {
                assertEquals(ResponseCode.TOPIC_NOT_EXIST, FakeExchange.parse(out).code());
            } finally {
                out.release();
            }
            assertFalse(cluster.knowsTopic("T"));
        }
    }

    @Test
    void withoutANameServerAFreshCachedRouteIsServedInTheRequestsDialect() {
        routes.put("T", RouteDialect.STANDARD, ROUTE.getBytes(StandardCharsets.UTF_8));
        RemotingFrame request = routeRequest("T");
        try (FakeExchange exchange = FakeExchange.of(request)) {
            ByteBuf answer = handler.answerWithoutUpstream(exchange, request, "no name server reachable");
            request.release();
            try {
                Wire.Frame served = FakeExchange.parse(answer);
                assertEquals(ResponseCode.SUCCESS, served.code());
                assertEquals(9, served.opaque());
                assertEquals(ROUTE, new String(served.body(), StandardCharsets.UTF_8));
            } finally {
                answer.release();
            }
        }
    }

    @Test
    void withoutANameServerAnUncachedTopicIsLeftToTheSessionsError() {
        RemotingFrame request = routeRequest("Unknown");
        try (FakeExchange exchange = FakeExchange.of(request)) {
            assertNull(handler.answerWithoutUpstream(exchange, request, "no name server reachable"));
            request.release();
        }
    }
}
