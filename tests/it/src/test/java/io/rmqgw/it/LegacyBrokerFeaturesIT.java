package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.LegacyClusterFixture;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.GatewayClients;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.GatewayMetrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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
class LegacyBrokerFeaturesIT {

    private static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(60);
    private static final String RUN = Long.toString(System.nanoTime() % 1_000_000);
    private static final AtomicInteger NAMES = new AtomicInteger();

    static final String VQ_TOPIC = "legacy_vq_" + RUN;
    static final String VQ_GROUP = "legacy_vq_group_" + RUN;
    /** A virtual-queue topic of its own for the bypassing lite pull consumer (VQ_TOPIC's offsets are counted). */
    static final String VQ_LITE_TOPIC = "legacy_vq_lite_" + RUN;
    static final String COALESCED = "legacy_coalesce_" + RUN;
    static final String FAN540_A = "legacy_fan540_a_" + RUN;
    static final String FAN540_B = "legacy_fan540_b_" + RUN;
    static final String FAN497_A = "legacy_fan497_a_" + RUN;
    static final String FAN497_B = "legacy_fan497_b_" + RUN;

    @RegisterExtension
    static final LegacyClusterFixture LEGACY = new LegacyClusterFixture();
    static ForkedBroker broker;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp() throws Exception {
        // queue counts as the 5.4.0 tests use them
        broker = LEGACY.start("legacy-features-" + RUN, "ItLegacyFeaturesCluster", "it-legacy-features",
            new Properties(), List.of(VQ_TOPIC + ":4", VQ_LITE_TOPIC + ":2", COALESCED + ":4", FAN540_A + ":4",
                FAN540_B + ":2", FAN497_A + ":2", FAN497_B + ":4"));
        // as VirtualQueuesIT: few leases per virtual queue, so the messages spread over all consumers
        VirtualQueueConfig vq = new VirtualQueueConfig(VQ_GROUP, VQ_TOPIC, 4, null, null, 8, null, null, null);
        VirtualQueueConfig vqLite = new VirtualQueueConfig(VQ_GROUP + "_lite", VQ_LITE_TOPIC, 4, null, null, null,
            null, null, null);
        gateway = LEGACY.add(GatewayFixture.startWith(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ, c -> c
            .withVirtualQueues(List.of(vq, vqLite))
            .withCoalescing(new CoalescingConfig(List.of(COALESCED), null, null, null, null))
            .withFanout(new FanoutConfig(true, null, null, null, null, null))));
    }

    /** A group name of this run from a hint (the 4.9.7 broker's store is this class's own). */
    private static String group(String hint) {
        return "legacy_" + hint.replaceAll("[^A-Za-z0-9_-]", "_") + "_" + NAMES.incrementAndGet() + "_" + RUN;
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
        VirtualQueuesIT.sixteenConsumersShareFourQueues(gateway, VQ_TOPIC, VQ_GROUP, broker.brokerAddress(),
            LegacyBrokerFeaturesIT::group);
    }

    /**
     * A 5.4.0 lite pull consumer of a group not served on the virtual-queue topic reads its real queues in bypass:
     * its LITE_PULL_MESSAGEs go on to the 4.9.7 broker, which does not know 361, as PULL_MESSAGE.
     */
    @Test
    void aLitePullConsumerOfAnotherGroupReadsTheVirtualQueueTopicOfThe497BrokerInBypass() throws Exception {
        String prefix = "lite-bypass-" + RUN + "-";
        int messages = 40;
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(group("vq_lite_bypass"));
        consumer.setNamesrvAddr(gateway.namesrvAddress());
        consumer.setInstanceName("rmqgw-it-lite-bypass-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(VQ_LITE_TOPIC, "*");
        consumer.start();
        Set<String> polled = new HashSet<>();
        try {
            DefaultMQProducer producer = GatewayClients.producer(LegacyBrokerFeaturesIT::group, gateway, "lite_bypass");
            try {
                for (int i = 0; i < messages; i++) {
                    assertEquals(SendStatus.SEND_OK, producer.send(new Message(VQ_LITE_TOPIC, "t", prefix + i,
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
            .namesrv(gateway.namesrvAddress()).topic(COALESCED).count(legacySends).keyPrefix("k497")
            .arg("interval-ms", 2).timeout(Duration.ofSeconds(60)).start()) {
            for (int p = 0; p < 4; p++) {
                DefaultMQProducer producer = GatewayClients.producer(LegacyBrokerFeaturesIT::group, gateway, "c" + p);
                producer.setSendMsgTimeout(30_000);
                producers.add(producer);
            }
            try {
                assertNotNull(legacySender.awaitLine("sent", Duration.ofSeconds(30)), "the 4.9.7 client sends");
                sent = CoalescingIT.sendConcurrently(producers, COALESCED, 32, 20);
                System.err.println("[it] the 4.9.7 client had " + legacySender.linesSoFar().stream()
                    .filter(l -> "sent".equals(l.path("type").asText())).count() + " of " + legacySends
                    + " sends answered when the 5.4.0 clients' " + sent.size() + " were");
                legacy = legacySender.await().assertOk();
                CoalescingIT.assertOwnIdsAndOffsets(sent.values(), gatewayStoreHost());
                CoalescingIT.assertViewedById(producers.get(0), COALESCED, sent.values());
                for (JsonNode line : legacy.lines("sent")) {
                    CoalescingIT.assertStored(line, producers.get(0).viewMessage(COALESCED,
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

        Map<String, MessageExt> received = receive(COALESCED, total);
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
            LegacyBrokerFeaturesIT::receive, FAN540_A, FAN540_B, gatewayStoreHost());
    }

    @Test
    void aMixedBatchFromA497ProducerReachesEachDestinationOnThe497Broker() throws Exception {
        FanoutIT.aMixedBatchFromA497ProducerReaches(gateway, LegacyBrokerFeaturesIT::receive, FAN497_A, FAN497_B);
    }
}
