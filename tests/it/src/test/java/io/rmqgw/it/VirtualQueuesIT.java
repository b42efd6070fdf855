package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.VirtualConsumer;
import io.rmqgw.gateway.vq.VirtualQueueStats;
import io.rmqgw.gateway.vq.VirtualQueues;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.header.GetConsumerConnectionListRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.GetConsumerListByGroupRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Virtual queues against the real 5.4.0 broker: a topic with 4 queues, 16 push consumers of one group
 * through the gateway (12 rocketmq-client 5.4.0 consumers in this JVM, 4 forked 4.9.7 ones). All 16 get
 * work, each near its fair share; every message sent is consumed, none twice; the broker sees the gateway
 * as the group's only member and holds its commits; the gateway's own invariants hold (the same against a 4.9.7
 * broker: LegacyBrokerFeaturesIT). 5.4.0 lite pull consumers (LITE_PULL_MESSAGE) share the virtual queues too, and
 * one of another group reads the real queues in bypass. Two gateways in front of the cluster split
 * the real queues between them through the broker's own rebalance.
 */
@RocketMqCluster
class VirtualQueuesIT {

    private static final int REAL_QUEUES = 4;
    private static final int PER_REAL_QUEUE = 4;
    private static final int IN_JVM = 12;
    private static final int FORKED = 4;
    private static final int CONSUMERS = IN_JVM + FORKED;
    // 300 per consumer: a pull takes up to 32, so with 100 each one pull more or less was a third of a share
    private static final int MESSAGES = 4_800;
    private static final ObjectMapper JSON = new ObjectMapper();

    static ClusterUnderTest cluster;
    static GatewayFixture gateway;
    static String topic;
    static String group;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        topic = shared.topic("vq", REAL_QUEUES);
        group = shared.group("vq");
        // few leases per virtual queue: a consumer holds little, so the messages spread over all of them
        VirtualQueueConfig vq = new VirtualQueueConfig(group, topic, PER_REAL_QUEUE, null, null, 8, null, null, null);
        gateway = shared.closeAfterClass(GatewayFixture.on(shared).virtualQueues(List.of(vq)).start());
    }

    @Test
    void sixteenConsumersShareFourQueuesWithoutLossOrDuplicates() throws Exception {
        sixteenConsumersShareFourQueues(gateway, topic, group, cluster.brokerAddress(), cluster::group);
    }

    /**
     * 16 push consumers of {@code group} (12 of 5.4.0 in this JVM, 4 forked of 4.9.7) on {@code topic}, whose
     * {@value #REAL_QUEUES} real queues are at {@code brokerAddress}, through {@code gateway}, which serves the group
     * with {@value #PER_REAL_QUEUE} virtual queues per real queue: each gets its fair share of {@value #MESSAGES}
     * messages (+-25%), every message is consumed once, the broker sees the gateway as the group's only member and
     * holds its commit at the end of every queue. {@code groups} names other groups (the producer's) from a hint.
     */
    static void sixteenConsumersShareFourQueues(GatewayFixture gateway, String topic, String group,
                                                String brokerAddress, UnaryOperator<String> groups) throws Exception {
        VirtualQueues queues = gateway.gateway().virtualQueues();
        List<ScenarioProcess> forked = new ArrayList<>();
        List<DefaultMQPushConsumer> inJvm = new ArrayList<>();
        List<Map<String, AtomicInteger>> inJvmReceived = new ArrayList<>();
        try {
            for (int i = 0; i < FORKED; i++) {
                forked.add(ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume")
                    .namesrv(gateway.namesrvAddress()).topic(topic).group(group).count(0)
                    .arg("linger-ms", 45_000).timeout(Duration.ofSeconds(90))
                    .rebalanceInterval(Duration.ofSeconds(2)).start());
            }
            for (int i = 0; i < IN_JVM; i++) {
                Map<String, AtomicInteger> received = new ConcurrentHashMap<>();
                inJvmReceived.add(received);
                inJvm.add(pushConsumer(group, topic, gateway.namesrvAddress(), "vq-" + i, received));
            }
            // a loaded machine can time out a forked client's first route request: it asks again after 30 s
            await("all 16 consumers registered on the virtual broker", Duration.ofSeconds(150),
                () -> queues.memberIds(group).size() == CONSUMERS);
            // 16 members, 16 virtual queues: one each once every client has seen them all
            await("every in-JVM consumer holds exactly one virtual queue", Duration.ofSeconds(30), () -> inJvm.stream()
                .allMatch(c -> c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet().stream()
                    .filter(mq -> mq.getTopic().equals(topic)).count() == 1));
            VirtualConsumer consumer = queues.consumer(group, topic);
            await("the gateway owns the 4 real queues", Duration.ofSeconds(30),
                () -> consumer.virtualQueueCount() == REAL_QUEUES * PER_REAL_QUEUE);
            TimeUnit.SECONDS.sleep(5); // the forked consumers' rebalance (notified, and every 2 s)

            Set<String> sent = produce(topic, gateway.namesrvAddress(), MESSAGES, "vq-", groups.apply("vqp"));

            try {
                await("every message acknowledged", Duration.ofSeconds(90), () -> {
                    VirtualQueueStats s = stats(gateway, consumer);
                    return s.acknowledged() >= MESSAGES && s.leased() == 0 && s.available() == 0;
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + stats(gateway, consumer), e);
            }
            for (DefaultMQPushConsumer c : inJvm) {
                c.shutdown();
            }
            inJvm.clear();

            List<Integer> perConsumer = new ArrayList<>();
            Map<String, Integer> deliveries = new TreeMap<>();
            for (Map<String, AtomicInteger> r : inJvmReceived) {
                int n = 0;
                for (Map.Entry<String, AtomicInteger> e : r.entrySet()) {
                    deliveries.merge(e.getKey(), e.getValue().get(), Integer::sum);
                    n += e.getValue().get();
                }
                perConsumer.add(n);
            }
            for (ScenarioProcess p : forked) {
                ScenarioResult result = p.await();
                List<String> keys = result.keys("received");
                keys.forEach(k -> deliveries.merge(k, 1, Integer::sum));
                perConsumer.add(keys.size());
            }
            Set<String> missing = new HashSet<>(sent);
            missing.removeAll(deliveries.keySet());
            assertTrue(missing.isEmpty(), missing.size() + " messages never consumed, e.g. " + missing.stream().limit(5).toList());
            long duplicates = deliveries.values().stream().filter(n -> n > 1).count();
            assertEquals(0, duplicates, "messages consumed more than once without any fault");
            double fair = (double) MESSAGES / CONSUMERS;
            for (int i = 0; i < perConsumer.size(); i++) {
                int n = perConsumer.get(i);
                assertTrue(n >= 0.75 * fair && n <= 1.25 * fair, "consumer " + i + " got " + n + " of " + MESSAGES
                    + " (fair share " + fair + "): " + perConsumer);
            }

            // the broker sees the gateway as the group's only member, never the clients behind it
            GetConsumerListByGroupRequestHeader h = new GetConsumerListByGroupRequestHeader();
            h.setConsumerGroup(group);
            RemotingCommand answer = Admin.invoke(brokerAddress,
                RemotingCommand.createRequestCommand(RequestCode.GET_CONSUMER_LIST_BY_GROUP, h), Duration.ofSeconds(5));
            assertEquals(ResponseCode.SUCCESS, answer.getCode(), answer::getRemark);
            JsonNode ids = JSON.readTree(new String(answer.getBody(), StandardCharsets.UTF_8)).path("consumerIdList");
            assertEquals(1, ids.size(), ids::toString);
            assertTrue(ids.get(0).asText().contains("@rmqgw-"), ids::toString);
            // the real commits reached the broker (pushed once a second): the group's offset is each queue's end
            try {
                await("the broker holds the group's commit at the end of every queue", Duration.ofSeconds(15), () -> {
                    List<long[]> o = brokerOffsets(brokerAddress, topic, group);
                    return o.stream().allMatch(q -> q[0] == q[1]) && o.stream().mapToLong(q -> q[1]).sum() == MESSAGES;
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": commit/end per queue " + brokerOffsets(brokerAddress, topic,
                    group).stream().map(q -> q[0] + "/" + q[1]).toList(), e);
            }
            assertEquals(List.of(), queues.loop().submit(consumer::checkInvariants).get(5, TimeUnit.SECONDS));
            // the meters say the same (refreshed every second)
            await("the meters caught up", Duration.ofSeconds(5), () -> gateway.metrics().registry()
                .get("rmqgw.vq.acknowledged").tag("group", group).functionCounter().count() >= MESSAGES);
            assertEquals(0.0, gateway.metrics().registry().get("rmqgw.vq.invariant.violations").tag("group", group)
                .functionCounter().count());
            assertEquals(0.0, gateway.metrics().registry().get("rmqgw.vq.leases").tag("group", group).gauge().value());
            // every virtual queue was started by the client its rebalance gave it to; moves are among those starts
            double starts = gateway.metrics().registry().get("rmqgw.vq.starts").tag("group", group)
                .functionCounter().count();
            assertTrue(starts >= REAL_QUEUES * PER_REAL_QUEUE, () -> "virtual queue starts: " + starts);
            assertTrue(gateway.metrics().registry().get("rmqgw.vq.owner.changes").tag("group", group)
                .functionCounter().count() < starts);
            // everything consumed and acknowledged: the group's lag, as RocketMQ counts it, is back to 0
            await("the lag fell to 0", Duration.ofSeconds(15), () -> gateway.metrics().registry()
                .get("rmqgw.vq.lag.messages").tag("group", group).gauge().value() == 0.0);
        } finally {
            inJvm.forEach(DefaultMQPushConsumer::shutdown);
            for (ScenarioProcess p : forked) {
                p.close();
            }
        }
    }

    @Test
    void aBurstBacklogDrainsThroughPipelinedFetchesWithoutLossOrDuplicates() throws Exception {
        // a backlog written at once, straight to the broker: the gateway's fetches come back full with more behind
        // them, so several fetches per real queue are in flight and their answers must enter the window in order
        String topic4 = UniqueNames.topic("vq4");
        String group4 = cluster.group("vq4");
        GatewayFixture gw = gatewayServing(topic4, group4, null);
        List<Map<String, AtomicInteger>> received = new ArrayList<>();
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                Map<String, AtomicInteger> r = new ConcurrentHashMap<>();
                received.add(r);
                DefaultMQPushConsumer c = pushConsumer(group4, topic4, gw.namesrvAddress(), "vq4-" + i, r);
                consumers.add(c);
            }
            VirtualConsumer consumer = gw.gateway().virtualQueues().consumer(group4, topic4);
            await("the gateway owns the 4 real queues", Duration.ofSeconds(30),
                () -> consumer.virtualQueueCount() == REAL_QUEUES * PER_REAL_QUEUE);
            TimeUnit.SECONDS.sleep(3); // the consumers' rebalance over the virtual queues
            int messages = 6_000;
            Set<String> sent = new HashSet<>();
            DefaultMQProducer producer = new DefaultMQProducer(cluster.group("vq4p"));
            producer.setNamesrvAddr(cluster.namesrvAddress());
            producer.setInstanceName("vq4-producer");
            producer.start();
            try {
                for (int i = 0; i < messages; i += 100) {
                    List<Message> batch = new ArrayList<>();
                    for (int j = i; j < i + 100; j++) {
                        batch.add(new Message(topic4, "t", "vq4-" + j, ("m" + j).getBytes(StandardCharsets.UTF_8)));
                        sent.add("vq4-" + j);
                    }
                    assertEquals(SendStatus.SEND_OK, producer.send(batch).getSendStatus());
                }
            } finally {
                producer.shutdown();
            }
            try {
                await("every message acknowledged", Duration.ofSeconds(90), () -> {
                    VirtualQueueStats st = stats(gw, consumer);
                    return st.acknowledged() >= messages && st.leased() == 0 && st.available() == 0;
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + stats(gw, consumer), e);
            }
            consumers.forEach(DefaultMQPushConsumer::shutdown);
            consumers.clear();
            Map<String, Integer> deliveries = new TreeMap<>();
            received.forEach(r -> r.forEach((k, n) -> deliveries.merge(k, n.get(), Integer::sum)));
            Set<String> missing = new HashSet<>(sent);
            missing.removeAll(deliveries.keySet());
            assertTrue(missing.isEmpty(), missing.size() + " messages never consumed, e.g. " + missing.stream().limit(5).toList());
            assertEquals(0, deliveries.values().stream().filter(n -> n > 1).count(), "messages consumed twice without a fault");
            assertEquals(Set.of(), Set.copyOf(deliveries.keySet().stream().filter(k -> !sent.contains(k)).toList()),
                "messages of no send");
            VirtualQueueStats st = stats(gw, consumer);
            assertEquals(0, st.invariantViolationCount(), "invariant violations: " + st);
            assertTrue(received.stream().allMatch(r -> !r.isEmpty()), "a consumer got nothing: "
                + received.stream().map(Map::size).toList());
        } finally {
            consumers.forEach(DefaultMQPushConsumer::shutdown);
            gw.close();
        }
    }

    /**
     * 5.4.0 lite pull consumers (LITE_PULL_MESSAGE, 361) in subscribe mode: six of the served group, more than the
     * real queues, share the virtual queues as push consumers do (every message polled once, each consumer gets
     * work, their offset commits acknowledge the leases and the real commits reach the broker), and one of another
     * group reads the real queues in bypass, its 361s sent on to the broker as PULL_MESSAGE.
     */
    @Test
    void litePullConsumersShareTheVirtualQueuesAndABypassingOneReadsTheRealQueues() throws Exception {
        String topic5 = UniqueNames.topic("vq5");
        String group5 = cluster.group("vq5");
        String bypassGroup = cluster.group("vq5b");
        GatewayFixture gw = gatewayServing(topic5, group5, 8);
        VirtualQueues queues = gw.gateway().virtualQueues();
        Set<String> litePullsToBroker = ConcurrentHashMap.newKeySet();
        RPCHook recorder = new RPCHook() {
            @Override
            public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
                if (request.getCode() == RequestCode.LITE_PULL_MESSAGE && request.getExtFields() != null
                    && topic5.equals(request.getExtFields().get("topic"))) {
                    litePullsToBroker.add(remoteAddr);
                }
            }

            @Override
            public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            }
        };
        cluster.recorder().addBrokerHook(recorder);
        int served = 6;
        List<DefaultLitePullConsumer> consumers = new ArrayList<>();
        List<Map<String, AtomicInteger>> received = new ArrayList<>();
        try {
            for (int i = 0; i <= served; i++) {
                received.add(new ConcurrentHashMap<>());
                consumers.add(litePullConsumer(i < served ? group5 : bypassGroup, topic5, gw.namesrvAddress(),
                    "vq5-" + i));
            }
            VirtualConsumer consumer = queues.consumer(group5, topic5);
            await("the gateway owns the 4 real queues", Duration.ofSeconds(30),
                () -> consumer.virtualQueueCount() == REAL_QUEUES * PER_REAL_QUEUE);
            // their heartbeats (CONSUME_ACTIVELY) make them the served group's members, as push consumers
            await("the six lite pull consumers registered", Duration.ofSeconds(30),
                () -> queues.memberIds(group5).size() == served);
            TimeUnit.SECONDS.sleep(3); // the consumers' rebalance over the virtual queues
            int messages = 600;
            Set<String> sent = produce(topic5, gw.namesrvAddress(), messages, "vq5-");
            // polling also commits (auto commit every second, persisted every second)
            BooleanSupplier done = () -> {
                VirtualQueueStats st = stats(gw, consumer);
                return st.acknowledged() >= messages && st.leased() == 0 && st.available() == 0
                    && received.get(served).size() >= messages;
            };
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            while (!done.getAsBoolean()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("timed out: " + stats(gw, consumer) + ", polled per consumer "
                        + received.stream().map(Map::size).toList() + ", bypass requests " + gw.metrics().registry()
                        .find("rmqgw.vq.bypass.requests").counters().stream()
                        .map(c -> c.getId().getTag("code") + "=" + c.count()).toList());
                }
                for (int i = 0; i < consumers.size(); i++) {
                    // each poll answers one pull's messages: drain what the consumer holds
                    for (List<MessageExt> polled = consumers.get(i).poll(5); !polled.isEmpty();
                         polled = consumers.get(i).poll(0)) {
                        for (MessageExt m : polled) {
                            received.get(i).computeIfAbsent(m.getKeys(), k -> new AtomicInteger()).incrementAndGet();
                        }
                    }
                }
            }
            Map<String, Integer> deliveries = new TreeMap<>();
            received.subList(0, served).forEach(r -> r.forEach((k, n) -> deliveries.merge(k, n.get(), Integer::sum)));
            Set<String> missing = new HashSet<>(sent);
            missing.removeAll(deliveries.keySet());
            assertTrue(missing.isEmpty(), missing.size() + " messages never polled, e.g. " + missing.stream().limit(5).toList());
            assertEquals(0, deliveries.values().stream().filter(n -> n > 1).count(), "messages polled twice without a fault");
            List<Integer> perConsumer = received.subList(0, served).stream().map(Map::size).toList();
            assertTrue(perConsumer.stream().allMatch(n -> n > 0), "a lite pull consumer got nothing: " + perConsumer);
            assertEquals(sent, received.get(served).keySet(), "the bypassing group's messages");
            assertEquals(0, stats(gw, consumer).invariantViolationCount(), () -> "invariants: " + stats(gw, consumer));
            // both groups' commits reached the broker: the served group's real commits, the bypassing group's own
            for (String g : List.of(group5, bypassGroup)) {
                await(g + "'s commit at the end of every real queue", Duration.ofSeconds(15), () -> {
                    List<long[]> o = brokerOffsets(cluster.brokerAddress(), topic5, g);
                    return o.stream().allMatch(q -> q[0] == q[1]) && o.stream().mapToLong(q -> q[1]).sum() == messages;
                });
            }
            assertTrue(gw.metrics().registry().get("rmqgw.vq.bypass.requests")
                .tag("code", GatewayMetrics.requestCodeLabel(RequestCode.LITE_PULL_MESSAGE)).counter().count() > 0,
                "the bypassing consumer's LITE_PULL_MESSAGEs went through the bypass");
            assertTrue(MeterReadings.of(gw.metrics()).litePullsTranslated() > 0, "the bypassed lite pulls counted as sent as PULL_MESSAGE");
            assertEquals(Set.of(), litePullsToBroker, "LITE_PULL_MESSAGE on " + topic5 + " reached the broker "
                + "(the gateway sends a bypassed one on as PULL_MESSAGE, which every broker version knows)");
        } finally {
            cluster.recorder().removeBrokerHook(recorder);
            consumers.forEach(DefaultLitePullConsumer::shutdown);
            gw.close();
        }
    }

    @Test
    void reconsumeLaterGoesToTheBrokersRetryTopicWithTheDelayAsked() throws Exception {
        String topic3 = UniqueNames.topic("vq3");
        String group3 = cluster.group("vq3");
        GatewayFixture gw = gatewayServing(topic3, group3, 8);
        // key -> receipt times by reconsumeTimes (0: from the virtual queue, 1: from the group's retry topic)
        Map<String, Map<Integer, Long>> receipts = new ConcurrentHashMap<>();
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                DefaultMQPushConsumer c = new DefaultMQPushConsumer(group3);
                c.setNamesrvAddr(gw.namesrvAddress());
                c.setInstanceName("vq3-" + i);
                c.setPollNameServerInterval(2_000);
                c.subscribe(topic3, "*");
                c.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
                    MessageExt m = msgs.get(0);
                    receipts.computeIfAbsent(m.getKeys(), k -> new ConcurrentHashMap<>())
                        .merge(m.getReconsumeTimes(), System.nanoTime(), Math::min);
                    if (m.getReconsumeTimes() == 0) {
                        context.setDelayLevelWhenNextConsume(1); // 1 s
                        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                    }
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                c.start();
                consumers.add(c);
            }
            VirtualConsumer consumer = gw.gateway().virtualQueues().consumer(group3, topic3);
            await("the gateway owns the 4 real queues", Duration.ofSeconds(30),
                () -> consumer.virtualQueueCount() == REAL_QUEUES * PER_REAL_QUEUE);
            // the clients pull the retry topic from the broker, which refuses a subscription newer than the one the
            // gateway's heartbeat carried: the gateway heartbeats as soon as a client brings a newer one
            long clientsRetryVersion = consumers.stream().mapToLong(c -> c.getDefaultMQPushConsumerImpl()
                .getRebalanceImpl().getSubscriptionInner().get("%RETRY%" + group3).getSubVersion()).max().orElseThrow();
            await("the broker holds the clients' retry subscription", Duration.ofSeconds(2),
                () -> brokersRetryVersion(group3) == clientsRetryVersion);
            TimeUnit.SECONDS.sleep(3); // the consumers' rebalance over the virtual queues
            int messages = 10;
            Set<String> sent = produce(topic3, gw.namesrvAddress(), messages, "vq3-");
            try {
                await("every message consumed again from the retry topic", Duration.ofSeconds(60),
                    () -> sent.stream().allMatch(k -> receipts.getOrDefault(k, Map.of()).containsKey(1)));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": receipts by reconsumeTimes " + receipts + "; "
                    + stats(gw, consumer) + "; retry queues held " + consumers.stream().map(c -> c
                    .getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet().stream()
                    .filter(mq -> mq.getTopic().startsWith("%RETRY%")).count()).toList(), e);
            }
            for (String key : sent) {
                Map<Integer, Long> r = receipts.get(key);
                long waitedMillis = TimeUnit.NANOSECONDS.toMillis(r.get(1) - r.get(0));
                assertTrue(waitedMillis >= 800, key + " came back after " + waitedMillis + " ms: delay level 1 (1 s) ignored");
                assertEquals(Set.of(0, 1), r.keySet(), key + ": " + r);
            }
            await("the sent-back messages acknowledged on the virtual queues", Duration.ofSeconds(20), () -> {
                VirtualQueueStats st = stats(gw, consumer);
                return st.acknowledged() >= messages && st.leased() == 0;
            });
            VirtualQueueStats st = stats(gw, consumer);
            assertEquals(0L, st.redeliveries().getOrDefault(io.rmqgw.gateway.vq.RedeliveryReason.GAVE_BACK, 0L),
                "the broker redelivers through the retry topic, the gateway gives nothing back: " + st);
        } finally {
            consumers.forEach(DefaultMQPushConsumer::shutdown);
            gw.close();
        }
    }

    @Test
    void twoGatewaysSplitTheRealQueuesThroughTheBrokersRebalance() throws Exception {
        String topic2 = cluster.topic("vq2", REAL_QUEUES);
        String group2 = cluster.group("vq2");
        VirtualQueueConfig vq = new VirtualQueueConfig(group2, topic2, PER_REAL_QUEUE, null, null, 8, null, null, null);
        GatewayFixture second = GatewayFixture.on(cluster).virtualQueues(List.of(vq)).start();
        GatewayFixture first = GatewayFixture.on(cluster).virtualQueues(List.of(vq)).start();
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        Map<String, AtomicInteger> received = new ConcurrentHashMap<>();
        try {
            for (int i = 0; i < 8; i++) {
                consumers.add(pushConsumer(group2, topic2, (i % 2 == 0 ? first : second).namesrvAddress(), "vq2-" + i,
                    received));
            }
            VirtualConsumer a = first.gateway().virtualQueues().consumer(group2, topic2);
            VirtualConsumer b = second.gateway().virtualQueues().consumer(group2, topic2);
            await("each gateway owns half the real queues", Duration.ofSeconds(60),
                () -> a.virtualQueueCount() == REAL_QUEUES / 2 * PER_REAL_QUEUE
                    && b.virtualQueueCount() == REAL_QUEUES / 2 * PER_REAL_QUEUE);
            // the route first offered all 16 (before the second gateway took its half): every client sees 8, then
            // holds 2 of them (8 virtual queues over its gateway's 4 consumers)
            java.util.function.Supplier<String> views = () -> consumers.stream().map(c -> {
                var rebalance = c.getDefaultMQPushConsumerImpl().getRebalanceImpl();
                var subscribed = rebalance.getTopicSubscribeInfoTable().get(topic2);
                // the group's retry topic (real queues, the gateway's member list) may add one queue to one consumer
                long held = rebalance.getProcessQueueTable().keySet().stream().filter(mq -> mq.getTopic().equals(topic2))
                    .count();
                return (subscribed == null ? -1 : subscribed.size()) + "/" + held;
            }).toList().toString();
            try {
                await("every consumer sees its gateway's 8 virtual queues and holds 2", Duration.ofSeconds(60),
                    () -> views.get().equals(java.util.Collections.nCopies(8, "8/2").toString()));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": subscribed/held per consumer " + views.get()
                    + ", members " + first.gateway().virtualQueues().memberIds(group2) + " / "
                    + second.gateway().virtualQueues().memberIds(group2), e);
            }
            TimeUnit.SECONDS.sleep(2);

            int messages = 800;
            Set<String> sent = produce(topic2, first.namesrvAddress(), messages, "vq2-");
            try {
                await("every message acknowledged by one gateway or the other", Duration.ofSeconds(90), () -> {
                    VirtualQueueStats sa = stats(first, a);
                    VirtualQueueStats sb = stats(second, b);
                    return sa.acknowledged() + sb.acknowledged() >= messages && sa.leased() + sb.leased() == 0
                        && sa.available() + sb.available() == 0;
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + stats(first, a) + " / " + stats(second, b), e);
            }
            assertTrue(stats(first, a).acknowledged() > 0 && stats(second, b).acknowledged() > 0, "both gateways served");
            Set<String> missing = new HashSet<>(sent);
            missing.removeAll(received.keySet());
            assertTrue(missing.isEmpty(), missing.size() + " messages never consumed");
            assertEquals(0, received.values().stream().filter(n -> n.get() > 1).count(), "duplicates without a fault");

            GetConsumerListByGroupRequestHeader h = new GetConsumerListByGroupRequestHeader();
            h.setConsumerGroup(group2);
            RemotingCommand answer = Admin.invoke(cluster.brokerAddress(),
                RemotingCommand.createRequestCommand(RequestCode.GET_CONSUMER_LIST_BY_GROUP, h), Duration.ofSeconds(5));
            assertEquals(2, JSON.readTree(new String(answer.getBody(), StandardCharsets.UTF_8)).path("consumerIdList").size(),
                "the broker's members of the group are the two gateways");
        } finally {
            consumers.forEach(DefaultMQPushConsumer::shutdown);
            first.close();
            second.close();
        }
    }

    /** A 5.4.0 push consumer (one consume thread) counting each key it receives. */
    private static DefaultMQPushConsumer pushConsumer(String group, String topic, String namesrv, String instance,
                                                      Map<String, AtomicInteger> received) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName(instance);
        c.setPollNameServerInterval(2_000); // sees the virtual queue count change within seconds, not 30 s
        c.setConsumeThreadMin(1);
        c.setConsumeThreadMax(1);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            for (MessageExt m : msgs) {
                received.computeIfAbsent(m.getKeys(), k -> new AtomicInteger()).incrementAndGet();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        return c;
    }

    /** A 5.4.0 lite pull consumer subscribed to {@code topic}, committing automatically every second. */
    private static DefaultLitePullConsumer litePullConsumer(String group, String topic, String namesrv,
                                                            String instance) throws Exception {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(group);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName(instance);
        c.setPollNameServerInterval(2_000);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setAutoCommitIntervalMillis(1_000);
        c.setPersistConsumerOffsetInterval(1_000);
        c.subscribe(topic, "*");
        c.start();
        return c;
    }

    private static Set<String> produce(String topic, String namesrv, int messages, String keyPrefix) throws Exception {
        return produce(topic, namesrv, messages, keyPrefix, cluster.group("vqp"));
    }

    private static Set<String> produce(String topic, String namesrv, int messages, String keyPrefix,
                                       String producerGroup) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(producerGroup);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName(keyPrefix + "producer");
        producer.start();
        Set<String> keys = new HashSet<>();
        try {
            for (int i = 0; i < messages; i++) {
                String key = keyPrefix + i;
                Message m = new Message(topic, "t", key, ("m" + i).getBytes(StandardCharsets.UTF_8));
                assertEquals(SendStatus.SEND_OK, producer.send(m).getSendStatus());
                keys.add(key);
                if (i % 16 == 15) {
                    TimeUnit.MILLISECONDS.sleep(10); // a steady stream, not one burst
                }
            }
        } finally {
            producer.shutdown();
        }
        return keys;
    }

    /**
     * {commit, end} of each of the topic's {@value #REAL_QUEUES} queues as the broker at {@code brokerAddress} answers
     * QUERY_CONSUMER_OFFSET for {@code group} and GET_MAX_OFFSET (-1 for what it does not answer).
     */
    private static List<long[]> brokerOffsets(String brokerAddress, String topic, String group) {
        List<long[]> out = new ArrayList<>();
        for (int q = 0; q < REAL_QUEUES; q++) {
            QueryConsumerOffsetRequestHeader commit = new QueryConsumerOffsetRequestHeader();
            commit.setConsumerGroup(group);
            commit.setTopic(topic);
            commit.setQueueId(q);
            GetMaxOffsetRequestHeader end = new GetMaxOffsetRequestHeader();
            end.setTopic(topic);
            end.setQueueId(q);
            out.add(new long[] {offsetAnswer(brokerAddress, RequestCode.QUERY_CONSUMER_OFFSET, commit),
                offsetAnswer(brokerAddress, RequestCode.GET_MAX_OFFSET, end)});
        }
        return out;
    }

    private static long offsetAnswer(String brokerAddress, int code, CommandCustomHeader header) {
        try {
            RemotingCommand answer = Admin.invoke(brokerAddress, RemotingCommand.createRequestCommand(code, header),
                Duration.ofSeconds(5));
            return answer.getCode() == ResponseCode.SUCCESS ? Long.parseLong(answer.getExtFields().get("offset")) : -1;
        } catch (Exception e) {
            throw new IllegalStateException("request " + code + " to " + brokerAddress, e);
        }
    }

    /** A new topic of REAL_QUEUES queues and a gateway serving {@code group} on it ({@code maxLeases} null: default). */
    private static GatewayFixture gatewayServing(String topic, String group, Integer maxLeases) throws Exception {
        cluster.createTopic(topic, REAL_QUEUES);
        VirtualQueueConfig vq = new VirtualQueueConfig(group, topic, PER_REAL_QUEUE, null, null, maxLeases, null, null,
            null);
        return GatewayFixture.on(cluster).virtualQueues(List.of(vq)).start();
    }

    /** The consumer's stats, read on the gateway's virtual-queue loop (GoClientIT too). */
    static VirtualQueueStats stats(GatewayFixture on, VirtualConsumer consumer) {
        try {
            return on.gateway().virtualQueues().loop().submit(consumer::stats).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The subscription version of {@code group}'s retry topic that the broker holds (-1: none). */
    private static long brokersRetryVersion(String group) {
        GetConsumerConnectionListRequestHeader h = new GetConsumerConnectionListRequestHeader();
        h.setConsumerGroup(group);
        try {
            RemotingCommand answer = Admin.invoke(cluster.brokerAddress(), RemotingCommand.createRequestCommand(
                RequestCode.GET_CONSUMER_CONNECTION_LIST, h), Duration.ofSeconds(5));
            if (answer.getCode() != ResponseCode.SUCCESS) {
                return -1;
            }
            return JSON.readTree(new String(answer.getBody(), StandardCharsets.UTF_8))
                .path("subscriptionTable").path("%RETRY%" + group).path("subVersion").asLong(-1);
        } catch (Exception e) {
            return -1;
        }
    }

    private static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }
}
