package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.it.fixture.ClusterTopic;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.GatewayClients;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.UniqueNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway's own features against a real RocketMQ 4.9.7 name server and broker (Maven Central artifacts in their
 * own JVM, {@link ForkedBroker#legacy}), with the checks VirtualQueuesIT, CoalescingIT and FanoutIT make against
 * 5.4.0: virtual queues (16 push consumers, 4.9.7 and 5.4.0, share a topic of 4 queues fairly, nothing lost or
 * consumed twice, the group's commits reach the 4.9.7 broker; a 5.4.0 lite pull consumer of a group not served on
 * a virtual-queue topic reads it in bypass, its LITE_PULL_MESSAGEs sent on as PULL_MESSAGE); coalescing (concurrent
 * 4.9.7 and 5.4.0 sync senders each get their own id and queue offset, checked by viewing each message by id and by
 * consuming); fan-out (mixed batches from 4.9.7 and 5.4.0 producers reach each destination with bodies, keys, tags
 * and properties intact).
 * One gateway serves all three, each on topics of its own.
 */
@RocketMqCluster(version = "4.9.7")
class LegacyBrokerFeaturesIT {

    private static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(60);

    // queue counts as the 5.4.0 tests use them
    @ClusterTopic(queues = 4)
    static String vqTopic;
    static final String VQ_GROUP = UniqueNames.group("legacy_vq_group");
    /** A virtual-queue topic of its own for the bypassing lite pull consumer (vqTopic's offsets are counted). */
    @ClusterTopic(queues = 2)
    static String vqLiteTopic;
    @ClusterTopic(queues = 4)
    static String coalesced;
    @ClusterTopic(queues = 4)
    static String fan540A;
    @ClusterTopic(queues = 2)
    static String fan540B;
    @ClusterTopic(queues = 2)
    static String fan497A;
    @ClusterTopic(queues = 4)
    static String fan497B;

    static ClusterUnderTest broker;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest cluster) throws Exception {
        broker = cluster;
        // as VirtualQueuesIT: few leases per virtual queue, so the messages spread over all consumers
        VirtualQueueConfig vq = new VirtualQueueConfig(VQ_GROUP, vqTopic, 4, null, null, 8, null, null, null);
        VirtualQueueConfig vqLite = new VirtualQueueConfig(VQ_GROUP + "_lite", vqLiteTopic, 4, null, null, null,
            null, null, null);
        gateway = cluster.closeAfterClass(GatewayFixture.on(cluster)
            .fanout(new FanoutConfig(true, null, null, null, null, null))
            .virtualQueues(List.of(vq, vqLite))
            .configure(c -> c.withCoalescing(new CoalescingConfig(List.of(coalesced), null, null, null, null)))
            .start());
    }

    /** A group name of this run from a hint. */
    private static String group(String hint) {
        return UniqueNames.group("legacy_" + hint);
    }

    /**
     * A 5.4.0 push consumer's messages of {@code topic} through the gateway (5.x lite pull consumers against 4.9.7,
     * whose LITE_PULL_MESSAGE the gateway sends as PULL_MESSAGE, are LegacyLitePullIT's).
     */
    private static Map<String, MessageExt> receive(String topic, int expected) throws Exception {
        return GatewayClients.receivePushed(LegacyBrokerFeaturesIT::group, gateway, topic, expected, RECEIVE_TIMEOUT);
    }

    private static String gatewayStoreHost() {
        return "127.0.0.1:" + gateway.brokerPort(broker.brokerAddress());
    }

    @Test
    void sixteenConsumersShareFourQueuesOfThe497Broker() throws Exception {
        VirtualQueuesIT.sixteenConsumersShareFourQueues(gateway, vqTopic, VQ_GROUP, broker.brokerAddress(),
            LegacyBrokerFeaturesIT::group);
    }

    /**
     * A 5.4.0 lite pull consumer of a group not served on the virtual-queue topic reads its real queues in bypass:
     * its LITE_PULL_MESSAGEs go on to the 4.9.7 broker, which does not know 361, as PULL_MESSAGE.
     */
    @Test
    void aLitePullConsumerOfAnotherGroupReadsTheVirtualQueueTopicOfThe497BrokerInBypass() throws Exception {
        String prefix = "lite-bypass-" + UniqueNames.RUN + "-";
        int messages = 40;
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(group("vq_lite_bypass"));
        consumer.setNamesrvAddr(gateway.namesrvAddress());
        consumer.setInstanceName(UniqueNames.instance("lite-bypass"));
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(vqLiteTopic, "*");
        consumer.start();
        Set<String> polled = new HashSet<>();
        try {
            DefaultMQProducer producer = GatewayClients.producer(LegacyBrokerFeaturesIT::group, gateway, "lite_bypass");
            try {
                for (int i = 0; i < messages; i++) {
                    assertEquals(SendStatus.SEND_OK, producer.send(new Message(vqLiteTopic, "t", prefix + i,
                        ("m" + i).getBytes(StandardCharsets.UTF_8))).getSendStatus());
                }
            } finally {
                producer.shutdown();
            }
            long deadline = System.nanoTime() + RECEIVE_TIMEOUT.toNanos();
            while (polled.size() < messages && System.nanoTime() < deadline) {
                for (MessageExt m : consumer.poll(500)) {
                    if (m.getKeys() != null && m.getKeys().startsWith(prefix)) {
                        polled.add(m.getKeys());
                    }
                }
            }
        } finally {
            consumer.shutdown();
        }
        assertEquals(messages, polled.size(), () -> "polled " + new TreeSet<>(polled));
        assertTrue(gateway.metrics().registry().get("rmqgw.vq.bypass.requests")
            .tag("code", GatewayMetrics.requestCodeLabel(RequestCode.LITE_PULL_MESSAGE)).counter().count() > 0,
            "the consumer's LITE_PULL_MESSAGEs went through the bypass");
    }

    @Test
    void concurrent497And540SyncSendersEachGetTheirOwnIdAndOffset() throws Exception {
        CoalescingIT.CoalescingCounts before = CoalescingIT.CoalescingCounts.of(gateway.metrics());
        int legacySends = 150;
        List<DefaultMQProducer> producers = new ArrayList<>();
        Map<String, CoalescingIT.Sent> sent;
        ScenarioResult legacy;
        // a 4.9.7 client (JSON headers) sending, a few ms apart, while 32 threads of 5.4.0 clients send to the same
        // queues: their sends share batches
        try (ScenarioProcess legacySender = ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
            .namesrv(gateway.namesrvAddress()).topic(coalesced).count(legacySends).keyPrefix("k497")
            .arg("interval-ms", 2).timeout(Duration.ofSeconds(60)).start()) {
            for (int p = 0; p < 4; p++) {
                DefaultMQProducer producer = GatewayClients.producer(LegacyBrokerFeaturesIT::group, gateway, "c" + p);
                producer.setSendMsgTimeout(30_000);
                producers.add(producer);
            }
            try {
                assertNotNull(legacySender.awaitLine("sent", Duration.ofSeconds(30)), "the 4.9.7 client sends");
                sent = CoalescingIT.sendConcurrently(producers, coalesced, 32, 20);
                System.err.println("[it] the 4.9.7 client had " + legacySender.linesSoFar().stream()
                    .filter(l -> "sent".equals(l.path("type").asText())).count() + " of " + legacySends
                    + " sends answered when the 5.4.0 clients' " + sent.size() + " were");
                legacy = legacySender.await().assertOk();
                CoalescingIT.assertOwnIdsAndOffsets(sent.values(), gatewayStoreHost());
                CoalescingIT.assertViewedById(producers.get(0), coalesced, sent.values());
                for (JsonNode line : legacy.lines("sent")) {
                    CoalescingIT.assertStored(line, producers.get(0).viewMessage(coalesced,
                        line.path("offsetMsgId").asText()));
                }
            } finally {
                producers.forEach(DefaultMQProducer::shutdown);
            }
        }
        int total = sent.size() + legacySends;
        assertEquals(legacySends, legacy.lines("sent").size(), legacy::describe);
        before.assertCoalescedSince(gateway.metrics(), total);
        // the 4.9.7 client's ids and queue positions are their own too, among all of them
        Set<String> ids = new HashSet<>();
        Set<String> positions = new HashSet<>();
        sent.values().forEach(s -> {
            ids.add(s.result().getOffsetMsgId());
            positions.add(s.result().getMessageQueue().getQueueId() + "@" + s.result().getQueueOffset());
        });
        for (JsonNode line : legacy.lines("sent")) {
            assertTrue(ids.add(line.path("offsetMsgId").asText()), line::toString);
            assertTrue(positions.add(line.path("queueId").asInt() + "@" + line.path("queueOffset").asLong()),
                line::toString);
        }

        Map<String, MessageExt> received = receive(coalesced, total);
        for (CoalescingIT.Sent s : sent.values()) {
            CoalescingIT.assertStored(s, received.get(s.key()));
        }
        for (JsonNode line : legacy.lines("sent")) {
            CoalescingIT.assertStored(line, received.get(line.path("key").asText()));
        }
    }

    @Test
    void aMixedBatchFromA540ProducerReachesEachDestinationOnThe497Broker() throws Exception {
        FanoutIT.aMixedBatchFromA540ProducerReaches(gateway, LegacyBrokerFeaturesIT::group,
            LegacyBrokerFeaturesIT::receive, fan540A, fan540B, gatewayStoreHost());
    }

    @Test
    void aMixedBatchFromA497ProducerReachesEachDestinationOnThe497Broker() throws Exception {
        FanoutIT.aMixedBatchFromA497ProducerReaches(gateway, LegacyBrokerFeaturesIT::receive, fan497A, fan497B);
    }
}
