package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.GatewayClients;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Server-side coalescing against the real 5.4.0 broker: 64 concurrent sync senders (5.4.0 clients in this
 * JVM, eight connections) send small messages to a coalescing topic through the gateway; every send gets
 * its own offsetMsgId and queue offset, each checked by viewing the message by id through the gateway and by
 * consuming it (nothing lost, nothing twice, bodies, keys, tags and properties intact). A 4.9.7 client (JSON
 * headers) gets its answers in its own dialect. A batch the broker refuses reaches every sender of it as an
 * error, and nothing of it is stored.
 */
@ExtendWith(SharedClusterExtension.class)
class CoalescingIT {

    private static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(90);
    private static final int PRODUCERS = 8;
    private static final int THREADS_PER_PRODUCER = 8;
    private static final int PER_THREAD = 20;
    private static final int QUEUES = 4;

    static SharedCluster cluster;
    @RegisterExtension
    static final Closer CLOSER = Closer.allTests();
    static GatewayFixture gateway;
    static String topic;
    static String topic497;
    static String refused;

    @BeforeAll
    static void setUp(SharedCluster shared) throws Exception {
        cluster = shared;
        topic = cluster.topic("coalesce");
        topic497 = cluster.topic("coalesce497");
        refused = cluster.topic("coalesce_refused");
        for (String t : List.of(topic, topic497, refused)) {
            Admin.createTopic(cluster.brokerAddress(), t, QUEUES);
            Admin.awaitRoute(cluster.namesrvAddress(), t, cluster.brokerName(), Duration.ofSeconds(15));
        }
        gateway = CLOSER.add(GatewayFixture.startWith(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ,
            c -> c.withCoalescing(new CoalescingConfig(List.of(topic, topic497, refused), null, null, null, null))));
    }

    /** What one sender sent and what it was answered. */
    record Sent(String key, int sender, int seq, byte[] body, String tag, SendResult result) {
    }

    @Test
    void sixtyFourConcurrentSyncSendersEachGetTheirOwnIdAndOffset() throws Exception {
        CoalescingCounts before = CoalescingCounts.of(gateway.metrics());
        List<DefaultMQProducer> producers = new ArrayList<>();
        Map<String, Sent> sent;
        try {
            for (int p = 0; p < PRODUCERS; p++) {
                producers.add(producer("c" + p));
            }
            sent = sendConcurrently(producers, topic, PRODUCERS * THREADS_PER_PRODUCER, PER_THREAD);
            int total = sent.size();
            assertOwnIdsAndOffsets(sent.values(), "127.0.0.1:" + gateway.brokerPort(cluster.brokerAddress()));
            before.assertCoalescedSince(gateway.metrics(), total);
            assertViewedById(producers.get(0), topic, sent.values());
        } finally {
            producers.forEach(DefaultMQProducer::shutdown);
        }
        // by consuming
        Map<String, MessageExt> received = receive(topic, sent.size());
        assertEquals(sent.keySet(), received.keySet());
        for (Sent s : sent.values()) {
            assertStored(s, received.get(s.key()));
        }
    }

    /**
     * {@code perThread} sync sends from each of {@code senders} threads, started at once, taking turns on
     * {@code producers}: small messages to {@code topic} with keys {@code k-SENDER-SEQ}, a tag and user properties
     * (CoalescingIT's {@link #assertStored} checks them). What each sent and was answered, by key.
     */
    static Map<String, Sent> sendConcurrently(List<DefaultMQProducer> producers, String topic, int senders,
                                              int perThread) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(senders);
        Map<String, Sent> sent = new ConcurrentHashMap<>();
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                int sender = s;
                DefaultMQProducer producer = producers.get(s % producers.size());
                done.add(pool.submit(() -> {
                    start.await();
                    for (int seq = 0; seq < perThread; seq++) {
                        String key = "k-" + sender + "-" + seq;
                        byte[] body = body(key, 128);
                        String tag = "tag" + (sender % 3);
                        Message m = new Message(topic, tag, key, body);
                        m.putUserProperty("sender", Integer.toString(sender));
                        m.putUserProperty("seq", Integer.toString(seq));
                        m.putUserProperty("note", "ünïcode ✓");
                        SendResult r = producer.send(m);
                        sent.put(key, new Sent(key, sender, seq, body, tag, r));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(senders * perThread, sent.size());
        return sent;
    }

    /**
     * Every send stored (SEND_OK) with an id and a queue position of its own, the id leading to the gateway's
     * {@code gatewayStoreHost}; each sender's messages in its order on each queue (sync: the next send after the
     * answer to the previous).
     */
    static void assertOwnIdsAndOffsets(Collection<Sent> sent, String gatewayStoreHost) throws Exception {
        Set<String> offsetIds = new HashSet<>();
        Set<String> positions = new HashSet<>();
        for (Sent s : sent) {
            SendResult r = s.result();
            assertEquals(SendStatus.SEND_OK, r.getSendStatus(), r::toString);
            assertTrue(offsetIds.add(r.getOffsetMsgId()), "an id of its own: " + r);
            assertTrue(positions.add(r.getMessageQueue().getQueueId() + "@" + r.getQueueOffset()), "a position of its own: " + r);
            assertEquals(gatewayStoreHost, MessageDecoder.decodeMessageId(r.getOffsetMsgId()).getAddress().toString()
                .replaceFirst("^.*/", ""), "the id leads to the gateway: " + r);
        }
        Map<String, Long> lastOffset = new HashMap<>();
        sent.stream().sorted(java.util.Comparator.comparingInt(Sent::sender).thenComparingInt(Sent::seq))
            .forEach(s -> {
                String queue = s.sender() + "/" + s.result().getMessageQueue().getQueueId();
                Long before = lastOffset.put(queue, s.result().getQueueOffset());
                assertTrue(before == null || before < s.result().getQueueOffset(), s.key());
            });
    }

    /** The gateway's coalescing counters at one moment: sends taken, batches, messages in batches. */
    record CoalescingCounts(double coalesced, long batches, double batchedMessages) {

        static CoalescingCounts of(GatewayMetrics metrics) {
            MeterReadings readings = MeterReadings.of(metrics);
            return new CoalescingCounts(readings.coalesceSendsCount("coalesced"), readings.coalesceBatchCount(),
                readings.coalesceBatchMessagesTotal());
        }

        /**
         * Coalescing took place since these counts: {@code total} sends taken, all in batches, and batches carried
         * more than one message on average.
         */
        void assertCoalescedSince(GatewayMetrics metrics, int total) {
            CoalescingCounts now = of(metrics);
            assertEquals(total, now.coalesced() - coalesced, 0.0);
            long batchCount = now.batches() - batches;
            assertEquals(total, now.batchedMessages() - batchedMessages, 0.0, "every coalesced message went in a batch");
            assertTrue(batchCount < total, "batches " + batchCount + " for " + total + " messages: several shared a batch");
        }
    }

    /** Each sent message, viewed by its offsetMsgId with {@code viewer} (through the gateway), is what was sent. */
    static void assertViewedById(DefaultMQProducer viewer, String topic, Collection<Sent> sent) throws Exception {
        for (Sent s : sent) {
            MessageExt m = viewer.viewMessage(topic, s.result().getOffsetMsgId());
            assertNotNull(m, s.key());
            assertStored(s, m);
        }
    }

    static void assertStored(Sent s, MessageExt m) {
        SendResult r = s.result();
        assertEquals(s.key(), m.getKeys());
        assertArrayEquals(s.body(), m.getBody(), s.key());
        assertEquals(s.tag(), m.getTags(), s.key());
        assertEquals(Integer.toString(s.sender()), m.getUserProperty("sender"), s.key());
        assertEquals(Integer.toString(s.seq()), m.getUserProperty("seq"), s.key());
        assertEquals("ünïcode ✓", m.getUserProperty("note"), s.key());
        assertEquals(r.getMsgId(), m.getProperty("UNIQ_KEY"), "the client's unique key: " + s.key());
        assertEquals(r.getMessageQueue().getQueueId(), m.getQueueId(), s.key());
        assertEquals(r.getQueueOffset(), m.getQueueOffset(), s.key());
    }

    @Test
    void aJsonHeaderedClientGetsItsAnswersInItsDialect() throws Exception {
        double before = MeterReadings.of(gateway.metrics()).coalesceSendsCount("coalesced");
        ScenarioResult send = ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
            .namesrv(gateway.namesrvAddress()).topic(topic497).count(20).keyPrefix("k497")
            .timeout(Duration.ofSeconds(60)).run().assertOk();
        assertEquals(20, MeterReadings.of(gateway.metrics()).coalesceSendsCount("coalesced") - before, 0.0, "taken by the coalescer");
        Map<String, MessageExt> received = receive(topic497, 20);
        DefaultMQProducer viewer = producer("view497");
        try {
            for (JsonNode line : send.lines("sent")) {
                String key = line.path("key").asText();
                MessageExt byId = viewer.viewMessage(topic497, line.path("offsetMsgId").asText());
                for (MessageExt m : List.of(byId, received.get(key))) {
                    assertStored(line, m);
                }
            }
        } finally {
            viewer.shutdown();
        }
    }

    /**
     * The broker refuses the batches (the queue the senders chose no longer exists on the broker, though their
     * routes still name it): every sender gets the broker's error, and nothing of the refused sends is stored.
     */
    @Test
    void aBatchTheBrokerRefusesFailsEachOfItsSendsAndStoresNothing() throws Exception {
        GatewayMetrics metrics = gateway.metrics();
        int senders = 64;
        List<DefaultMQProducer> producers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(senders);
        TopicConfig config = cluster.brokerController().getTopicConfigManager().getTopicConfigTable().get(refused);
        Map<String, Throwable> failures = new ConcurrentHashMap<>();
        double refusedBefore = MeterReadings.of(metrics).coalesceBatchesCount("refused");
        try {
            for (int p = 0; p < PRODUCERS; p++) {
                DefaultMQProducer producer = producer("r" + p);
                producers.add(producer);
                // a stored warm-up: the route is known, and the only message the topic will hold per producer
                SendResult warm = producer.send(new Message(refused, "t", "warm-" + p, body("warm-" + p, 64)),
                    new MessageQueue(refused, cluster.brokerName(), 0));
                assertEquals(SendStatus.SEND_OK, warm.getSendStatus());
            }
            // the broker now has one queue; the clients' routes still say four
            config.setWriteQueueNums(1);
            config.setReadQueueNums(1);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                String key = "refused-" + s;
                DefaultMQProducer producer = producers.get(s % PRODUCERS);
                done.add(pool.submit(() -> {
                    start.await();
                    try {
                        SendResult r = producer.send(new Message(refused, "t", key, body(key, 128)),
                            new MessageQueue(refused, cluster.brokerName(), 3));
                        throw new AssertionError("stored, though the broker refuses queue 3: " + r);
                    } catch (MQBrokerException e) {
                        failures.put(key, e);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            config.setWriteQueueNums(QUEUES);
            config.setReadQueueNums(QUEUES);
            producers.forEach(DefaultMQProducer::shutdown);
        }
        assertEquals(senders, failures.size());
        for (Map.Entry<String, Throwable> f : failures.entrySet()) {
            MQBrokerException e = (MQBrokerException) f.getValue();
            // the 5.4.0 broker's answer to an illegal queue id: INVALID_PARAMETER
            assertEquals(29, e.getResponseCode(), f.getKey() + ": " + e);
            assertTrue(e.getErrorMessage().contains("queueId[3] is illegal"), f.getKey() + ": " + e.getErrorMessage());
            assertTrue(e.getErrorMessage().contains("coalesced batch"), f.getKey() + ": " + e.getErrorMessage());
        }
        double refusedBatches = MeterReadings.of(metrics).coalesceBatchesCount("refused") - refusedBefore;
        assertTrue(refusedBatches >= 1 && refusedBatches < senders,
            "refused batches " + refusedBatches + " for " + senders + " sends: several shared a batch");
        Map<String, MessageExt> stored = receive(refused, PRODUCERS);
        Set<String> warmOnly = new TreeSet<>();
        for (int p = 0; p < PRODUCERS; p++) {
            warmOnly.add("warm-" + p);
        }
        assertEquals(warmOnly, stored.keySet(), "nothing of the refused sends was stored");
    }

    /** A scenario's "sent" line and the message stored for it: the key, the unique key and the position answered. */
    static void assertStored(JsonNode sentLine, MessageExt m) {
        String key = sentLine.path("key").asText();
        assertEquals(key, m.getKeys());
        assertEquals(sentLine.path("msgId").asText(), m.getProperty("UNIQ_KEY"), key);
        assertEquals(sentLine.path("queueId").asInt(), m.getQueueId(), key);
        assertEquals(sentLine.path("queueOffset").asLong(), m.getQueueOffset(), key);
    }

    private static byte[] body(String key, int size) {
        byte[] body = new byte[size];
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < size; i++) {
            body[i] = i < k.length ? k[i] : (byte) ('a' + (i % 26));
        }
        return body;
    }

    private static DefaultMQProducer producer(String hint) throws Exception {
        DefaultMQProducer p = GatewayClients.producer(cluster, gateway, hint);
        p.setSendMsgTimeout(30_000);
        return p;
    }

    private static Map<String, MessageExt> receive(String topic, int expected) throws Exception {
        return GatewayClients.receive(cluster, gateway, topic, expected, RECEIVE_TIMEOUT);
    }

}
