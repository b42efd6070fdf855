package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.it.fixture.ClusterTopic;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.GatewayClients;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.sysflag.PullSysFlag;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.PullMessageResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetResponseHeader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * rocketmq-client 5.4.0's {@code DefaultLitePullConsumer} pulls with LITE_PULL_MESSAGE (361), which a 4.9.7 broker
 * does not know; the gateway sends it to such a broker as PULL_MESSAGE (11). Against a real 4.9.7 name server and
 * broker in their own JVM ({@link ForkedBroker#legacy}): the consumer, in subscribe and in assign mode, polls every
 * message sent through the gateway and its committed offsets reach the broker; directly against the broker the
 * same consumer gets nothing (the broker answers {@code request type 361 not supported}); a 361 that is the first
 * request on its connection (the broker's version not yet seen) is sent again as 11 and answered.
 */
@RocketMqCluster(version = "4.9.7")
class LegacyLitePullIT {

    private static final Duration POLL_TIMEOUT = Duration.ofSeconds(60);
    private static final int MESSAGES = 40;

    @ClusterTopic(queues = 4)
    static String subscribed;
    @ClusterTopic(queues = 4)
    static String assigned;
    @ClusterTopic(queues = 2)
    static String direct;
    @ClusterTopic(queues = 1)
    static String first;

    static ClusterUnderTest broker;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest cluster) throws Exception {
        broker = cluster;
        // headers as the clients send them: the 5.4.0 consumers' JSON and the raw requests' ROCKETMQ binary both
        // reach the broker translated
        gateway = cluster.closeAfterClass(GatewayFixture.on(cluster).headerEncoding(HeaderEncoding.PRESERVE).start());
        send(first, 5);
    }

    private static String group(String hint) {
        return UniqueNames.group("legacy_lite_" + hint);
    }

    private static String gatewayBroker() {
        return "127.0.0.1:" + gateway.brokerPort(broker.brokerAddress());
    }

    /** Sends {@code count} messages keyed {@code k0..} to {@code topic} through the gateway; the keys by queue. */
    private static Map<Integer, List<String>> send(String topic, int count) throws Exception {
        DefaultMQProducer producer = GatewayClients.producer(LegacyLitePullIT::group, gateway, topic);
        Map<Integer, List<String>> byQueue = new TreeMap<>();
        try {
            for (int i = 0; i < count; i++) {
                var result = producer.send(new Message(topic, "t", "k" + i, ("body " + i).getBytes()));
                assertEquals(SendStatus.SEND_OK, result.getSendStatus());
                byQueue.computeIfAbsent(result.getMessageQueue().getQueueId(), q -> new ArrayList<>()).add("k" + i);
            }
        } finally {
            producer.shutdown();
        }
        return byQueue;
    }

    private static DefaultLitePullConsumer consumer(String group, String namesrv) {
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(group);
        consumer.setNamesrvAddr(namesrv);
        consumer.setInstanceName("rmqgw-it-lite-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setAutoCommit(false);
        return consumer;
    }

    /**
     * Commits, per queue, the offset after the last message polled from it (persisted: UPDATE_CONSUMER_OFFSET
     * through the gateway), then reads each back from the 4.9.7 broker itself.
     */
    private static void commitAndReadBack(DefaultLitePullConsumer consumer, String group,
                                          Map<String, MessageExt> polled, Map<Integer, List<String>> sent)
        throws Exception {
        Map<MessageQueue, Long> next = new HashMap<>();
        for (MessageExt m : polled.values()) {
            MessageQueue mq = new MessageQueue(m.getTopic(), m.getBrokerName(), m.getQueueId());
            next.merge(mq, m.getQueueOffset() + 1, Math::max);
        }
        consumer.commitSync(next, true);
        for (Map.Entry<MessageQueue, Long> e : next.entrySet()) {
            assertEquals(sent.get(e.getKey().getQueueId()).size(), e.getValue(), "queue " + e.getKey());
        }
        NettyRemotingClient raw = rawClient();
        try {
            for (Map.Entry<MessageQueue, Long> e : next.entrySet()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                long stored = -1;
                while (System.nanoTime() < deadline) {
                    stored = storedOffset(raw, group, e.getKey());
                    if (stored == e.getValue()) {
                        break;
                    }
                    TimeUnit.MILLISECONDS.sleep(200);
                }
                assertEquals(e.getValue(), stored, "the 4.9.7 broker's committed offset of " + e.getKey());
            }
        } finally {
            raw.shutdown();
        }
    }

    private static NettyRemotingClient rawClient() {
        NettyRemotingClient client = new NettyRemotingClient(new NettyClientConfig());
        client.start();
        return client;
    }

    /** QUERY_CONSUMER_OFFSET straight to the 4.9.7 broker; -1 when it has none. */
    private static long storedOffset(NettyRemotingClient raw, String group, MessageQueue mq) throws Exception {
        QueryConsumerOffsetRequestHeader header = new QueryConsumerOffsetRequestHeader();
        header.setConsumerGroup(group);
        header.setTopic(mq.getTopic());
        header.setQueueId(mq.getQueueId());
        RemotingCommand answer = raw.invokeSync(broker.brokerAddress(),
            RemotingCommand.createRequestCommand(RequestCode.QUERY_CONSUMER_OFFSET, header), 10_000);
        if (answer.getCode() != ResponseCode.SUCCESS) {
            return -1;
        }
        return ((QueryConsumerOffsetResponseHeader) answer.decodeCommandCustomHeader(
            QueryConsumerOffsetResponseHeader.class)).getOffset();
    }

    /** A LITE_PULL_MESSAGE as the 5.4.0 client builds it (lite-pull sys flag, no suspension). */
    private static RemotingCommand litePull(String group, String topic, SerializeType encoding) {
        PullMessageRequestHeader header = new PullMessageRequestHeader();
        header.setConsumerGroup(group);
        header.setTopic(topic);
        header.setQueueId(0);
        header.setQueueOffset(0L);
        header.setMaxMsgNums(32);
        header.setSysFlag(PullSysFlag.buildSysFlag(false, false, true, false, true));
        header.setCommitOffset(0L);
        header.setSuspendTimeoutMillis(0L);
        header.setSubscription("*");
        header.setSubVersion(0L);
        header.setExpressionType("TAG");
        RemotingCommand request = RemotingCommand.createRequestCommand(RequestCode.LITE_PULL_MESSAGE, header);
        request.setSerializeTypeCurrentRPC(encoding);
        return request;
    }

    @Test
    void subscribeModePollsEverythingAndCommitsThroughTheGateway() throws Exception {
        pollsEverythingAndCommits(subscribed, "sub", c -> c.subscribe(subscribed, "*"), c -> { });
    }

    @Test
    void assignModePollsEverythingAndCommitsThroughTheGateway() throws Exception {
        pollsEverythingAndCommits(assigned, "assign", c -> { }, c -> {
            List<MessageQueue> queues = new ArrayList<>(c.fetchMessageQueues(assigned));
            assertEquals(4, queues.size());
            c.assign(queues);
        });
    }

    /** A step of a consumer's set-up. */
    @FunctionalInterface
    private interface Setup {
        void apply(DefaultLitePullConsumer consumer) throws Exception;
    }

    /**
     * Sends {@link #MESSAGES} to {@code topic} (4 queues); a 5.4.0 lite pull consumer through the gateway, subscribed
     * or assigned by the two set-up steps, polls them all and commits; the offsets are read back from the broker.
     */
    private static void pollsEverythingAndCommits(String topic, String hint, Setup beforeStart, Setup afterStart)
        throws Exception {
        Map<Integer, List<String>> sent = send(topic, MESSAGES);
        double before = MeterReadings.of(gateway.metrics()).litePullsTranslated();
        String group = group(hint);
        DefaultLitePullConsumer consumer = consumer(group, gateway.namesrvAddress());
        beforeStart.apply(consumer);
        consumer.start();
        try {
            afterStart.apply(consumer);
            Map<String, MessageExt> polled = GatewayClients.poll(consumer, topic, MESSAGES, POLL_TIMEOUT);
            assertEquals(keys(sent), polled.keySet());
            commitAndReadBack(consumer, group, polled, sent);
        } finally {
            consumer.shutdown();
        }
        double translated = MeterReadings.of(gateway.metrics()).litePullsTranslated() - before;
        assertTrue(translated >= 4, "each of the 4 queues pulled at least once as PULL_MESSAGE: " + translated);
    }

    /** Why the gateway translates: the 4.9.7 broker itself refuses 361, and the lite pull consumer gets nothing. */
    @Test
    void directlyAgainstThe497BrokerTheSameConsumerGetsNothing() throws Exception {
        send(direct, 10);
        NettyRemotingClient raw = rawClient();
        try {
            RemotingCommand answer = raw.invokeSync(broker.brokerAddress(),
                litePull(group("direct_raw"), direct, SerializeType.JSON), 10_000);
            assertEquals(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, answer.getCode());
            assertTrue(answer.getRemark().contains("request type 361 not supported"), answer.getRemark());
        } finally {
            raw.shutdown();
        }
        DefaultLitePullConsumer consumer = consumer(group("direct"), broker.namesrvAddress());
        consumer.start();
        try {
            consumer.assign(new ArrayList<>(consumer.fetchMessageQueues(direct)));
            List<MessageExt> got = new ArrayList<>();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            while (System.nanoTime() < until) {
                got.addAll(consumer.poll(500));
            }
            assertEquals(List.of(), got, "a 5.4.0 lite pull consumer gets nothing from a 4.9.7 broker directly");
        } finally {
            consumer.shutdown();
        }
    }

    /**
     * A 361 as the first request of a connection: the gateway has seen no answer of the broker yet, sends it as it
     * came, and on {@code request type 361 not supported} sends it again as 11, once; the client gets that answer.
     */
    @ParameterizedTest
    @EnumSource(value = SerializeType.class)
    void aLitePullBeforeTheBrokersVersionIsKnownIsSentAgainAsPull(SerializeType encoding) throws Exception {
        double before = MeterReadings.of(gateway.metrics()).litePullsTranslated();
        NettyRemotingClient raw = rawClient();
        try {
            // stored once sent; the consume queue a pull reads follows a moment later
            for (int attempt = 0; attempt < 50 && brokerMaxOffset(raw, first) < 5; attempt++) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
            assertEquals(5L, brokerMaxOffset(raw, first));
            RemotingCommand answer = raw.invokeSync(gatewayBroker(), litePull(group("first"), first, encoding), 10_000);
            assertEquals(ResponseCode.SUCCESS, answer.getCode(), answer.getRemark());
            PullMessageResponseHeader header =
                (PullMessageResponseHeader) answer.decodeCommandCustomHeader(PullMessageResponseHeader.class);
            assertEquals(5L, header.getNextBeginOffset());
            List<MessageExt> messages = MessageDecoder.decodes(ByteBuffer.wrap(answer.getBody()));
            assertEquals(List.of("k0", "k1", "k2", "k3", "k4"), messages.stream().map(MessageExt::getKeys).toList());
        } finally {
            raw.shutdown();
        }
        assertEquals(1, MeterReadings.of(gateway.metrics()).litePullsTranslated() - before, 0.0);
    }

    /** GET_MAX_OFFSET of queue 0 straight to the 4.9.7 broker. */
    private static long brokerMaxOffset(NettyRemotingClient raw, String topic) throws Exception {
        GetMaxOffsetRequestHeader header = new GetMaxOffsetRequestHeader();
        header.setTopic(topic);
        header.setQueueId(0);
        RemotingCommand answer = raw.invokeSync(broker.brokerAddress(),
            RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, header), 10_000);
        return ((GetMaxOffsetResponseHeader) answer.decodeCommandCustomHeader(GetMaxOffsetResponseHeader.class))
            .getOffset();
    }

    private static TreeSet<String> keys(Map<Integer, List<String>> byQueue) {
        TreeSet<String> keys = new TreeSet<>();
        byQueue.values().forEach(keys::addAll);
        return keys;
    }
}
