package io.rmqgw.gateway.broker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.rmqgw.gateway.testing.CoversCodes;
import io.rmqgw.gateway.testing.Records;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageId;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** A broker names itself in offsetMsgIds and store hosts; through the gateway they name the gateway's port for it. */
class MessageIdRewriteTest {

    private static final int SEND_MESSAGE_V2 = RequestCode.SEND_MESSAGE_V2;
    private static final int SEND_BATCH_MESSAGE = RequestCode.SEND_BATCH_MESSAGE;
    private static final long OFFSET = 0x0000_0012_3456_789AL;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private ScriptedPeer namesrv;
    private TestGateway gateway;
    /** The next answer the scripted broker sends, with the request's opaque. */
    private final AtomicReference<Wire.Builder> answer = new AtomicReference<>();

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker((c, f) -> {
            Wire.Builder a = answer.get();
            if (a != null && !f.isResponse() && !f.isOneway()) {
                c.send(a.opaque(f.opaque()).bytes());
            }
        }).start(resources);
        broker = cluster.broker();
        namesrv = cluster.namesrv();
        gateway = cluster.gateway();
    }

    private InetSocketAddress brokerAddress() {
        return new InetSocketAddress("127.0.0.1", broker.port());
    }

    private InetSocketAddress gatewayAddress() {
        return new InetSocketAddress("127.0.0.1", gateway.brokerPort(broker.address()));
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    @CoversCodes(RequestCode.SEND_MESSAGE_V2)
    void sendAnswerMsgIdNamesTheGatewayWithTheSameCommitLogOffset(SerializeType brokerEncoding) throws Exception {
        String realId = MessageDecoder.createMessageId(brokerAddress(), OFFSET);
        answer.set(Wire.response(Wire.SUCCESS, 0).type(brokerEncoding)
            .ext("msgId", realId).ext("queueId", "1").ext("queueOffset", "42")
            .ext("MSG_REGION", "DefaultRegion").ext("TRACE_ON", "true"));

        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            byte[] send = Wire.request(SEND_MESSAGE_V2).opaque(310).type(SerializeType.ROCKETMQ)
                .ext("a", "pg").ext("b", "TopicA").ext("c", "TBW102").ext("d", "4").ext("e", "1").ext("f", "0")
                .ext("g", "1700000000000").ext("h", "0").ext("i", "UNIQ_KEY\u0001AC110001\u0002")
                .body("hello").bytes();
            client.send(send);
            assertArrayEquals(send, broker.awaitFrame(RawClient.WAIT).frame().bytes(), "the send reaches the broker unchanged");

            Wire.Frame got = client.read();
            assertEquals(310, got.opaque());
            assertEquals(Wire.SUCCESS, got.code());
            assertEquals(SerializeType.ROCKETMQ, got.serializeType(), "in the encoding the client spoke (mirror)");

            String id = got.ext().get("msgId");
            assertNotEquals(realId, id);
            MessageId decoded = MessageDecoder.decodeMessageId(id);
            assertEquals(gatewayAddress(), decoded.getAddress(), "the id names the gateway's port for the broker");
            assertEquals(OFFSET, decoded.getOffset(), "same commit-log offset");

            Map<String, String> others = new HashMap<>(got.ext());
            others.remove("msgId");
            assertEquals(Map.of("queueId", "1", "queueOffset", "42", "MSG_REGION", "DefaultRegion", "TRACE_ON", "true"),
                others, "every other field as the broker sent it");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {RequestCode.SEND_MESSAGE, RequestCode.SEND_REPLY_MESSAGE, RequestCode.SEND_REPLY_MESSAGE_V2})
    @CoversCodes({RequestCode.SEND_MESSAGE, RequestCode.SEND_REPLY_MESSAGE, RequestCode.SEND_REPLY_MESSAGE_V2})
    void otherSendAnswersNameTheGatewayToo(int code) throws Exception {
        String realId = MessageDecoder.createMessageId(brokerAddress(), OFFSET);
        answer.set(Wire.response(Wire.SUCCESS, 0).ext("msgId", realId).ext("queueId", "2").ext("queueOffset", "9"));
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(code).opaque(code).ext("producerGroup", "pg").ext("topic", "TopicA")
                .ext("defaultTopic", "TBW102").ext("defaultTopicQueueNums", "4").ext("queueId", "2").ext("sysFlag", "0")
                .ext("bornTimestamp", "1700000000000").ext("flag", "0").body("reply").bytes());
            assertEquals(code, broker.awaitFrame(RawClient.WAIT).frame().code(), "forwarded");
            Wire.Frame got = client.read();
            assertEquals(code, got.opaque());
            MessageId decoded = MessageDecoder.decodeMessageId(got.ext().get("msgId"));
            assertEquals(gatewayAddress(), decoded.getAddress());
            assertEquals(OFFSET, decoded.getOffset());
            assertEquals("9", got.ext().get("queueOffset"));
        }
    }

    @Test
    void aBrokerRegisteredByHostNameHasItsIdsRewrittenOnceTheNameResolves() throws Exception {
        // its ids carry the address the name resolves to (127.0.0.1), which the gateway learns without blocking
        String named = "localhost:" + broker.port();
        gateway.close();
        namesrv.clusterInfo(ScriptedPeer.clusterInfoNaming("broker-a", named));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).start());
        answer.set(Wire.response(Wire.SUCCESS, 0).ext("msgId", MessageDecoder.createMessageId(brokerAddress(), OFFSET))
            .ext("queueId", "2").ext("queueOffset", "9"));
        int gatewayPort = gateway.brokerPort(named);
        try (RawClient client = RawClient.connect(gatewayPort)) {
            client.send(Wire.request(RequestCode.SEND_MESSAGE).opaque(77).ext("producerGroup", "pg")
                .ext("topic", "TopicA").ext("queueId", "2").ext("sysFlag", "0").body("named").bytes());
            assertEquals(77, broker.awaitFrame(RawClient.WAIT).frame().opaque(), "relayed to the broker by its name");
            MessageId decoded = MessageDecoder.decodeMessageId(client.read().ext().get("msgId"));
            assertEquals(new InetSocketAddress("127.0.0.1", gatewayPort), decoded.getAddress());
            assertEquals(OFFSET, decoded.getOffset());
        }
    }

    @Test
    @CoversCodes(RequestCode.SEND_BATCH_MESSAGE)
    void batchSendAnswerRewritesEveryIdOfThisBrokerAndKeepsOthers() throws Exception {
        String own1 = MessageDecoder.createMessageId(brokerAddress(), 100);
        String own2 = MessageDecoder.createMessageId(brokerAddress(), 200);
        String foreign = MessageDecoder.createMessageId(new InetSocketAddress("10.1.2.3", 10911), 300);
        answer.set(Wire.response(Wire.SUCCESS, 0).ext("msgId", own1 + "," + foreign + "," + own2).ext("queueId", "0"));

        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(SEND_BATCH_MESSAGE).opaque(1).ext("b", "TopicA").body("batch").bytes());
            String[] ids = client.read().ext().get("msgId").split(",");
            assertEquals(3, ids.length);
            assertEquals(gatewayAddress(), MessageDecoder.decodeMessageId(ids[0]).getAddress());
            assertEquals(100, MessageDecoder.decodeMessageId(ids[0]).getOffset());
            assertEquals(foreign, ids[1], "an id of a broker the gateway does not know is left alone");
            assertEquals(gatewayAddress(), MessageDecoder.decodeMessageId(ids[2]).getAddress());
            assertEquals(200, MessageDecoder.decodeMessageId(ids[2]).getOffset());
        }
    }

    @Test
    void failedSendAnswerPassesUnchanged() throws Exception {
        Wire.Builder failure = Wire.response(14, 0).remark("service not available now");
        answer.set(failure);
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(SEND_MESSAGE_V2).opaque(5).bytes());
            assertArrayEquals(failure.opaque(5).bytes(), client.readBytes(RawClient.WAIT));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE, RequestCode.POP_MESSAGE,
        RequestCode.QUERY_MESSAGE, RequestCode.VIEW_MESSAGE_BY_ID})
    @CoversCodes({RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE, RequestCode.POP_MESSAGE,
        RequestCode.QUERY_MESSAGE, RequestCode.VIEW_MESSAGE_BY_ID})
    void recordsInAnswersNameTheGatewayAsStoreHost(int code) throws Exception {
        InetSocketAddress other = new InetSocketAddress("10.1.2.3", 10911);
        byte[] body = Records.concat(
            Records.record("TopicA", "first", brokerAddress(), 1000, 7),
            Records.record("TopicA", "second", other, 2000, 8),
            Records.record("TopicA", "third", brokerAddress(), 3000, 9));
        answer.set(Wire.response(Wire.SUCCESS, 0).ext("nextBeginOffset", "10").ext("minOffset", "0")
            .ext("maxOffset", "10").ext("suggestWhichBrokerId", "0").body(body));

        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(code).opaque(11).ext("consumerGroup", "cg").ext("topic", "TopicA").ext("queueId", "1")
                .bytes());
            Wire.Frame got = client.read();
            assertEquals(Wire.SUCCESS, got.code());
            List<MessageExt> messages = Records.decode(got.body());
            assertEquals(3, messages.size());
            assertEquals(List.of("first", "second", "third"),
                messages.stream().map(m -> new String(m.getBody(), StandardCharsets.UTF_8)).toList());
            assertEquals(gatewayAddress(), messages.get(0).getStoreHost());
            assertEquals(other, messages.get(1).getStoreHost(), "a store host the gateway does not know is left alone");
            assertEquals(gatewayAddress(), messages.get(2).getStoreHost());
            assertEquals(List.of(7L, 8L, 9L), messages.stream().map(MessageExt::getQueueOffset).toList());
            // what a client computes as offsetMsgId leads back to the gateway, with the record's offset
            MessageId id = MessageDecoder.decodeMessageId(messages.get(2).getMsgId());
            assertEquals(gatewayAddress(), id.getAddress());
            assertEquals(3000, id.getOffset());
            assertEquals(got.ext(), Map.of("nextBeginOffset", "10", "minOffset", "0", "maxOffset", "10",
                "suggestWhichBrokerId", "0"));
        }
    }
}
