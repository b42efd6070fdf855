package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The gateway's virtual-queue broker and the route that leads to it, with a scripted name server and broker
 * (VirtualQueuesIT consumes through it from real clients against a real broker): what it answers itself,
 * what it refuses and why, and the opted-in group kept out of heartbeats to the real broker.
 */
@ExtendWith(LeakCheckExtension.class)
class VirtualBrokerTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOPIC = "TopicV";
    private static final String GROUP = "GID_virtual";

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker(() -> ScriptedPeer.broker(code -> false))
            .nameServer(brokers -> Routes.nameServer(Map.of(TOPIC, brokers, "TopicPlain", brokers)))
            .gateway(g -> g.requestTimeout(Duration.ofSeconds(5))
                .virtualQueues(new VirtualQueueConfig(GROUP, TOPIC, 3, null, null, null, null, null, null)))
            .start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    private int virtualPort() throws Exception {
        String address = gateway.gateway().virtualQueues().listener().get();
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    @Test
    @CoversCodes(RequestCode.GET_ROUTEINFO_BY_TOPIC)
    void theTopicsRouteKeepsTheRealBrokerWriteOnlyAndAddsTheVirtualBroker() throws Exception {
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request(TOPIC, 453).opaque(1).bytes());
            Wire.Frame answer = client.read();
            assertEquals(Wire.SUCCESS, answer.code(), answer.remark());
            JsonNode route = JSON.readTree(answer.body());
            JsonNode queues = route.get("queueDatas");
            assertEquals(2, queues.size(), route::toString);
            assertEquals("broker-a", queues.get(0).get("brokerName").asText());
            assertEquals(2, queues.get(0).get("perm").asInt(), "real queues: write only");
            assertEquals(VirtualQueues.BROKER_NAME, queues.get(1).get("brokerName").asText());
            assertEquals(4, queues.get(1).get("perm").asInt(), "virtual queues: read only");
            assertEquals(3 * 4, queues.get(1).get("readQueueNums").asInt(), "per-real-queue x the 4 real queues");
            assertEquals(0, queues.get(1).get("writeQueueNums").asInt());
            assertEquals(gateway.gateway().virtualQueues().listenerNow(),
                route.get("brokerDatas").get(1).get("brokerAddrs").get("0").asText());

            client.send(Routes.request("TopicPlain", 453).opaque(2).bytes());
            JsonNode plain = JSON.readTree(client.read().body());
            assertEquals(1, plain.get("queueDatas").size(), "a topic not listed is untouched");
            assertEquals(6, plain.get("queueDatas").get(0).get("perm").asInt());
        }
    }

    @Test
    @CoversCodes({RequestCode.HEART_BEAT, RequestCode.GET_CONSUMER_LIST_BY_GROUP, RequestCode.GET_MAX_OFFSET,
        RequestCode.GET_MIN_OFFSET, RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.PULL_MESSAGE,
        RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ})
    void theVirtualBrokerAnswersItselfAndRefusesWhatItDoesNotServeWithAReason() throws Exception {
        try (RawClient client = RawClient.connect(virtualPort())) {
            client.send(Wire.request(RequestCode.HEART_BEAT).opaque(1).body(heartbeat("10.0.0.9@c1", GROUP)).bytes());
            List<Wire.Frame> frames = client.readUntil(Wire.Frame::isResponse, RawClient.WAIT);
            assertEquals(Wire.SUCCESS, frames.get(frames.size() - 1).code());
            // a new member: the group is told to rebalance at once, as a broker tells it
            assertTrue(frames.stream().anyMatch(f -> !f.isResponse() && f.code() == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED
                && GROUP.equals(f.ext().get("consumerGroup"))), frames::toString);
            TestGateway.await(() -> gateway.gateway().virtualQueues().memberIds(GROUP).size() == 1,
                Duration.ofSeconds(5), "the client registered");

            client.send(Wire.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP).opaque(2).ext("consumerGroup", GROUP).bytes());
            Wire.Frame members = client.read();
            assertEquals(Wire.SUCCESS, members.code());
            assertEquals("[\"10.0.0.9@c1\"]", JSON.readTree(members.body()).get("consumerIdList").toString());

            client.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(3).ext("topic", TOPIC).ext("queueId", "5").bytes());
            Wire.Frame max = client.read();
            assertEquals(Wire.SUCCESS, max.code());
            assertEquals("0", max.ext().get("offset"), "nothing handed out yet");
            client.send(Wire.request(RequestCode.GET_MIN_OFFSET).opaque(4).ext("topic", TOPIC).ext("queueId", "5").bytes());
            assertEquals("0", client.read().ext().get("offset"));

            // another group bypasses (BypassTest): virtual queue 9 has no real queue behind it
            client.send(Wire.request(RequestCode.QUERY_CONSUMER_OFFSET).opaque(5).ext("consumerGroup", "GID_other")
                .ext("topic", TOPIC).ext("queueId", "9").bytes());
            Wire.Frame query = client.read();
            assertEquals(ResponseCode.QUERY_NOT_FOUND, query.code());

            // a topic not on virtual queues has nothing to pull here
            client.send(Wire.request(RequestCode.PULL_MESSAGE).opaque(6).ext("consumerGroup", "GID_other")
                .ext("topic", "TopicPlain").ext("queueId", "0").ext("queueOffset", "0").ext("maxMsgNums", "32")
                .ext("sysFlag", "2").ext("commitOffset", "0").ext("suspendTimeoutMillis", "1000").bytes());
            Wire.Frame refused = client.read();
            assertEquals(ResponseCode.NO_PERMISSION, refused.code());
            assertTrue(refused.remark().contains("GID_other"), refused.remark());

            client.send(Wire.request(RequestCode.LOCK_BATCH_MQ).opaque(7).body("{}").bytes());
            Wire.Frame lock = client.read();
            assertEquals(RemotingSysResponseCode.SYSTEM_ERROR, lock.code());
            assertTrue(lock.remark().contains("orderly"), lock.remark());

            client.send(Wire.request(RequestCode.SEND_MESSAGE_V2).opaque(8).bytes());
            assertEquals(RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED, client.read().code());
        }
        TestGateway.await(() -> gateway.gateway().virtualQueues().memberIds(GROUP).isEmpty(), Duration.ofSeconds(5),
            "a closed connection leaves the group");
    }

    private static byte[] pull(int opaque, int queue) {
        return Wire.request(RequestCode.PULL_MESSAGE).opaque(opaque).ext("consumerGroup", GROUP).ext("topic", TOPIC)
            .ext("queueId", Integer.toString(queue)).ext("queueOffset", "0").ext("maxMsgNums", "32").ext("sysFlag", "2")
            .ext("commitOffset", "0").ext("suspendTimeoutMillis", "15000").bytes();
    }

    private static byte[] queryOffset(int opaque, int queue) {
        return Wire.request(RequestCode.QUERY_CONSUMER_OFFSET).opaque(opaque).ext("consumerGroup", GROUP)
            .ext("topic", TOPIC).ext("queueId", Integer.toString(queue)).bytes();
    }

    private static Wire.Frame answerTo(RawClient client, int opaque) throws Exception {
        List<Wire.Frame> frames = client.readUntil(f -> f.isResponse() && f.opaque() == opaque, RawClient.WAIT);
        return frames.get(frames.size() - 1);
    }

    @Test
    @CoversCodes({RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.PULL_MESSAGE})
    void aQueueTakenByAnotherClientLeasesNothingToTheOneThatHadIt() throws Exception {
        try (RawClient a = RawClient.connect(virtualPort()); RawClient b = RawClient.connect(virtualPort())) {
            a.send(queryOffset(1, 0));
            assertEquals(Wire.SUCCESS, answerTo(a, 1).code());
            a.send(pull(2, 0)); // held: nothing to lease yet
            b.send(queryOffset(3, 0)); // a rebalance gave queue 0 to b
            assertEquals(Wire.SUCCESS, answerTo(b, 3).code());
            // a's held pull is answered at once: a dropped the queue and would throw messages away
            assertEquals(ResponseCode.PULL_NOT_FOUND, answerTo(a, 2).code());
            // and a pull from a that was in flight when the queue moved leases nothing either
            long start = System.nanoTime();
            a.send(pull(4, 0));
            assertEquals(ResponseCode.PULL_NOT_FOUND, answerTo(a, 4).code());
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(4).toNanos(), "answered, not held");
        }
    }

    /**
     * Two rebalances crossing (seen with the Go client, whose consumers start together): b starts on queue 0, then a's
     * start from an older view of the group makes a its owner, and a drops the queue again at once. b, refused, keeps
     * pulling; once a has been quiet there for a second, b's pulls count again.
     */
    @Test
    @CoversCodes({RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.PULL_MESSAGE})
    void aClientThatKeepsPullingAQueueALaterStarterLeftTakesItOver() throws Exception {
        try (RawClient a = RawClient.connect(virtualPort()); RawClient b = RawClient.connect(virtualPort())) {
            b.send(queryOffset(1, 0));
            assertEquals(Wire.SUCCESS, answerTo(b, 1).code());
            a.send(queryOffset(2, 0));
            assertEquals(Wire.SUCCESS, answerTo(a, 2).code());
            long start = System.nanoTime();
            int refused = 0;
            boolean held = false;
            for (int opaque = 10; opaque < 200 && !held; opaque++) {
                b.send(pull(opaque, 0));
                try {
                    Wire.Frame answer = b.read(Duration.ofMillis(500));
                    assertEquals(ResponseCode.PULL_NOT_FOUND, answer.code(), answer.remark());
                    refused++;
                    TimeUnit.MILLISECONDS.sleep(50);
                } catch (AssertionError noAnswerYet) {
                    held = true; // b owns the queue: its pull waits for messages
                }
            }
            assertTrue(held, "b never took the queue over");
            assertTrue(refused > 0, "refused at first: a was the owner");
            assertTrue(System.nanoTime() - start >= VirtualQueueOwners.CLAIM_AFTER_NANOS, "not before a was quiet a second");
            // a, the owner before, is refused now (b's pull is held, so a's claim cannot start over it)
            a.send(pull(300, 0));
            assertEquals(ResponseCode.PULL_NOT_FOUND, answerTo(a, 300).code());
        }
    }

    @Test
    @CoversCodes(RequestCode.PULL_MESSAGE)
    void aStoppingGatewayAnswersHeldPullsAtOnce() throws Exception {
        try (RawClient client = RawClient.connect(virtualPort())) {
            client.send(Wire.request(RequestCode.HEART_BEAT).opaque(1).body(heartbeat("10.0.0.9@c1", GROUP)).bytes());
            client.readUntil(Wire.Frame::isResponse, RawClient.WAIT);
            client.send(Wire.request(RequestCode.PULL_MESSAGE).opaque(2).ext("consumerGroup", GROUP)
                .ext("topic", TOPIC).ext("queueId", "0").ext("queueOffset", "0").ext("maxMsgNums", "32")
                .ext("sysFlag", "2").ext("commitOffset", "0").ext("suspendTimeoutMillis", "15000").bytes());
            // nothing to lease: the pull is held (up to 15 s) ...
            TimeUnit.MILLISECONDS.sleep(300);
            long start = System.nanoTime();
            Thread stopper = new Thread(() -> gateway.gateway().close(Duration.ofSeconds(10)));
            stopper.start();
            // ... until the stop answers it, with no message lost: the client pulls again elsewhere
            List<Wire.Frame> frames = client.readUntil(f -> f.isResponse() && f.opaque() == 2, RawClient.WAIT);
            Wire.Frame answer = frames.get(frames.size() - 1);
            // PULL_NOT_FOUND from the virtual queues' drain; SYSTEM_BUSY ("draining") if the pull was still being
            // read when the stop began: either way at once, and the client pulls again elsewhere
            assertTrue(answer.code() == ResponseCode.PULL_NOT_FOUND || answer.code() == ResponseCode.SYSTEM_BUSY,
                answer.code() + " " + answer.remark());
            stopper.join(10_000);
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(8).toNanos(),
                "the stop did not wait for the held pull nor for the gateway's own long polls");
        }
    }

    @Test
    @CoversCodes({RequestCode.HEART_BEAT, RequestCode.GET_CONSUMER_LIST_BY_GROUP})
    void theRealBrokerNeverSeesTheOptedInGroupsClients() throws Exception {
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(RequestCode.HEART_BEAT).opaque(1)
                .body(heartbeat("10.0.0.9@c1", GROUP, "GID_plain")).bytes());
            assertEquals(Wire.SUCCESS, client.read().code());
            Wire.Frame forwarded = broker.awaitFrame(f -> f.code() == RequestCode.HEART_BEAT
                && f.bodyText().contains("10.0.0.9@c1"), RawClient.WAIT).frame();
            JsonNode consumers = JSON.readTree(forwarded.body()).get("consumerDataSet");
            assertEquals(1, consumers.size(), forwarded.bodyText());
            assertEquals("GID_plain", consumers.get(0).get("groupName").asText());

            client.send(Wire.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP).opaque(2).ext("consumerGroup", GROUP).bytes());
            Wire.Frame members = client.read();
            assertEquals(Wire.SUCCESS, members.code());
            assertEquals("[]", JSON.readTree(members.body()).get("consumerIdList").toString(),
                "the gateway's own list: no client registered on the virtual broker");
            assertTrue(broker.drainReceived().stream().noneMatch(r -> r.frame().code() == RequestCode.GET_CONSUMER_LIST_BY_GROUP),
                "answered by the gateway, never asked of the broker");
        }
    }

    private static String heartbeat(String clientId, String... groups) {
        StringBuilder consumers = new StringBuilder();
        for (String g : groups) {
            if (consumers.length() > 0) {
                consumers.append(',');
            }
            consumers.append("{\"groupName\":\"").append(g).append("\",\"consumeType\":\"CONSUME_PASSIVELY\",")
                .append("\"messageModel\":\"CLUSTERING\",\"consumeFromWhere\":\"CONSUME_FROM_LAST_OFFSET\",")
                .append("\"subscriptionDataSet\":[{\"topic\":\"").append(TOPIC).append("\",\"subString\":\"*\",")
                .append("\"tagsSet\":[],\"codeSet\":[],\"subVersion\":1,\"expressionType\":\"TAG\"}],\"unitMode\":false}");
        }
        return "{\"clientID\":\"" + clientId + "\",\"producerDataSet\":[],\"consumerDataSet\":[" + consumers + "]}";
    }
}
