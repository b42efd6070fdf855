package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Groups that are not served on a virtual-queue topic bypass on the virtual broker: their virtual queue i is the
 * topic's i-th real queue (broker-a's 4, then broker-b's 4, scripted), each request goes on to that queue's broker
 * with the real queue id, and the answer comes back with the virtual one. VirtualQueuesIT's bypass test runs real
 * clients (concurrent, orderly, broadcasting) through it against a real broker.
 */
@ExtendWith(LeakCheckExtension.class)
class BypassTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOPIC = Records.TOPIC;
    private static final String SERVED = "GID_served";
    private static final String OTHER = "GID_other";
    /** A pull from this offset is held by the scripted brokers and never answered. */
    private static final String HELD_OFFSET = "999";

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer brokerA;
    private ScriptedPeer brokerB;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options()
            .broker("broker-a", ScriptedPeer.answering(request -> answer("broker-a", request)))
            .broker("broker-b", ScriptedPeer.answering(request -> answer("broker-b", request)))
            .noClusterInfo().nameServer(brokers -> Routes.nameServer(Map.of(TOPIC, brokers)))
            .gateway(g -> g.requestTimeout(Duration.ofSeconds(5))
                .virtualQueues(new VirtualQueueConfig(SERVED, TOPIC, 2, null, null, null, null, null, null)))
            .start(resources);
        brokerA = cluster.broker("broker-a");
        brokerB = cluster.broker("broker-b");
        gateway = cluster.gateway();
    }

    /**
     * The scripted broker: a pull gets the record at the asked offset of the asked queue (with a slave suggested; from
     * {@link #HELD_OFFSET} no answer), a lock locks every queue asked, everything else SUCCESS with the broker's name in the remark.
     */
    private static RemotingCommand answer(String broker, RemotingCommand request) {
        Map<String, String> ext = request.getExtFields();
        RemotingCommand response = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, broker + " "
            + request.getCode());
        if (request.getCode() == RequestCode.PULL_MESSAGE && HELD_OFFSET.equals(ext.get("queueOffset"))) {
            return null; // nothing new: the broker holds the long poll (past the test's end)
        } else if (request.getCode() == RequestCode.PULL_MESSAGE) {
            int queue = Integer.parseInt(ext.get("queueId"));
            long offset = Long.parseLong(ext.get("queueOffset"));
            response.setBody(Records.record(new RealQueue(broker, queue), offset));
            response.addExtField("nextBeginOffset", Long.toString(offset + 1));
            response.addExtField("minOffset", "0");
            response.addExtField("maxOffset", "100");
            response.addExtField("suggestWhichBrokerId", "1");
        } else if (request.getCode() == RequestCode.LOCK_BATCH_MQ) {
            try {
                JsonNode body = JSON.readTree(request.getBody());
                ObjectNode locked = JSON.createObjectNode();
                locked.set("lockOKMQSet", body.get("mqSet"));
                response.setBody(JSON.writeValueAsBytes(locked));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        } else if (request.getCode() == RequestCode.VIEW_MESSAGE_BY_ID) {
            // broker-b stores the message at the commit-log offset of broker-b's queue 1, offset 7; broker-a another
            long offset = Long.parseLong(ext.get("offset"));
            RealQueue stored = new RealQueue("broker-b", 1);
            if (!broker.equals(stored.brokerName()) || offset != Records.commitLogOffset(stored, 7)) {
                response.setBody(Records.record(new RealQueue(broker, 3), 2)); // another message at that offset
            } else {
                response.setBody(Records.record(stored, 7));
            }
        } else if (request.getCode() == RequestCode.QUERY_CONSUMER_OFFSET) {
            response.addExtField("offset", "4" + ext.get("queueId")); // 40 + the real queue id
        }
        return response;
    }

    private int virtualPort() throws Exception {
        String address = gateway.gateway().virtualQueues().listener().get();
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    private static Wire.Frame answerTo(RawClient client, int opaque) throws Exception {
        List<Wire.Frame> frames = client.readUntil(f -> f.isResponse() && f.opaque() == opaque, RawClient.WAIT);
        return frames.get(frames.size() - 1);
    }

    private static Wire.Builder pull(int opaque, String group, int queue, int sysFlag) {
        return Wire.request(RequestCode.PULL_MESSAGE).opaque(opaque).ext("consumerGroup", group).ext("topic", TOPIC)
            .ext("queueId", Integer.toString(queue)).ext("queueOffset", "7").ext("maxMsgNums", "32")
            .ext("sysFlag", Integer.toString(sysFlag)).ext("commitOffset", "0").ext("suspendTimeoutMillis", "1000");
    }

    private double bypassed(int code) {
        var counter = gateway.metrics().registry().find("rmqgw.vq.bypass.requests")
            .tag("code", GatewayMetrics.requestCodeLabel(code)).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    @CoversCodes(RequestCode.PULL_MESSAGE)
    void aPullGoesToTheRealQueueAndItsRecordsSayTheVirtualOne() throws Exception {
        try (RawClient client = RawClient.connect(virtualPort())) {
            client.send(pull(1, OTHER, 5, 2).bytes()); // virtual queue 5: broker-b's queue 1
            Wire.Frame answer = answerTo(client, 1);
            assertEquals(Wire.SUCCESS, answer.code(), answer.remark());
            Wire.Frame asked = brokerB.awaitFrame(f -> f.code() == RequestCode.PULL_MESSAGE, RawClient.WAIT).frame();
            assertEquals("1", asked.ext().get("queueId"));
            assertEquals(OTHER, asked.ext().get("consumerGroup"));
            assertEquals("7", asked.ext().get("queueOffset"), "real offsets");
            assertEquals("8", answer.ext().get("nextBeginOffset"));
            assertEquals("0", answer.ext().get("suggestWhichBrokerId"), "the virtual broker has no slave");
            ByteBuf records = Unpooled.wrappedBuffer(answer.body());
            assertEquals(5, StoredRecords.queueId(records, 0), "QUEUEID says the virtual queue");
            assertEquals(7, StoredRecords.queueOffset(records, 0), "QUEUEOFFSET stays the real one");
            assertTrue(new String(answer.body(), StandardCharsets.ISO_8859_1).contains("broker-b#1@7"),
                "the record pulled from broker-b's queue 1");
            assertEquals(1.0, bypassed(RequestCode.PULL_MESSAGE));
        }
    }

    @Test
    @CoversCodes(RequestCode.PULL_MESSAGE)
    void aVirtualQueueWithNoRealQueueBehindItIsEmpty() throws Exception {
        // 2 x 8 real queues = 16 virtual queues (8 of them over the real ones, for bypass groups)
        try (RawClient client = RawClient.connect(virtualPort())) {
            long start = System.nanoTime();
            client.send(pull(1, OTHER, 9, 0).bytes()); // no suspend flag: answered at once
            Wire.Frame empty = answerTo(client, 1);
            assertEquals(ResponseCode.PULL_NOT_FOUND, empty.code(), empty.remark());
            assertEquals("7", empty.ext().get("nextBeginOffset"), "the client's position kept");
            client.send(pull(2, OTHER, 12, 2).bytes()); // suspend: held as a broker holds it (1 s asked)
            Wire.Frame held = answerTo(client, 2);
            assertEquals(ResponseCode.PULL_NOT_FOUND, held.code());
            assertTrue(System.nanoTime() - start >= Duration.ofMillis(900).toNanos(), "held, not a busy loop");
            assertTrue(brokerA.drainReceived().stream().noneMatch(r -> r.frame().code() == RequestCode.PULL_MESSAGE));
            assertTrue(brokerB.drainReceived().stream().noneMatch(r -> r.frame().code() == RequestCode.PULL_MESSAGE));
        }
    }

    @Test
    @CoversCodes(RequestCode.PULL_MESSAGE)
    void aStoppingGatewayAnswersPullsHeldAtBrokersAtOnce() throws Exception {
        try (RawClient client = RawClient.connect(virtualPort())) {
            client.send(pull(1, OTHER, 1, 2).ext("queueOffset", HELD_OFFSET).ext("suspendTimeoutMillis", "15000").bytes());
            brokerA.awaitFrame(f -> f.code() == RequestCode.PULL_MESSAGE, RawClient.WAIT);
            long start = System.nanoTime();
            Thread stopper = new Thread(() -> gateway.gateway().close(Duration.ofSeconds(10)));
            stopper.start();
            Wire.Frame answer = answerTo(client, 1);
            assertEquals(ResponseCode.SYSTEM_BUSY, answer.code(), answer.remark());
            stopper.join(10_000);
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(8).toNanos(),
                "the stop waited neither for the broker's long poll nor for its answer");
        }
    }

    @Test
    @CoversCodes({RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET, RequestCode.HEART_BEAT,
        RequestCode.GET_MAX_OFFSET, RequestCode.GET_MIN_OFFSET, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
        RequestCode.GET_EARLIEST_MSG_STORETIME})
    void offsetsAreTheRealQueuesOwn() throws Exception {
        try (RawClient client = RawClient.connect(virtualPort())) {
            client.send(Wire.request(RequestCode.QUERY_CONSUMER_OFFSET).opaque(1).ext("consumerGroup", OTHER)
                .ext("topic", TOPIC).ext("queueId", "2").bytes());
            Wire.Frame query = answerTo(client, 1);
            assertEquals(Wire.SUCCESS, query.code(), query.remark());
            assertEquals("42", query.ext().get("offset"), "broker-a's queue 2 answered");
            client.send(Wire.request(RequestCode.QUERY_CONSUMER_OFFSET).opaque(2).ext("consumerGroup", OTHER)
                .ext("topic", TOPIC).ext("queueId", "8").bytes());
            assertEquals(ResponseCode.QUERY_NOT_FOUND, answerTo(client, 2).code(), "no real queue behind 8");

            client.send(Wire.request(RequestCode.UPDATE_CONSUMER_OFFSET).opaque(3).oneway().ext("consumerGroup", OTHER)
                .ext("topic", TOPIC).ext("queueId", "6").ext("commitOffset", "17").bytes());
            Wire.Frame commit = brokerB.awaitFrame(f -> f.code() == RequestCode.UPDATE_CONSUMER_OFFSET, RawClient.WAIT)
                .frame();
            assertEquals("2", commit.ext().get("queueId"));
            assertEquals("17", commit.ext().get("commitOffset"));
            assertTrue(commit.isOneway(), "a oneway commit goes on as one");

            // GET_MAX_OFFSET names no group: before a bypass group registered on the connection, the served answer
            client.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(4).ext("topic", TOPIC).ext("queueId", "1").bytes());
            assertEquals("0", answerTo(client, 4).ext().get("offset"));
            client.send(Wire.request(RequestCode.HEART_BEAT).opaque(5).body(heartbeat("10.0.0.9@c1", OTHER)).bytes());
            assertEquals(Wire.SUCCESS, answerTo(client, 5).code());
            for (int[] codeAndOpaque : new int[][] {{RequestCode.GET_MAX_OFFSET, 6}, {RequestCode.GET_MIN_OFFSET, 7},
                {RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, 8}, {RequestCode.GET_EARLIEST_MSG_STORETIME, 9}}) {
                client.send(Wire.request(codeAndOpaque[0]).opaque(codeAndOpaque[1]).ext("topic", TOPIC)
                    .ext("queueId", "5").ext("timestamp", "1").bytes());
                Wire.Frame answer = answerTo(client, codeAndOpaque[1]);
                assertEquals("broker-b " + codeAndOpaque[0], answer.remark(), "sent on to broker-b");
                Wire.Frame asked = brokerB.awaitFrame(f -> f.code() == codeAndOpaque[0], RawClient.WAIT).frame();
                assertEquals("1", asked.ext().get("queueId"));
            }
            client.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(10).ext("topic", TOPIC).ext("queueId", "11")
                .bytes());
            Wire.Frame past = answerTo(client, 10);
            assertEquals(Wire.SUCCESS, past.code());
            assertEquals("0", past.ext().get("offset"), "an empty queue");
        }
    }

    @Test
    @CoversCodes({RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ})
    void anOrderlyGroupLocksTheRealQueues() throws Exception {
        try (RawClient client = RawClient.connect(virtualPort())) {
            client.send(Wire.request(RequestCode.LOCK_BATCH_MQ).opaque(1).body(lockBody(OTHER, 1, 6, 10)).bytes());
            Wire.Frame answer = answerTo(client, 1);
            assertEquals(Wire.SUCCESS, answer.code(), answer.remark());
            TreeSet<Integer> locked = new TreeSet<>();
            for (JsonNode mq : JSON.readTree(answer.body()).get("lockOKMQSet")) {
                assertEquals(VirtualQueues.BROKER_NAME, mq.get("brokerName").asText());
                assertEquals(TOPIC, mq.get("topic").asText());
                locked.add(mq.get("queueId").asInt());
            }
            assertEquals(new TreeSet<>(List.of(1, 6, 10)), locked, "10 has no real queue: locked, it stays empty");
            JsonNode toA = JSON.readTree(brokerA.awaitFrame(f -> f.code() == RequestCode.LOCK_BATCH_MQ, RawClient.WAIT)
                .frame().body());
            assertEquals("[{\"topic\":\"" + TOPIC + "\",\"brokerName\":\"broker-a\",\"queueId\":1}]",
                toA.get("mqSet").toString());
            assertEquals("10.0.0.9@c1", toA.get("clientId").asText(), "the client holds the lock");
            JsonNode toB = JSON.readTree(brokerB.awaitFrame(f -> f.code() == RequestCode.LOCK_BATCH_MQ, RawClient.WAIT)
                .frame().body());
            assertEquals(2, toB.get("mqSet").get(0).get("queueId").asInt());

            client.send(Wire.request(RequestCode.UNLOCK_BATCH_MQ).opaque(2).body(lockBody(OTHER, 6)).bytes());
            assertEquals(Wire.SUCCESS, answerTo(client, 2).code());
            JsonNode unlock = JSON.readTree(brokerB.awaitFrame(f -> f.code() == RequestCode.UNLOCK_BATCH_MQ,
                RawClient.WAIT).frame().body());
            assertEquals(2, unlock.get("mqSet").get(0).get("queueId").asInt());

            // the served group is still refused: its messages go to many consumers
            client.send(Wire.request(RequestCode.LOCK_BATCH_MQ).opaque(3).body(lockBody(SERVED, 1)).bytes());
            Wire.Frame refused = answerTo(client, 3);
            assertEquals(ResponseCode.SYSTEM_ERROR, refused.code());
            assertTrue(refused.remark().contains("orderly"), refused.remark());
        }
    }

    @Test
    @CoversCodes({RequestCode.GET_CONSUMER_LIST_BY_GROUP, RequestCode.CONSUMER_SEND_MSG_BACK})
    void membersComeFromTheBrokersAndASendBackGoesToTheBrokerStoringTheMessage() throws Exception {
        try (RawClient client = RawClient.connect(virtualPort())) {
            client.send(Wire.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP).opaque(1).ext("consumerGroup", OTHER)
                .bytes());
            Wire.Frame members = answerTo(client, 1);
            assertEquals("broker-a " + RequestCode.GET_CONSUMER_LIST_BY_GROUP, members.remark(),
                "the first broker of the topic answers");
            // two brokers behind the topic: each is asked which stores the message at that commit-log offset
            long stored = Records.commitLogOffset(new RealQueue("broker-b", 1), 7);
            client.send(Wire.request(RequestCode.CONSUMER_SEND_MSG_BACK).opaque(2).ext("group", OTHER)
                .ext("originTopic", TOPIC).ext("offset", Long.toString(stored)).ext("delayLevel", "0").bytes());
            Wire.Frame sendBack = answerTo(client, 2);
            assertEquals(Wire.SUCCESS, sendBack.code(), sendBack.remark());
            assertEquals("broker-b " + RequestCode.CONSUMER_SEND_MSG_BACK, sendBack.remark());
            Wire.Frame taken = brokerB.awaitFrame(f -> f.code() == RequestCode.CONSUMER_SEND_MSG_BACK, RawClient.WAIT)
                .frame();
            assertEquals(Long.toString(stored), taken.ext().get("offset"));
            assertTrue(brokerA.drainReceived().stream().noneMatch(f -> f.frame().code()
                == RequestCode.CONSUMER_SEND_MSG_BACK), "broker-a's record at that offset is another message");
            // an offset where no broker stores a message of the topic: refused, the client resends it itself
            client.send(Wire.request(RequestCode.CONSUMER_SEND_MSG_BACK).opaque(3).ext("group", OTHER)
                .ext("originTopic", "other-topic").ext("offset", Long.toString(stored)).bytes());
            Wire.Frame refused = answerTo(client, 3);
            assertEquals(ResponseCode.NO_PERMISSION, refused.code(), "a topic not on virtual queues: " + refused.remark());
            client.send(Wire.request(RequestCode.CONSUMER_SEND_MSG_BACK).opaque(4).ext("group", OTHER)
                .ext("originTopic", TOPIC).ext("offset", "5").bytes());
            Wire.Frame none = answerTo(client, 4);
            assertEquals(ResponseCode.SYSTEM_ERROR, none.code());
            assertTrue(none.remark().contains("retry topic"), none.remark());
        }
        assertEquals(2.0, bypassed(RequestCode.CONSUMER_SEND_MSG_BACK), "the refused other-topic one did not bypass");
    }

    @Test
    void aRecordIsTheMessageASendBackNamesByTopicOffsetAndId() {
        RealQueue q = new RealQueue("broker-a", 2);
        ByteBuf record = Unpooled.wrappedBuffer(Records.record(q, 4));
        long offset = Records.commitLogOffset(q, 4);
        assertTrue(BypassSendBacks.isTheMessage(record, TOPIC, offset, null), "no id sent: topic and offset decide");
        assertFalse(BypassSendBacks.isTheMessage(record, TOPIC, offset + 1, null));
        assertFalse(BypassSendBacks.isTheMessage(record, "other", offset, null));
        assertFalse(BypassSendBacks.isTheMessage(Unpooled.wrappedBuffer(new byte[8]), TOPIC, offset, null));
    }

    private static String lockBody(String group, int... queues) throws Exception {
        ObjectNode body = JSON.createObjectNode();
        body.put("consumerGroup", group);
        body.put("clientId", "10.0.0.9@c1");
        body.put("onlyThisBroker", false);
        var mqs = body.putArray("mqSet");
        for (int q : queues) {
            mqs.addObject().put("topic", TOPIC).put("brokerName", VirtualQueues.BROKER_NAME).put("queueId", q);
        }
        return JSON.writeValueAsString(body);
    }

    private static String heartbeat(String clientId, String group) {
        return "{\"clientID\":\"" + clientId + "\",\"producerDataSet\":[],\"consumerDataSet\":[{\"groupName\":\"" + group
            + "\",\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\",\"consumeFromWhere\":"
            + "\"CONSUME_FROM_LAST_OFFSET\",\"subscriptionDataSet\":[{\"topic\":\"" + TOPIC + "\",\"subString\":\"*\","
            + "\"tagsSet\":[],\"codeSet\":[],\"subVersion\":1,\"expressionType\":\"TAG\"}],\"unitMode\":false}]}";
    }
}
