package io.rmqgw.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.codec.frame.RemotingHeader;
import java.util.Map;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.junit.jupiter.api.Test;

class RouteDialectTest {

    @Test
    void constantsMatchRocketMq() throws Exception {
        assertEquals(MQVersion.Version.V4_9_4.ordinal(), RouteDialect.STANDARD_JSON_MIN_VERSION);
        assertEquals(Boolean.class,
            GetRouteInfoRequestHeader.class.getDeclaredField(RouteDialect.ACCEPT_STANDARD_JSON_ONLY).getType());
    }

    @Test
    void versionFrom494OnGetsStandardJson() {
        int v494 = MQVersion.Version.V4_9_4.ordinal();
        assertEquals(RouteDialect.STANDARD, RouteDialect.forRequest(v494, null));
        assertEquals(RouteDialect.STANDARD, RouteDialect.forRequest(MQVersion.Version.V5_3_3.ordinal(), Map.of()));
        assertEquals(RouteDialect.FASTJSON, RouteDialect.forRequest(v494 - 1, null));
        assertEquals(RouteDialect.FASTJSON, RouteDialect.forRequest(0, Map.of("topic", "TopicA")));
    }

    @Test
    void acceptStandardJsonOnlyIsReadAsNamesrvReadsBooleans() {
        int old = MQVersion.Version.V4_9_3.ordinal();
        assertEquals(RouteDialect.STANDARD, RouteDialect.forRequest(old, Map.of("acceptStandardJsonOnly", "true")));
        assertEquals(RouteDialect.STANDARD, RouteDialect.forRequest(old, Map.of("acceptStandardJsonOnly", "TRUE")));
        assertEquals(RouteDialect.FASTJSON, RouteDialect.forRequest(old, Map.of("acceptStandardJsonOnly", "false")));
        assertEquals(RouteDialect.FASTJSON, RouteDialect.forRequest(old, Map.of("acceptStandardJsonOnly", "1")));
        assertEquals(RouteDialect.FASTJSON, RouteDialect.forRequest(old, Map.of("acceptStandardJsonOnly", " true")));
        // a new client is standard whatever the field says
        assertEquals(RouteDialect.STANDARD, RouteDialect.forRequest(401, Map.of("acceptStandardJsonOnly", "false")));
    }

    @Test
    void readsADecodedHeader() {
        RemotingHeader goClient = new RemotingHeader(RequestCode.GET_ROUTEINFO_BY_TOPIC, LanguageCode.GO, 317, 1, 0,
            null, Map.of("topic", "TopicA"));
        assertEquals(RouteDialect.FASTJSON, RouteDialect.forRequest(goClient));
        assertEquals(RouteDialect.STANDARD, RouteDialect.forRequest(
            goClient.withExtFields(Map.of("topic", "TopicA", "acceptStandardJsonOnly", "true"))));
    }
}
