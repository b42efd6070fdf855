package io.rmqgw.routing;

import static io.rmqgw.routing.RouteParts.queue;

import com.alibaba.fastjson2.JSONWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes {@link RouteBodyFuzzTest}'s seeds: route and cluster bodies serialized as name servers do
 * (5.4.0: fastjson2, legacy {@code encode()} with unquoted integer keys and the standard form for
 * clients >= 401; 4.9.x: fastjson 1, both forms). Gated:
 * {@code mvn -pl routing -am test -Dtest=RouteSeedsWriter -Drmqgw.fuzz.writeSeeds=true -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class RouteSeedsWriter {

    @Test
    @EnabledIfSystemProperty(named = "rmqgw.fuzz.writeSeeds", matches = "true")
    void write() throws Exception {
        Path dir = Files.createDirectories(Paths.get("src/test/resources/io/rmqgw/routing/RouteBodyFuzzTestInputs"));
        Map<String, Object> bodies = Map.of("route", route(), "cluster-info", clusterInfo());
        for (Map.Entry<String, Object> e : bodies.entrySet()) {
            RemotingSerializable body = (RemotingSerializable) e.getValue();
            Files.write(dir.resolve(e.getKey() + "-5.4.0-legacy"), body.encode());
            Files.write(dir.resolve(e.getKey() + "-5.4.0-standard"),
                body.encode(JSONWriter.Feature.BrowserCompatible, JSONWriter.Feature.MapSortField));
            Files.write(dir.resolve(e.getKey() + "-4.9.x-legacy"),
                com.alibaba.fastjson.JSON.toJSONString(body).getBytes(StandardCharsets.UTF_8));
            Files.write(dir.resolve(e.getKey() + "-4.9.x-standard"), com.alibaba.fastjson.JSON.toJSONString(body,
                com.alibaba.fastjson.serializer.SerializerFeature.BrowserCompatible,
                com.alibaba.fastjson.serializer.SerializerFeature.QuoteFieldNames,
                com.alibaba.fastjson.serializer.SerializerFeature.SkipTransientField,
                com.alibaba.fastjson.serializer.SerializerFeature.MapSortField).getBytes(StandardCharsets.UTF_8));
        }
    }

    private static TopicRouteData route() {
        TopicRouteData route = new TopicRouteData();
        route.setOrderTopicConf("broker-a:4;broker-b:4");
        List<QueueData> queues = new ArrayList<>();
        queues.add(queue("broker-b", 4, 4, 6));
        queues.add(queue("broker-a", 8, 8, 4));
        route.setQueueDatas(queues);
        List<BrokerData> brokers = new ArrayList<>();
        brokers.add(broker("DefaultCluster", "broker-b", Map.of(0L, "10.0.0.3:10911")));
        brokers.add(broker("DefaultCluster", "broker-a", Map.of(0L, "10.0.0.1:10911", 1L, "10.0.0.2:10911")));
        route.setBrokerDatas(brokers);
        HashMap<String, List<String>> filters = new HashMap<>();
        filters.put("10.0.0.1:10911", List.of("10.0.0.1:30000"));
        route.setFilterServerTable(filters);
        return route;
    }

    private static ClusterInfo clusterInfo() {
        ClusterInfo info = new ClusterInfo();
        HashMap<String, BrokerData> byName = new HashMap<>();
        byName.put("broker-a", broker("DefaultCluster", "broker-a", Map.of(0L, "10.0.0.1:10911", 1L, "10.0.0.2:10911")));
        byName.put("broker-c", broker("OtherCluster", "broker-c", Map.of(0L, "10.0.1.1:10911")));
        info.setBrokerAddrTable(byName);
        HashMap<String, Set<String>> clusters = new HashMap<>();
        clusters.put("DefaultCluster", Set.of("broker-a", "broker-b"));
        clusters.put("OtherCluster", Set.of("broker-c"));
        info.setClusterAddrTable(clusters);
        return info;
    }


    private static BrokerData broker(String cluster, String name, Map<Long, String> addresses) {
        return new BrokerData(cluster, name, new HashMap<>(addresses));
    }
}
