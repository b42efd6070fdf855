package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.VirtualConsumer;
import io.rmqgw.gateway.vq.VirtualQueueStats;
import io.rmqgw.gateway.vq.VirtualQueues;
import io.rmqgw.it.fixture.BrokerRequestRecorder;
import io.rmqgw.it.fixture.BrokerRequestRecorder.RecordedRequest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.Closer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Go client (rocketmq-client-go/v2, tests/client-go, built once with {@code go build}) through the gateway in
 * front of the real 5.4.0 broker: plain sends, a batch and a push consumer (its JSON headers re-encoded to the
 * binary encoding on the way to the broker), a mixed-destination batch to the fan-out topic, and more Go push
 * consumers than real queues sharing them through virtual queues. Go is required: without it these tests fail.
 */
@ExtendWith(SharedClusterExtension.class)
class GoClientIT {

    private static final Duration SEND_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration CONSUME_TIMEOUT = Duration.ofSeconds(45);
    private static final String DEST = FanoutConfig.DEFAULT_DESTINATION_PROPERTY;

    static SharedCluster cluster;
    @RegisterExtension
    static final Closer CLOSER = Closer.allTests();
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(SharedCluster shared) throws Exception {
        cluster = shared;
        gateway = CLOSER.add(GatewayFixture.start(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ,
            new FanoutConfig(true, null, null, null, null, null)));
    }

    private static String createTopic(String hint, int queues) throws Exception {
        String topic = cluster.topic(hint);
        Admin.createTopic(cluster.brokerAddress(), topic, queues);
        Admin.awaitRoute(cluster.namesrvAddress(), topic, cluster.brokerName(), Duration.ofSeconds(15));
        return topic;
    }

    private static ScenarioRunner.Spec go(String scenario, String topic) {
        return ScenarioRunner.goScenario(scenario).namesrv(gateway.namesrvAddress()).topic(topic);
    }

    @Test
    void goSendsABatchAndConsumesThroughTheGatewayInTheBinaryEncoding() throws Exception {
        String topic = createTopic("go_plain", 4);
        ScenarioResult sync;
        ScenarioResult batch;
        ScenarioResult consume;
        double upgradedBefore = MeterReadings.of(gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ);
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            sync = go("sync-send", topic).count(8).keyPrefix("gosync").timeout(SEND_TIMEOUT).run().assertOk();
            batch = go("batch-send", topic).count(6).keyPrefix("gobatch").timeout(SEND_TIMEOUT).run().assertOk();
            consume = go("push-consume", topic).group(cluster.group("go_plain")).count(14).arg("linger-ms", 2_000)
                .timeout(CONSUME_TIMEOUT).run().assertOk();

            // what reached the broker from the Go client: relayed by the gateway, headers in the binary encoding
            List<RecordedRequest> fromGo = rec.brokerRequests().stream().filter(r -> r.language() == LanguageCode.GO)
                .toList();
            Set<Integer> codes = fromGo.stream().map(RecordedRequest::code).collect(Collectors.toCollection(TreeSet::new));
            for (int code : List.of(RequestCode.SEND_MESSAGE, RequestCode.SEND_BATCH_MESSAGE, RequestCode.PULL_MESSAGE,
                RequestCode.HEART_BEAT, RequestCode.QUERY_CONSUMER_OFFSET)) {
                assertTrue(codes.contains(code), () -> "the broker got no request " + code + " from the Go client: " + codes);
            }
            assertEquals(Set.of(SerializeType.ROCKETMQ), fromGo.stream().map(RecordedRequest::serializeType)
                .collect(Collectors.toSet()), "the Go client's JSON headers arrive re-encoded");
            Set<String> upstream = gateway.upstreamEnds();
            Set<String> strangers = fromGo.stream().map(RecordedRequest::remoteAddress)
                .filter(a -> !upstream.contains(a)).collect(Collectors.toCollection(TreeSet::new));
            assertTrue(strangers.isEmpty(), () -> "Go requests from outside the gateway: " + strangers);
        }
        assertTrue(MeterReadings.of(gateway.metrics()).headerConversions(SerializeType.JSON, SerializeType.ROCKETMQ) > upgradedBefore,
            "the Go client sends JSON headers; the gateway counted their conversion");
        for (ScenarioResult r : List.of(sync, batch, consume)) {
            assertTrue(gateway.clientPorts().containsAll(r.remotePorts()),
                () -> r + " connected outside the gateway: " + r.remotePorts() + " gateway " + gateway.clientPorts());
        }
        // every id the broker answered leads back through the gateway
        String gatewayStoreHost = "127.0.0.1:" + gateway.brokerPort(cluster.brokerAddress());
        for (String id : batch.field("sent", "offsetMsgId")) {
            assertEquals(gatewayStoreHost, org.apache.rocketmq.common.message.MessageDecoder.decodeMessageId(id)
                .getAddress().toString().replaceFirst("^.*/", ""));
        }

        Set<String> sent = new TreeSet<>(sync.keys("sent"));
        sent.addAll(batch.keys("sent"));
        assertEquals(14, sent.size(), sync::describe);
        assertEquals(sent, new TreeSet<>(consume.keys("received")), consume::describe);
        assertEquals(0, consume.summaryLong("duplicates"), consume::describe);
        for (JsonNode m : consume.lines("received")) {
            String key = m.path("key").asText();
            assertEquals(key + "|" + key.substring(key.lastIndexOf('-') + 1) + "|", m.path("body").asText(), key);
            assertEquals(64, m.path("bodySize").asInt(), key);
            assertEquals("rmqgw", m.path("tags").asText(), key);
            assertEquals(gatewayStoreHost, m.path("storeHost").asText(), "stored message records point at the gateway");
        }

        // a 5.4.0 Java consumer reads the Go client's messages alike
        ScenarioResult java = ScenarioRunner.scenario(ClientVersion.V5_4_0, "push-consume")
            .namesrv(gateway.namesrvAddress()).topic(topic).group(cluster.group("go_plain_java")).count(14)
            .timeout(CONSUME_TIMEOUT).run().assertOk();
        assertEquals(sent, new TreeSet<>(java.keys("received")), java::describe);
        Map<String, String> goIds = new HashMap<>();
        sync.lines("sent").forEach(l -> goIds.put(l.path("key").asText(), l.path("msgId").asText()));
        for (JsonNode m : java.lines("received")) {
            if (goIds.containsKey(m.path("key").asText())) {
                assertEquals(goIds.get(m.path("key").asText()), m.path("msgId").asText(), "the Go client's unique key");
            }
        }
    }

    @Test
    void aGoBatchToTheFanoutTopicReachesEachDestinationIntact() throws Exception {
        String a = createTopic("go_fan_a", 2);
        String b = createTopic("go_fan_b", 2);
        ScenarioResult send = go("fanout-send", FanoutConfig.DEFAULT_TOPIC).count(6).keyPrefix("gofan")
            .arg("destinations", a + "|" + b + "|" + a + "," + b).timeout(SEND_TIMEOUT).run().assertOk();
        assertEquals(8, send.summary().path("offsetMsgIds").asText().split(",").length, send::describe);

        try (ScenarioProcess inA = go("push-consume", a).group(cluster.group("go_fan_a")).count(4)
                .arg("linger-ms", 2_000).timeout(CONSUME_TIMEOUT).start();
             ScenarioProcess inB = go("push-consume", b).group(cluster.group("go_fan_b")).count(4)
                .arg("linger-ms", 2_000).timeout(CONSUME_TIMEOUT).start()) {
            ScenarioResult ra = inA.await().assertOk();
            ScenarioResult rb = inB.await().assertOk();
            assertEquals(Set.of("gofan-0", "gofan-2", "gofan-3", "gofan-5"), new TreeSet<>(ra.keys("received")), ra::describe);
            assertEquals(Set.of("gofan-1", "gofan-2", "gofan-4", "gofan-5"), new TreeSet<>(rb.keys("received")), rb::describe);
            for (ScenarioResult r : List.of(ra, rb)) {
                assertEquals(0, r.summaryLong("duplicates"), r::describe);
                for (JsonNode m : r.lines("received")) {
                    String key = m.path("key").asText();
                    String seq = key.substring(key.indexOf('-') + 1);
                    assertEquals(key + "|" + seq + "|", m.path("body").asText(), key);
                    assertEquals("rmqgw", m.path("tags").asText(), key);
                    JsonNode props = m.path("userProperties");
                    assertEquals(seq, props.path("seq").asText(), key);
                    assertEquals("fanout", props.path("origin").asText(), key);
                    assertTrue(props.path(DEST).isMissingNode(), () -> key + " still carries " + DEST + ": " + props);
                }
            }
        }

        ScenarioResult refused = go("fanout-send", FanoutConfig.DEFAULT_TOPIC).count(2).keyPrefix("gofanbad")
            .arg("destinations", a + "|" + cluster.topic("go_fan_nosuch")).timeout(SEND_TIMEOUT).run();
        assertFalse(refused.ok(), refused::describe);
        String remark = refused.lines("send-error").get(0).path("brokerRemark").asText();
        assertTrue(remark.contains("fan-out refused, nothing was sent: destination ") && remark.contains("has no route"),
            refused::describe);
    }

    @Test
    void moreGoConsumersThanQueuesAllGetWorkThroughVirtualQueues() throws Exception {
        int realQueues = 2;
        int perRealQueue = 2;
        int consumers = realQueues * perRealQueue;
        int messages = 200;
        String topic = createTopic("go_vq", realQueues);
        String group = cluster.group("go_vq");
        VirtualQueueConfig vq = new VirtualQueueConfig(group, topic, perRealQueue, null, null, 8, null, null, null);
        List<ScenarioProcess> goConsumers = new ArrayList<>();
        try (GatewayFixture vqGateway = GatewayFixture.start(cluster.namesrvAddress(), HeaderEncoding.ROCKETMQ, null,
            List.of(vq))) {
            VirtualQueues queues = vqGateway.gateway().virtualQueues();
            for (int i = 0; i < consumers; i++) {
                goConsumers.add(ScenarioRunner.goScenario("push-consume").namesrv(vqGateway.namesrvAddress()).topic(topic)
                    .group(group).count(0).timeout(Duration.ofSeconds(90)).start());
            }
            Await.until("all " + consumers + " Go consumers registered on the virtual broker", Duration.ofSeconds(30),
                () -> queues.memberIds(group).size() == consumers);
            VirtualConsumer consumer = queues.consumer(group, topic);
            Await.until("the gateway owns the real queues", Duration.ofSeconds(30),
                () -> consumer.virtualQueueCount() == consumers);
            TimeUnit.SECONDS.sleep(3); // the Go consumers' rebalance after the broker's notification

            Set<String> sent = produce(topic, vqGateway.namesrvAddress(), messages);
            try {
                Await.until("every message acknowledged", Duration.ofSeconds(45), () -> {
                    VirtualQueueStats s = VirtualQueuesIT.stats(vqGateway, consumer);
                    return s.acknowledged() >= messages && s.leased() == 0 && s.available() == 0;
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + VirtualQueuesIT.stats(vqGateway, consumer), e);
            }
            Map<String, Integer> deliveries = new TreeMap<>();
            List<Integer> perConsumer = new ArrayList<>();
            for (ScenarioProcess p : goConsumers) {
                int n = 0;
                for (JsonNode line : p.linesSoFar()) {
                    if ("received".equals(line.path("type").asText())) {
                        deliveries.merge(line.path("key").asText(), 1, Integer::sum);
                        n++;
                    }
                }
                perConsumer.add(n);
            }
            Set<String> missing = new TreeSet<>(sent);
            missing.removeAll(deliveries.keySet());
            assertTrue(missing.isEmpty(), () -> missing.size() + " messages never consumed, e.g. "
                + missing.stream().limit(5).toList());
            assertEquals(Map.of(), deliveries.entrySet().stream().filter(e -> e.getValue() > 1)
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)), "consumed more than once");
            assertTrue(perConsumer.stream().allMatch(n -> n > 0), () -> "a Go consumer got no work: " + perConsumer);
            assertEquals(List.of(), queues.loop().submit(consumer::checkInvariants).get(5, TimeUnit.SECONDS));
        } finally {
            for (ScenarioProcess p : goConsumers) {
                p.close();
            }
        }
    }

    private static Set<String> produce(String topic, String namesrv, int messages) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(cluster.group("go_vq_p"));
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName("go-vq-producer-" + System.nanoTime());
        producer.start();
        Set<String> keys = new TreeSet<>();
        try {
            for (int i = 0; i < messages; i++) {
                String key = "govq-" + i;
                Message m = new Message(topic, "t", key, key.getBytes(StandardCharsets.UTF_8));
                assertEquals(SendStatus.SEND_OK, producer.send(m).getSendStatus());
                keys.add(key);
            }
        } finally {
            producer.shutdown();
        }
        return keys;
    }
}
