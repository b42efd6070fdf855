package io.rmqgw.gateway.fanout;

import io.rmqgw.routing.RouteDialect;
import java.nio.charset.StandardCharsets;

/**
 * The fan-out topic's route: one broker, {@link Fanout#BROKER_NAME}, at the gateway's own listener,
 * write-only (perm 2: producers send to it, consumers find nothing to read), in the JSON the client
 * asked for (fastjson's unquoted integer keys for old clients, as a name server writes them).
 */
final class FanoutRoute {

    static final int PERM_WRITE = 2;

    private FanoutRoute() {
    }

    static byte[] body(String advertisedAddress, int writeQueues, RouteDialect dialect) {
        boolean standard = dialect == RouteDialect.STANDARD;
        String json = "{\"brokerDatas\":[{\"brokerAddrs\":{" + (standard ? "\"0\"" : "0") + ":\"" + advertisedAddress
            + "\"},\"brokerName\":\"" + Fanout.BROKER_NAME + "\",\"cluster\":\"" + Fanout.CLUSTER_NAME + "\""
            + (standard ? ",\"enableActingMaster\":false" : "") + "}],"
            + "\"filterServerTable\":{},"
            + "\"queueDatas\":[{\"brokerName\":\"" + Fanout.BROKER_NAME + "\",\"perm\":" + PERM_WRITE
            + ",\"readQueueNums\":0," + (standard ? "\"topicSysFlag\"" : "\"topicSynFlag\"") + ":0,\"writeQueueNums\":"
            + writeQueues + "}]}";
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
