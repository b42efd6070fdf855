package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Where the gateway starts consuming a real queue its group never committed on: where the group's clients ask
 * to start (consumeFromWhere in their heartbeats), as they would have started on the broker themselves. A
 * scripted broker knows no commit for the group and names a different offset for each start point.
 */
@ExtendWith(LeakCheckExtension.class)
class VirtualStartPointTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOPIC = "TopicV";
    private static final String GROUP = "GID_virtual";
    private static final Map<Integer, String> OFFSETS = Map.of(
        RequestCode.GET_MIN_OFFSET, "7", RequestCode.GET_MAX_OFFSET, "99", RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, "42");

    @RegisterExtension
    final Closer resources = Closer.eachTest();

    @ParameterizedTest
    @CsvSource({"CONSUME_FROM_FIRST_OFFSET, 7", "CONSUME_FROM_LAST_OFFSET, 99", "CONSUME_FROM_TIMESTAMP, 42",
        "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST, 99"})
    void aGroupWithoutCommitsStartsWhereItsClientsAsk(String consumeFromWhere, long expected) throws Exception {
        AtomicReference<String> gatewayHeartbeat = new AtomicReference<>("");
        ScriptedCluster cluster = ScriptedCluster.options()
            .broker(ScriptedPeer.answering(r -> answer(r, gatewayHeartbeat)))
            .nameServer(brokers -> Routes.nameServer(Map.of(TOPIC, brokers)))
            .gateway(g -> g.requestTimeout(Duration.ofSeconds(5)).virtualQueues(VirtualQueueConfig.of(GROUP, TOPIC)))
            .start(resources);
        ScriptedPeer broker = cluster.broker();
        TestGateway gateway = cluster.gateway();
        try (RawClient client = RawClient.connect(virtualPort(gateway))) {
            client.send(Wire.request(RequestCode.HEART_BEAT).opaque(1).body(heartbeat(consumeFromWhere)).bytes());
            List<Wire.Frame> frames = client.readUntil(Wire.Frame::isResponse, RawClient.WAIT);
            assertEquals(Wire.SUCCESS, frames.get(frames.size() - 1).code());

            ScriptedPeer.Received fetch = broker.awaitFrame(f -> f.code() == RequestCode.PULL_MESSAGE, RawClient.WAIT);
            assertNotNull(fetch, "the gateway never fetched");
            assertEquals(Long.toString(expected), fetch.frame().ext().get("queueOffset"), fetch.frame()::toString);
            String ownHeartbeat = gatewayHeartbeat.get();
            String startAs = expected == 99 ? "CONSUME_FROM_LAST_OFFSET" : consumeFromWhere;
            assertTrue(ownHeartbeat.contains("\"consumeFromWhere\":\"" + startAs + "\""),
                "the gateway's own heartbeat says where it starts: " + ownHeartbeat);
        }
    }

    /** No commit for the group, an offset for each start point, the gateway alone in the group; pulls held. */
    private static RemotingCommand answer(RemotingCommand request, AtomicReference<String> gatewayHeartbeat) {
        int code = request.getCode();
        RemotingCommand response;
        switch (code) {
            case RequestCode.PULL_MESSAGE -> {
                return null;
            }
            case RequestCode.HEART_BEAT -> {
                gatewayHeartbeat.set(new String(request.getBody(), StandardCharsets.UTF_8));
                response = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
            }
            case RequestCode.GET_CONSUMER_LIST_BY_GROUP -> {
                response = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
                String id = clientId(gatewayHeartbeat.get());
                response.setBody(("{\"consumerIdList\":[" + (id == null ? "" : "\"" + id + "\"") + "]}")
                    .getBytes(StandardCharsets.UTF_8));
            }
            case RequestCode.QUERY_CONSUMER_OFFSET ->
                response = RemotingCommand.createResponseCommand(ResponseCode.QUERY_NOT_FOUND, "Not found");
            default -> {
                response = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
                String offset = OFFSETS.get(code);
                if (offset != null) {
                    response.addExtField("offset", offset);
                }
            }
        }
        return response;
    }

    private static String clientId(String heartbeat) {
        try {
            return heartbeat.isEmpty() ? null : JSON.readTree(heartbeat).path("clientID").asText();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int virtualPort(TestGateway gateway) throws Exception {
        String address = gateway.gateway().virtualQueues().listener().get();
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    private static String heartbeat(String consumeFromWhere) {
        return "{\"clientID\":\"10.0.0.9@c1\",\"producerDataSet\":[],\"consumerDataSet\":[{\"groupName\":\"" + GROUP
            + "\",\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\",\"consumeFromWhere\":\""
            + consumeFromWhere + "\",\"subscriptionDataSet\":[{\"topic\":\"" + TOPIC + "\",\"subString\":\"*\","
            + "\"tagsSet\":[],\"codeSet\":[],\"subVersion\":1,\"expressionType\":\"TAG\"}],\"unitMode\":false}]}";
    }
}
