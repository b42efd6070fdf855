package io.rmqgw.gateway.brokerrequests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageId;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Requests a broker sends to a client ride that client's connection through the gateway, and the
 * client's answers go back the same way; plus the broker role's timeouts.
 */
class BrokerToClientRequestTest {

    private static final int CHECK_TRANSACTION_STATE = 39;
    private static final int NOTIFY_CONSUMER_IDS_CHANGED = 40;
    private static final int GET_CONSUMER_RUNNING_INFO = 307;
    private static final int CONSUME_MESSAGE_DIRECTLY = 309;
    private static final int PULL_MESSAGE = 11;
    private static final int GET_MAX_OFFSET = 30;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker(ScriptedPeer.Script.SILENT)
            .gateway(g -> g.requestTimeout(Duration.ofMillis(300)).longPollTimeout(Duration.ofMillis(1500))).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    static Stream<Arguments> brokerRequests() throws Exception {
        byte[] foreignRecord = Records.record("TopicTx", "tx body", new InetSocketAddress("10.9.8.7", 10911), 4096, 3);
        return Stream.of(
            Arguments.of("NOTIFY_CONSUMER_IDS_CHANGED, oneway", Wire.request(NOTIFY_CONSUMER_IDS_CHANGED).opaque(9001)
                .oneway().ext("consumerGroup", "cg").bytes(), null),
            Arguments.of("GET_CONSUMER_RUNNING_INFO, binary", Wire.request(GET_CONSUMER_RUNNING_INFO).opaque(9002)
                .type(SerializeType.ROCKETMQ).ext("consumerGroup", "cg").ext("clientId", "127.0.0.1@1").ext("jstackEnable", "false")
                .bytes(),
                Wire.response(Wire.SUCCESS, 9002).type(SerializeType.ROCKETMQ).body("{\"properties\":{}}").bytes()),
            Arguments.of("CONSUME_MESSAGE_DIRECTLY", Wire.request(CONSUME_MESSAGE_DIRECTLY).opaque(9003)
                .ext("consumerGroup", "cg").ext("clientId", "c").ext("msgId", "0A090807000029DF0000000000001000")
                .body(foreignRecord).bytes(),
                Wire.response(Wire.SUCCESS, 9003).body("{\"consumeResult\":\"CR_SUCCESS\"}").bytes()),
            Arguments.of("CHECK_TRANSACTION_STATE of another broker's message", Wire.request(CHECK_TRANSACTION_STATE)
                .opaque(9004).ext("tranStateTableOffset", "3").ext("commitLogOffset", "4096").ext("msgId", "m")
                .ext("transactionId", "t").body(foreignRecord).bytes(),
                Wire.response(Wire.SUCCESS, 9004).bytes()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokerRequests")
    void brokerRequestReachesTheClientAndItsAnswerTheBrokerUnchanged(String what, byte[] request, byte[] clientAnswer)
        throws Exception {
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            // a client speaks one encoding; answers and broker requests reach it in that one (mirror)
            ScriptedPeer.Connection upstream = broker.awaitDialBy(client, SerializeType.valueOf(request[4]), RawClient.WAIT);
            upstream.send(request);
            assertArrayEquals(request, client.readBytes(RawClient.WAIT), "the client got the broker's bytes");

            if (clientAnswer != null) {
                client.send(clientAnswer);
                ScriptedPeer.Received got = broker.awaitFrame(RawClient.WAIT);
                assertTrue(got.frame().isResponse());
                assertEquals(upstream.id(), got.connection().id(), "on the connection the request came on");
                assertArrayEquals(clientAnswer, got.frame().bytes(), "the broker got the client's answer unchanged");
            }

            // the client's own requests still work on the connection, no answer was mistaken for one
            client.send(Wire.request(GET_MAX_OFFSET).opaque(1).bytes());
            ScriptedPeer.Received req = broker.awaitFrame(f -> !f.isResponse(), RawClient.WAIT);
            req.connection().send(Wire.response(Wire.SUCCESS, 1).ext("offset", "77").bytes());
            assertEquals("77", client.read().ext().get("offset"));
        }
    }

    @Test
    void eachClientGetsTheRequestsSentOnItsOwnConnection() throws Exception {
        int port = gateway.brokerPort(broker.address());
        try (RawClient c1 = RawClient.connect(port)) {
            ScriptedPeer.Connection u1 = broker.awaitDialBy(c1, RawClient.WAIT);
            try (RawClient c2 = RawClient.connect(port)) {
                ScriptedPeer.Connection u2 = broker.awaitDialBy(c2, RawClient.WAIT);
                byte[] to1 = Wire.request(GET_CONSUMER_RUNNING_INFO).opaque(5).ext("clientId", "one").bytes();
                byte[] to2 = Wire.request(GET_CONSUMER_RUNNING_INFO).opaque(5).ext("clientId", "two").bytes();
                u2.send(to2);
                u1.send(to1);
                assertArrayEquals(to1, c1.readBytes(RawClient.WAIT));
                assertArrayEquals(to2, c2.readBytes(RawClient.WAIT));

                c2.send(Wire.response(Wire.SUCCESS, 5).remark("from two").bytes());
                c1.send(Wire.response(Wire.SUCCESS, 5).remark("from one").bytes());
                for (int i = 0; i < 2; i++) {
                    ScriptedPeer.Received r = broker.awaitFrame(RawClient.WAIT);
                    assertEquals(r.connection().id() == u1.id() ? "from one" : "from two", r.frame().remark());
                }
            }
        }
    }

    @Test
    @CoversCodes(CHECK_TRANSACTION_STATE)
    void checkBackOfThisBrokersMessageNamesTheGatewayAsStoreHost() throws Exception {
        InetSocketAddress real = new InetSocketAddress("127.0.0.1", broker.port());
        InetSocketAddress advertised = new InetSocketAddress("127.0.0.1", gateway.brokerPort(broker.address()));
        byte[] record = Records.record("TopicTx", "half message", real, 8192, 4);
        try (RawClient client = RawClient.connect(advertised.getPort())) {
            ScriptedPeer.Connection upstream = broker.awaitDialBy(client, RawClient.WAIT);
            String realId = MessageDecoder.createMessageId(real, 8192);
            upstream.send(Wire.request(CHECK_TRANSACTION_STATE).opaque(77).oneway().ext("commitLogOffset", "8192")
                .ext("offsetMsgId", realId).ext("transactionId", "tx-1").body(record).bytes());
            Wire.Frame got = client.read();
            assertEquals(CHECK_TRANSACTION_STATE, got.code());
            assertEquals(77, got.opaque());
            assertTrue(got.isOneway());
            MessageId id = MessageDecoder.decodeMessageId(got.ext().get("offsetMsgId"));
            assertEquals(advertised, id.getAddress(), "the check-back's offsetMsgId names the gateway");
            assertEquals(8192, id.getOffset());
            assertEquals("tx-1", got.ext().get("transactionId"));
            assertEquals("8192", got.ext().get("commitLogOffset"));
            List<MessageExt> messages = Records.decode(got.body());
            assertEquals(1, messages.size());
            assertEquals(advertised, messages.get(0).getStoreHost());
            assertEquals("half message", new String(messages.get(0).getBody(), StandardCharsets.UTF_8));
        }
    }

    @Test
    @CoversCodes(CONSUME_MESSAGE_DIRECTLY)
    void consumeDirectlyOfThisBrokersMessageNamesTheGatewayAsStoreHost() throws Exception {
        InetSocketAddress real = new InetSocketAddress("127.0.0.1", broker.port());
        InetSocketAddress advertised = new InetSocketAddress("127.0.0.1", gateway.brokerPort(broker.address()));
        byte[] record = Records.record("TopicA", "consume me", real, 4096, 2);
        try (RawClient client = RawClient.connect(advertised.getPort())) {
            ScriptedPeer.Connection upstream = broker.awaitDialBy(client, RawClient.WAIT);
            upstream.send(Wire.request(CONSUME_MESSAGE_DIRECTLY).opaque(78).ext("consumerGroup", "cg")
                .ext("clientId", "127.0.0.1@1").ext("msgId", MessageDecoder.createMessageId(real, 4096)).body(record).bytes());
            Wire.Frame got = client.read();
            assertEquals(CONSUME_MESSAGE_DIRECTLY, got.code());
            assertEquals(78, got.opaque());
            List<MessageExt> messages = Records.decode(got.body());
            assertEquals(1, messages.size());
            assertEquals(advertised, messages.get(0).getStoreHost(), "the record's store host names the gateway");
            assertEquals(4096, MessageDecoder.decodeMessageId(messages.get(0).getMsgId()).getOffset());
            assertEquals("consume me", new String(messages.get(0).getBody(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void pullsWaitForTheLongPollTimeoutOtherRequestsForTheRequestTimeout() throws Exception {
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            long start = System.nanoTime();
            client.send(Wire.request(PULL_MESSAGE).opaque(1).ext("suspendTimeoutMillis", "1000").bytes());
            client.send(Wire.request(GET_MAX_OFFSET).opaque(2).bytes());

            Wire.Frame first = client.read();
            long firstMillis = (System.nanoTime() - start) / 1_000_000;
            Wire.Frame second = client.read();
            long secondMillis = (System.nanoTime() - start) / 1_000_000;

            assertEquals(2, first.opaque(), "the plain request times out first");
            assertEquals(Wire.SYSTEM_BUSY, first.code());
            assertTrue(firstMillis >= 300 && firstMillis < 1500, "request timeout after " + firstMillis + " ms");
            assertTrue(first.remark().contains("broker " + broker.address()), first.remark());

            assertEquals(1, second.opaque());
            assertEquals(Wire.SYSTEM_BUSY, second.code());
            assertTrue(secondMillis >= 1500, "long-poll timeout after " + secondMillis + " ms");
        }
    }
}
