package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.ClusterConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.LogicalTopicConfig;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.DeliveryLedger;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Logical topics over two real clusters (issue 29): {@code default} is the shared in-process 5.4.0 cluster, {@code idc2}
 * a 5.4.0 name server and broker in a JVM of their own, whose broker has the same name as default's (so the union
 * shows it as {@code idc2-NAME}). Every topic here exists on both. Stored where is read from each acknowledged send's
 * offsetMsgId, whose store host is the gateway's listener of the broker that stored it.
 */
@RocketMqCluster
class LogicalTopicsIT {

    private static ForkedBroker idc2;

    @BeforeAll
    static void startSecondCluster(ClusterUnderTest shared) throws Exception {
        idc2 = ForkedBroker.create(UniqueNames.workDir("idc2"), null, "ItIdc2Cluster",
            shared.brokerName()).start();
    }

    @AfterAll
    static void stopSecondCluster() throws Exception {
        if (idc2 != null) {
            idc2.close();
        }
    }

    /** A topic of {@code queues} queues on both clusters, routed by both name servers. */
    private static String topicOnBoth(ClusterUnderTest shared, String hint, int queues) throws Exception {
        String topic = shared.topic(hint, queues);
        Admin.createTopic(idc2.brokerAddress(), topic, queues);
        Admin.awaitRoute(idc2.namesrvAddress(), topic, idc2.brokerName(), Duration.ofSeconds(30));
        return topic;
    }

    private static Map<String, ClusterConfig> idc2Clusters(String namesrv) {
        return Map.of("idc2", new ClusterConfig(List.of(HostPort.parse("idc2", namesrv))));
    }

    private static GatewayFixture gateway(ClusterUnderTest shared, List<LogicalTopicConfig> topics,
                                          Duration requestTimeout) throws InterruptedException {
        return GatewayFixture.on(shared).configure(c -> {
            GatewayConfig withTopics = c.withLogicalTopics(idc2Clusters(idc2.namesrvAddress()), topics);
            if (requestTimeout == null) {
                return withTopics;
            }
            UpstreamConfig u = withTopics.upstream();
            return withTopics.withUpstream(new UpstreamConfig(u.namesrv(), u.connectTimeout(), requestTimeout,
                u.longPollTimeout(), u.headerEncoding(), u.namesrvAddressUrl(), u.namesrvAddressPollInterval(),
                u.namesrvAddressTimeout(), u.acl(), u.tls()));
        }).start();
    }

    /** Which cluster stored a message, by its offsetMsgId's store host (the gateway's port for that broker). */
    private static String clusterOf(GatewayFixture gateway, ClusterUnderTest shared, String offsetMsgId) {
        int port;
        try {
            port = ((InetSocketAddress) MessageDecoder.decodeMessageId(offsetMsgId).getAddress()).getPort();
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError("offsetMsgId " + offsetMsgId + " names no address", e);
        }
        if (port == gateway.brokerPort(shared.brokerAddress())) {
            return "default";
        }
        if (port == gateway.brokerPort(idc2.brokerAddress())) {
            return "idc2";
        }
        return "port " + port;
    }

    private static long committedOffsets(String brokerAddress, String group, String topic, int queues)
        throws Exception {
        long total = 0;
        for (int q = 0; q < queues; q++) {
            QueryConsumerOffsetRequestHeader h = new QueryConsumerOffsetRequestHeader();
            h.setConsumerGroup(group);
            h.setTopic(topic);
            h.setQueueId(q);
            RemotingCommand answer = Admin.invoke(brokerAddress,
                RemotingCommand.createRequestCommand(RequestCode.QUERY_CONSUMER_OFFSET, h), Duration.ofSeconds(10));
            if (answer.getCode() == 0) {
                total += Long.parseLong(answer.getExtFields().get("offset"));
            }
        }
        return total;
    }

    @Test
    void producersOfBothClientVersionsStoreInBothClustersAndAConsumerReceivesEveryMessage(ClusterUnderTest shared)
        throws Exception {
        String topic = topicOnBoth(shared, "logical", 4);
        String group = UniqueNames.group("logical");
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), false)), null)) {
            ScenarioResult legacy = ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
                .namesrv(gateway.namesrvAddress()).topic(topic).count(100).keyPrefix("k497")
                .timeout(Duration.ofSeconds(90)).run().assertOk();
            ScenarioResult current = ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send")
                .namesrv(gateway.namesrvAddress()).topic(topic).count(100).keyPrefix("k540")
                .timeout(Duration.ofSeconds(90)).run().assertOk();

            Map<String, Long> storedIn = new TreeMap<>();
            Set<String> shownBrokers = new TreeSet<>();
            for (ScenarioResult r : List.of(legacy, current)) {
                for (JsonNode sent : r.lines("sent")) {
                    storedIn.merge(clusterOf(gateway, shared, sent.path("offsetMsgId").asText()), 1L, Long::sum);
                    shownBrokers.add(sent.path("broker").asText());
                }
            }
            System.err.println("[it] logical topic over two clusters: stored " + storedIn + ", brokers seen "
                + shownBrokers);
            assertEquals(Set.of("default", "idc2"), storedIn.keySet(), storedIn::toString);
            assertTrue(storedIn.get("default") >= 40 && storedIn.get("idc2") >= 40, "both take a share: " + storedIn);
            assertEquals(Set.of(shared.brokerName(), "idc2-" + shared.brokerName()), shownBrokers,
                "the colliding name is shown with its cluster");

            ScenarioResult received = ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume")
                .namesrv(gateway.namesrvAddress()).topic(topic).group(group).count(200)
                .timeout(Duration.ofSeconds(120)).run().assertOk();
            Set<String> sentKeys = new TreeSet<>(legacy.keys("sent"));
            sentKeys.addAll(current.keys("sent"));
            assertEquals(sentKeys, new TreeSet<>(received.keys("received")));
            assertEquals(Set.of(shared.brokerName(), "idc2-" + shared.brokerName()),
                new TreeSet<>(received.field("received", "broker")));
            // broadcasting consumers each get every message of both clusters
            DeliveryLedger first = new DeliveryLedger();
            DeliveryLedger second = new DeliveryLedger();
            List<DefaultMQPushConsumer> broadcast = new ArrayList<>();
            String broadcastGroup = UniqueNames.group("broadcast");
            try {
                for (DeliveryLedger ledger : List.of(first, second)) {
                    sentKeys.forEach(ledger::sent);
                    DefaultMQPushConsumer c = new DefaultMQPushConsumer(broadcastGroup);
                    c.setNamesrvAddr(gateway.namesrvAddress());
                    c.setInstanceName(UniqueNames.instance("broadcast"));
                    c.setMessageModel(org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel.BROADCASTING);
                    c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
                    c.subscribe(topic, "*");
                    c.registerMessageListener((org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently)
                        (msgs, context) -> {
                            msgs.forEach(m -> ledger.received(m.getKeys()));
                            return org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus
                                .CONSUME_SUCCESS;
                        });
                    c.start();
                    broadcast.add(c);
                }
                FaultLoad.await("both broadcasting consumers received all " + sentKeys.size(), Duration.ofSeconds(90),
                    () -> first.missing().isEmpty() && second.missing().isEmpty());
            } finally {
                broadcast.forEach(DefaultMQPushConsumer::shutdown);
            }
            // each cluster's broker holds the group's offsets of its own queues
            assertEquals(storedIn.get("default"), committedOffsets(shared.brokerAddress(), group, topic, 4));
            assertEquals(storedIn.get("idc2"), committedOffsets(idc2.brokerAddress(), group, topic, 4));
            // mqadmin consumerProgress through the gateway asks the brokers of the group's retry topic, which a cluster
            // has from the group's first send-back there (5.4.0 brokers do not make it on heartbeats): created on idc2
            // as an operator creates a group on each cluster, the group's queues on both clusters show, nothing behind
            Admin.createTopic(idc2.brokerAddress(), "%RETRY%" + group, 1);
            Admin.awaitRoute(idc2.namesrvAddress(), "%RETRY%" + group, idc2.brokerName(), Duration.ofSeconds(30));
            org.apache.rocketmq.tools.admin.DefaultMQAdminExt admin = new org.apache.rocketmq.tools.admin
                .DefaultMQAdminExt(10_000);
            admin.setNamesrvAddr(gateway.namesrvAddress());
            admin.setInstanceName(UniqueNames.instance("logical_admin"));
            admin.setAdminExtGroup(UniqueNames.group("logical_admin"));
            admin.start();
            try {
                org.apache.rocketmq.remoting.protocol.admin.ConsumeStats stats = admin.examineConsumeStats(group);
                assertEquals(Set.of(shared.brokerName(), "idc2-" + shared.brokerName()), stats.getOffsetTable()
                    .keySet().stream().filter(mq -> mq.getTopic().equals(topic)).map(MessageQueue::getBrokerName)
                    .collect(Collectors.toSet()));
                assertEquals(0, stats.computeTotalDiff(), stats.getOffsetTable()::toString);
            } finally {
                admin.shutdown();
            }
        }
    }

    @Test
    void transactionsCommitAndAreCheckedBackWhereTheirHalfMessageIs(ClusterUnderTest shared)
        throws Exception {
        // one client version: the gateway relays half messages of either alike (ClientScenarioContract runs both)
        Map<ClientVersion, String> topics = new TreeMap<>(Map.of(ClientVersion.V5_4_0,
            topicOnBoth(shared, "logical_tx", 4)));
        try (GatewayFixture gateway = gateway(shared, topics.values().stream().map(t -> new LogicalTopicConfig(t,
            List.of("default", "idc2"), false)).toList(), null)) {
            Set<String> storedIn = new TreeSet<>();
            for (ClientVersion version : topics.keySet()) {
                String topic = topics.get(version);
                ScenarioResult r = ScenarioRunner.scenario(version, "transaction")
                    .namesrv(gateway.namesrvAddress()).topic(topic).timeout(Duration.ofSeconds(120)).run();
                assertTrue(r.summary().path("unknownCheckedBack").asBoolean(), r::describe);
                String unknownKey = r.summary().path("unknownKey").asText();
                assertTrue(r.keys("checked").contains(unknownKey), r::describe);
                assertEquals(Set.of(unknownKey, r.summary().path("commitKey").asText()),
                    new TreeSet<>(r.keys("received")), r::describe);
                r.lines("received").forEach(l -> storedIn.add(l.path("broker").asText()));
            }
            System.err.println("[it] logical topic transactions: committed and checked back, received from "
                + storedIn);
        }
    }

    @Test
    void messagesConsumedLaterComeBackFromTheRetryTopicsOfBothClusters(ClusterUnderTest shared) throws Exception {
        String topic = topicOnBoth(shared, "logical_retry", 4);
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), false)), null)) {
            ScenarioResult r = ScenarioRunner.scenario(ClientVersion.V5_4_0, "reconsume")
                .namesrv(gateway.namesrvAddress()).topic(topic).count(8).timeout(Duration.ofSeconds(150)).run();
            Set<String> firstFrom = r.lines("received").stream().filter(l -> l.path("reconsumeTimes").asInt() == 0)
                .map(l -> l.path("broker").asText()).collect(Collectors.toCollection(TreeSet::new));
            Set<String> retriedFrom = r.lines("received").stream().filter(l -> l.path("reconsumeTimes").asInt() > 0)
                .map(l -> l.path("broker").asText()).collect(Collectors.toCollection(TreeSet::new));
            System.err.println("[it] logical topic reconsume: first deliveries from " + firstFrom + ", redeliveries"
                + " from " + retriedFrom);
            assertEquals(Set.of(shared.brokerName(), "idc2-" + shared.brokerName()), firstFrom, r::describe);
            assertEquals(8, r.summary().path("redelivered").size(), r::describe);
            assertEquals(Set.of(shared.brokerName(), "idc2-" + shared.brokerName()), retriedFrom,
                "the retry topic's union serves both clusters' retries");
        }
    }

    @Test
    void theClusterListThroughTheGatewayShowsBothClustersBehindItsListeners(ClusterUnderTest shared)
        throws Exception {
        String topic = topicOnBoth(shared, "clusterlist", 2);
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), false)), null)) {
            RemotingCommand answer = Admin.invoke(gateway.namesrvAddress(),
                RemotingCommand.createRequestCommand(RequestCode.GET_BROKER_CLUSTER_INFO, null),
                Duration.ofSeconds(30));
            assertEquals(0, answer.getCode(), answer::toString);
            org.apache.rocketmq.remoting.protocol.body.ClusterInfo info = org.apache.rocketmq.remoting.protocol
                .RemotingSerializable.decode(answer.getBody(), org.apache.rocketmq.remoting.protocol.body.ClusterInfo.class);
            assertEquals(Set.of(shared.clusterName(), idc2.clusterName()), info.getClusterAddrTable().keySet());
            String renamed = "idc2-" + shared.brokerName();
            assertEquals(Set.of(shared.brokerName(), renamed), info.getBrokerAddrTable().keySet());
            assertEquals("127.0.0.1:" + gateway.brokerPort(idc2.brokerAddress()),
                info.getBrokerAddrTable().get(renamed).getBrokerAddrs().get(0L));
        }
    }

    @Test
    void goClientsSendToBothClustersAndReceiveEveryMessage(ClusterUnderTest shared) throws Exception {
        String topic = topicOnBoth(shared, "logical_go", 4);
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), false)), null)) {
            ScenarioResult sent = ScenarioRunner.goScenario("sync-send").namesrv(gateway.namesrvAddress())
                .topic(topic).count(40).keyPrefix("go").timeout(Duration.ofSeconds(90)).run().assertOk();
            ScenarioResult received = ScenarioRunner.goScenario("push-consume").namesrv(gateway.namesrvAddress())
                .topic(topic).count(40).timeout(Duration.ofSeconds(120)).run().assertOk();
            Map<String, Long> storedIn = sent.lines("sent").stream().collect(Collectors.groupingBy(
                l -> clusterOf(gateway, shared, l.path("offsetMsgId").asText()), TreeMap::new, Collectors.counting()));
            System.err.println("[it] logical topic, Go client: stored " + storedIn);
            assertEquals(Set.of("default", "idc2"), storedIn.keySet(), storedIn::toString);
            assertEquals(new TreeSet<>(sent.keys("sent")), new TreeSet<>(received.keys("received")));
        }
    }

    @Test
    void aLogicalTopicOverA497ClusterAndA540OneServesBothClientVersions(ClusterUnderTest shared) throws Exception {
        String topic = shared.topic("logical_legacy", 4);
        try (ForkedBroker legacy = ForkedBroker.legacy(UniqueNames.workDir("legacy497"), "ItLegacyCluster",
                "it-legacy-a", new java.util.Properties(), List.of(topic + ":4")).start();
             GatewayFixture gateway = GatewayFixture.on(shared).configure(c -> c.withLogicalTopics(
                 Map.of("legacy", new ClusterConfig(List.of(HostPort.parse("legacy", legacy.namesrvAddress())))),
                 List.of(new LogicalTopicConfig(topic, List.of("default", "legacy"), false)))).start()) {
            Set<String> sentKeys = new TreeSet<>();
            Map<String, Long> storedIn = new TreeMap<>();
            for (ClientVersion version : ClientVersion.values()) {
                ScenarioResult sent = ScenarioRunner.scenario(version, "sync-send").namesrv(gateway.namesrvAddress())
                    .topic(topic).count(20).keyPrefix("to-legacy-" + version.version())
                    .timeout(Duration.ofSeconds(90)).run().assertOk();
                sentKeys.addAll(sent.keys("sent"));
                for (JsonNode l : sent.lines("sent")) {
                    int port = ((InetSocketAddress) MessageDecoder.decodeMessageId(l.path("offsetMsgId").asText())
                        .getAddress()).getPort();
                    storedIn.merge(port == gateway.brokerPort(legacy.brokerAddress()) ? "4.9.7" : "5.4.0", 1L,
                        Long::sum);
                }
            }
            ScenarioResult received = ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume")
                .namesrv(gateway.namesrvAddress()).topic(topic).count(40).timeout(Duration.ofSeconds(120)).run()
                .assertOk();
            System.err.println("[it] logical topic over a 4.9.7 and a 5.4.0 cluster: stored " + storedIn);
            assertEquals(Set.of("4.9.7", "5.4.0"), storedIn.keySet(), storedIn::toString);
            assertEquals(sentKeys, new TreeSet<>(received.keys("received")));
        }
    }

    @Test
    void aKilledClustersSendsMoveToTheSurvivorAtOnceAndNothingAcknowledgedIsLost(ClusterUnderTest shared)
        throws Exception {
        String topic = topicOnBoth(shared, "failover", 4);
        DeliveryLedger ledger = new DeliveryLedger();
        record Ack(long atNanos, String cluster) {
        }
        ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), false)), null);
             FaultLoad load = FaultLoad.start(gateway.namesrvAddress(), topic, UniqueNames.group("failover"), 16, 0,
                 Duration.ofSeconds(3), 2, ledger, (key, result, at) ->
                     acks.add(new Ack(at, clusterOf(gateway, shared, result.getOffsetMsgId()))))) {
            load.awaitMoreAcknowledged(1000, Duration.ofSeconds(60));
            assertTrue(acks.stream().anyMatch(a -> a.cluster().equals("idc2")), "idc2 took sends before the kill");

            long killedAt = System.nanoTime();
            long killedAtLoadMillis = load.elapsedMillis();
            idc2.kill();
            TimeUnit.SECONDS.sleep(3);
            int failedWhileDown = load.failed();
            long afterFirstSecond = load.failures().values().stream()
                .filter(f -> f.atMillis() > killedAtLoadMillis + 1000).count();
            long ackedWhileDown = acks.stream().filter(a -> a.atNanos() > killedAt).count();
            long ackedToIdc2AfterASecond = acks.stream().filter(a -> a.atNanos() - killedAt
                > TimeUnit.SECONDS.toNanos(1) && a.cluster().equals("idc2")).count();

            idc2.start();
            long restartedAt = System.nanoTime();
            FaultLoad.await("sends stored in idc2 again", Duration.ofSeconds(30), () -> acks.stream()
                .anyMatch(a -> a.atNanos() > restartedAt && a.cluster().equals("idc2")));
            long backAfterMillis = TimeUnit.NANOSECONDS.toMillis(acks.stream()
                .filter(a -> a.atNanos() > restartedAt && a.cluster().equals("idc2")).mapToLong(Ack::atNanos).min()
                .orElseThrow() - restartedAt);
            load.stopSending();
            load.awaitNothingMissing(Duration.ofSeconds(90));

            StringBuilder timeline = new StringBuilder();
            for (int bucket = -10; bucket < 30; bucket++) {
                long from = killedAt + TimeUnit.MILLISECONDS.toNanos(bucket * 100L);
                long to = from + TimeUnit.MILLISECONDS.toNanos(100);
                Map<String, Long> inBucket = acks.stream().filter(a -> a.atNanos() >= from && a.atNanos() < to)
                    .collect(Collectors.groupingBy(Ack::cluster, TreeMap::new, Collectors.counting()));
                timeline.append(String.format("%+5d ms %s%n", bucket * 100, inBucket));
            }
            double redirected = MeterReadings.of(gateway.metrics()).logicalSendsRedirected();
            System.err.println("[it] FAULT logical-topic failover (16 sync producers): acknowledged "
                + ledger.sentCount() + ", " + ackedWhileDown + " of them in the 3 s idc2 was down; failed "
                + load.failed() + " (" + failedWhileDown + " by the restart, " + afterFirstSecond + " later than 1 s"
                + " after the kill); lost " + ledger.missing().size() + ", duplicates " + ledger.duplicates()
                + "; redirected " + redirected + "; idc2 stored again " + backAfterMillis + " ms after its restart;"
                + " sends per 100 ms around the kill (by cluster):\n" + timeline);
            new TreeMap<>(load.failures()).values().stream().limit(5)
                .forEach(f -> System.err.println("[it]   failed send: " + f));
            assertEquals(Set.of(), ledger.missing(), "acknowledged sends never received");
            assertEquals(0, ackedToIdc2AfterASecond, "nothing can be stored in a killed cluster");
            assertTrue(ackedWhileDown > 200, "the survivor took the load while idc2 was down: " + ackedWhileDown);
            assertEquals(0, afterFirstSecond, "no send failed later than 1 s after the kill");
            assertTrue(redirected > 0, "the gateway redirected sends");
        }
    }

    @Test
    void aStoppedClustersShareFallsAndNoSendWaitsPastTheRequestTimeout(ClusterUnderTest shared) throws Exception {
        String topic = topicOnBoth(shared, "stalled", 4);
        DeliveryLedger ledger = new DeliveryLedger();
        ConcurrentLinkedQueue<String> storedWhileStopped = new ConcurrentLinkedQueue<>();
        long[] stoppedAt = {Long.MAX_VALUE};
        Duration requestTimeout = Duration.ofSeconds(2);
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), false)), requestTimeout);
             FaultLoad load = FaultLoad.start(gateway.namesrvAddress(), topic, UniqueNames.group("stalled"), 8, 5,
                 Duration.ofSeconds(5), 0, ledger, (key, result, at) -> {
                     if (at > stoppedAt[0]) {
                         storedWhileStopped.add(clusterOf(gateway, shared, result.getOffsetMsgId()));
                     }
                 })) {
            load.awaitMoreAcknowledged(500, Duration.ofSeconds(60));
            FaultLoad.signal("STOP", idc2.pid());
            stoppedAt[0] = System.nanoTime();
            try {
                TimeUnit.SECONDS.sleep(4);
            } finally {
                FaultLoad.signal("CONT", idc2.pid());
            }
            int storedDuringStop = storedWhileStopped.size();
            load.awaitMoreAcknowledged(200, Duration.ofSeconds(30));
            load.stopSending();
            load.awaitNothingMissing(Duration.ofSeconds(90));
            long slowest = load.failures().values().stream().mapToLong(FaultLoad.Failure::elapsedMillis).max()
                .orElse(0);
            Map<String, Long> where = storedWhileStopped.stream().collect(Collectors.groupingBy(c -> c, TreeMap::new,
                Collectors.counting()));
            System.err.println("[it] FAULT logical-topic SIGSTOP of idc2 for 4 s (8 producers): stored while stopped "
                + storedDuringStop + " (by then " + where + "), failed " + load.failed() + ", slowest failure "
                + slowest + " ms, redirected " + MeterReadings.of(gateway.metrics()).logicalSendsRedirected());
            load.failures().values().stream().limit(5).forEach(f -> System.err.println("[it]   failed send: " + f));
            assertTrue(storedDuringStop > 100, "the survivor took sends while idc2 was stopped: " + storedDuringStop);
            assertTrue(slowest <= requestTimeout.toMillis() + 1500, "a send waited " + slowest + " ms");
            assertEquals(Set.of(), ledger.missing());
        }
    }

    @Test
    void withItsNameServersUnreachableAClustersLastRouteKeepsItsQueuesServed(ClusterUnderTest shared)
        throws Exception {
        String topic = topicOnBoth(shared, "cachedroute", 2);
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), false)), null)) {
            ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send").namesrv(gateway.namesrvAddress()).topic(topic)
                .count(4).timeout(Duration.ofSeconds(60)).run().assertOk();
            // idc2's name servers are now an address nobody listens on
            String nowhere = "127.0.0.1:" + io.rmqgw.testing.FreePorts.port();
            GatewayConfig unreachable = gateway.gateway().config().withLogicalTopics(idc2Clusters(nowhere),
                gateway.gateway().config().logicalTopics());
            assertTrue(gateway.gateway().reload(unreachable).applied().contains("logical-topics"));

            ScenarioResult sent = ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
                .namesrv(gateway.namesrvAddress()).topic(topic).count(40).keyPrefix("cached")
                .timeout(Duration.ofSeconds(90)).run().assertOk();
            Map<String, Long> storedIn = sent.lines("sent").stream().collect(Collectors.groupingBy(
                l -> clusterOf(gateway, shared, l.path("offsetMsgId").asText()), TreeMap::new, Collectors.counting()));
            System.err.println("[it] idc2's name servers unreachable: a new client stored " + storedIn);
            assertTrue(storedIn.getOrDefault("idc2", 0L) > 0, "idc2 still served from its last route: " + storedIn);
            assertEquals(Set.of("default", "idc2"), Admin.route(gateway.namesrvAddress(), topic).getBrokerDatas()
                .stream().map(b -> b.getCluster().equals(shared.clusterName()) ? "default" : "idc2")
                .collect(Collectors.toSet()));
        }
    }

    @Test
    void anOrderedTopicKeepsEachQueuesOrderThroughAKillAndNothingIsRedirected(ClusterUnderTest shared)
        throws Exception {
        String topic = topicOnBoth(shared, "ordered", 2);
        String group = UniqueNames.group("ordered");
        Map<String, List<Integer>> receivedByQueue = new HashMap<>();
        DeliveryLedger ledger = new DeliveryLedger();
        try (GatewayFixture gateway = gateway(shared, List.of(new LogicalTopicConfig(topic,
            List.of("default", "idc2"), true)), null)) {
            DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
            consumer.setNamesrvAddr(gateway.namesrvAddress());
            consumer.setInstanceName(group + "-c");
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerOrderly) (msgs, context) -> {
                for (MessageExt m : msgs) {
                    String body = new String(m.getBody(), StandardCharsets.UTF_8);
                    synchronized (receivedByQueue) {
                        receivedByQueue.computeIfAbsent(m.getBrokerName() + "/" + m.getQueueId(),
                            q -> new ArrayList<>()).add(Integer.parseInt(body.substring(body.indexOf(':') + 1)));
                    }
                    ledger.received(m.getKeys());
                }
                return ConsumeOrderlyStatus.SUCCESS;
            });
            consumer.start();
            DefaultMQProducer producer = new DefaultMQProducer(UniqueNames.group("ordered_p"));
            producer.setNamesrvAddr(gateway.namesrvAddress());
            producer.setInstanceName(group + "-p");
            producer.setPollNameServerInterval(1_000);
            producer.setSendMsgTimeout(3_000);
            producer.setRetryTimesWhenSendFailed(0);
            producer.start();
            Map<String, String> choseVersusStored = new TreeMap<>();
            int failed = 0;
            try {
                long killAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                boolean killed = false;
                for (int seq = 0; seq < 600; seq++) {
                    if (!killed && System.nanoTime() > killAt) {
                        idc2.kill();
                        killed = true;
                    }
                    String key = topic + "-" + seq;
                    int orderId = seq % 4;
                    Message m = new Message(topic, "o", key, (orderId + ":" + seq).getBytes(StandardCharsets.UTF_8));
                    try {
                        SendResult r = producer.send(m, (mqs, msg, arg) -> mqs.get((Integer) arg % mqs.size()),
                            orderId);
                        if (r.getSendStatus() == SendStatus.SEND_OK) {
                            ledger.sent(key);
                            MessageQueue chosen = r.getMessageQueue();
                            String stored = clusterOf(gateway, shared, r.getOffsetMsgId());
                            String expected = chosen.getBrokerName().startsWith("idc2-") ? "idc2" : "default";
                            if (!stored.equals(expected)) {
                                choseVersusStored.put(key, chosen + " stored in " + stored);
                            }
                        }
                    } catch (Exception e) {
                        failed++;
                    }
                    TimeUnit.MILLISECONDS.sleep(10);
                }
                idc2.start();
                FaultLoad.await("every acknowledged ordered message received (" + ledger + ")",
                    Duration.ofSeconds(90), () -> ledger.missing().isEmpty());
            } finally {
                producer.shutdown();
                consumer.shutdown();
            }
            System.err.println("[it] ordered logical topic through a kill of idc2: acknowledged " + ledger.sentCount()
                + ", failed " + failed + ", received per queue " + receivedByQueue.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().size())));
            assertEquals(Map.of(), choseVersusStored, "every ordered send stored where its producer chose");
            synchronized (receivedByQueue) {
                receivedByQueue.forEach((queue, bodies) -> {
                    // redeliveries after a rebalance may repeat a run; what is new on a queue only goes forward
                    int highest = -1;
                    Set<Integer> seen = new java.util.HashSet<>();
                    for (int seq : bodies) {
                        assertTrue(seq > highest || seen.contains(seq),
                            "queue " + queue + " delivered " + seq + " for the first time after " + highest);
                        seen.add(seq);
                        highest = Math.max(highest, seq);
                    }
                });
            }
            assertEquals(Set.of(), ledger.missing());
        }
    }
}
