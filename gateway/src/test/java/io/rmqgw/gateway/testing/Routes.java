package io.rmqgw.gateway.testing;

import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.util.LinkedHashMap;
import java.util.Map;

/** TopicRouteData bodies as a name server writes them, in both JSON dialects, and a scripted name server serving them. */
public final class Routes {

    public static final int GET_ROUTEINFO_BY_TOPIC = 105;
    public static final int TOPIC_NOT_EXIST = 17;

    private Routes() {
    }

    /**
     * A TopicRouteData body naming {@code brokers} (broker name to master address); {@code fastjson}
     * writes the brokerAddrs keys unquoted, as fastjson does for old clients.
     */
    public static String body(Map<String, String> brokers, boolean fastjson) {
        StringBuilder datas = new StringBuilder();
        StringBuilder queues = new StringBuilder();
        for (Map.Entry<String, String> b : brokers.entrySet()) {
            if (datas.length() > 0) {
                datas.append(',');
                queues.append(',');
            }
            datas.append("{\"brokerAddrs\":{").append(fastjson ? "0" : "\"0\"").append(":\"").append(b.getValue())
                .append("\"},\"brokerName\":\"").append(b.getKey())
                .append("\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}");
            queues.append("{\"brokerName\":\"").append(b.getKey())
                .append("\",\"perm\":6,\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}");
        }
        return "{\"brokerDatas\":[" + datas + "],\"filterServerTable\":{},\"queueDatas\":[" + queues + "]}";
    }

    public static String body(String brokerName, String address, boolean fastjson) {
        return body(Map.of(brokerName, address), fastjson);
    }

    /** Whether a name server answers this route request in fastjson's dialect (old client, no acceptStandardJsonOnly). */
    public static boolean wantsFastjson(Wire.Frame request) {
        return request.command().getVersion() < 401
            && !Boolean.parseBoolean(request.ext().get("acceptStandardJsonOnly"));
    }

    /**
     * A name server script: route requests for a topic in {@code topics} (topic to brokers) are
     * answered with that route in the dialect the request asks for; unknown topics with
     * TOPIC_NOT_EXIST; everything else with SUCCESS.
     */
    public static ScriptedPeer.Script nameServer(Map<String, Map<String, String>> topics) {
        Map<String, Map<String, String>> copy = new LinkedHashMap<>(topics);
        return (c, f) -> {
            if (f.isResponse() || f.isOneway()) {
                return;
            }
            if (f.code() != GET_ROUTEINFO_BY_TOPIC) {
                c.send(Wire.response(Wire.SUCCESS, f.opaque()).bytes());
                return;
            }
            Map<String, String> brokers = copy.get(f.ext().get("topic"));
            if (brokers == null) {
                c.send(Wire.response(TOPIC_NOT_EXIST, f.opaque()).remark("No topic route info in name server for the topic: "
                    + f.ext().get("topic")).bytes());
                return;
            }
            c.send(Wire.response(Wire.SUCCESS, f.opaque()).body(body(brokers, wantsFastjson(f))).bytes());
        };
    }

    /** A route request as a client of {@code version} sends it. */
    public static Wire.Builder request(String topic, int version) {
        return Wire.request(GET_ROUTEINFO_BY_TOPIC).version(version).ext("topic", topic);
    }
}
