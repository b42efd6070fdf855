package io.rmqgw.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.alibaba.fastjson2.JSONWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.Test;

/** The route a client of a virtual-queue topic gets, read back by RocketMQ's own (client-side) decoders. */
class VirtualRouteTest {

    private static final VirtualRoute.VirtualBroker VQ =
        new VirtualRoute.VirtualBroker("rmqgw-vq", "rmqgw", "127.0.0.1:20100", 64);

    private static TopicRouteData route() {
        TopicRouteData route = new TopicRouteData();
        List<QueueData> queues = new ArrayList<>();
        for (String name : List.of("broker-a", "broker-b")) {
            QueueData q = new QueueData();
            q.setBrokerName(name);
            q.setReadQueueNums(4);
            q.setWriteQueueNums(4);
            q.setPerm(6);
            queues.add(q);
        }
        route.setQueueDatas(queues);
        HashMap<Long, String> a = new HashMap<>(Map.of(0L, "10.0.0.1:10911", 1L, "10.0.0.2:10911"));
        HashMap<Long, String> b = new HashMap<>(Map.of(0L, "10.0.0.3:10911"));
        route.setBrokerDatas(new ArrayList<>(List.of(new BrokerData("c1", "broker-a", a),
            new BrokerData("c1", "broker-b", b))));
        route.setFilterServerTable(new HashMap<>());
        return route;
    }

    @Test
    void standardRouteKeepsRealBrokersWriteOnlyAndAddsTheVirtualBrokerReadOnly() {
        byte[] body = route().encode(JSONWriter.Feature.BrowserCompatible, JSONWriter.Feature.MapSortField);
        assertEquals(8, VirtualRoute.readableQueues(body));

        TopicRouteData read = TopicRouteData.decode(VirtualRoute.rewrite(body, VQ, RouteDialect.STANDARD),
            TopicRouteData.class);

        assertEquals(List.of("broker-a", "broker-b", "rmqgw-vq"),
            read.getBrokerDatas().stream().map(BrokerData::getBrokerName).toList());
        assertEquals("10.0.0.2:10911", read.getBrokerDatas().get(0).getBrokerAddrs().get(1L));
        assertEquals(Map.of(0L, "127.0.0.1:20100"), read.getBrokerDatas().get(2).getBrokerAddrs());
        assertEquals(List.of("broker-a 2 4/4", "broker-b 2 4/4", "rmqgw-vq 4 64/0"), read.getQueueDatas().stream()
            .map(q -> q.getBrokerName() + " " + q.getPerm() + " " + q.getReadQueueNums() + "/" + q.getWriteQueueNums())
            .toList());
        assertEquals(64, VirtualRoute.readableQueues(VirtualRoute.rewrite(body, VQ, RouteDialect.STANDARD)));
    }

    @Test
    void fastjsonDialectKeepsIntegerKeysUnquotedAndIsReadByFastjsonOne() {
        byte[] body = com.alibaba.fastjson.JSON.toJSONString(route()).getBytes(StandardCharsets.UTF_8);
        byte[] rewritten = VirtualRoute.rewrite(body, VQ, RouteDialect.FASTJSON);
        String text = new String(rewritten, StandardCharsets.UTF_8);

        assertTrue(text.contains("{0:\"127.0.0.1:20100\"}"), text);
        assertFalse(text.contains("\"0\""), text);
        TopicRouteData read = com.alibaba.fastjson.JSON.parseObject(text, TopicRouteData.class);
        assertEquals(3, read.getQueueDatas().size());
        assertEquals(4, read.getQueueDatas().get(2).getPerm());
        assertEquals(64, read.getQueueDatas().get(2).getReadQueueNums());
        assertEquals("127.0.0.1:20100", read.getBrokerDatas().get(2).getBrokerAddrs().get(0L));
    }

    @Test
    void withoutAVirtualBrokerNothingIsReadable() {
        byte[] body = route().encode(JSONWriter.Feature.BrowserCompatible, JSONWriter.Feature.MapSortField);
        byte[] rewritten = VirtualRoute.rewrite(body, null, RouteDialect.STANDARD);
        assertEquals(0, VirtualRoute.readableQueues(rewritten));
        assertEquals(2, TopicRouteData.decode(rewritten, TopicRouteData.class).getBrokerDatas().size());
    }

    @Test
    void refusesWhatIsNotARoute() {
        assertThrows(MalformedRouteBodyException.class,
            () -> VirtualRoute.rewrite("[1]".getBytes(StandardCharsets.UTF_8), VQ, RouteDialect.STANDARD));
        assertThrows(MalformedRouteBodyException.class,
            () -> VirtualRoute.rewrite("{\"queueDatas\":5}".getBytes(StandardCharsets.UTF_8), VQ, RouteDialect.STANDARD));
        assertThrows(IllegalArgumentException.class, () -> new VirtualRoute.VirtualBroker("__syslo__x", "c", "a:1", 1));
    }
}
