package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.it.fixture.BrokerRequestRecorder;
import io.rmqgw.it.fixture.BrokerRequestRecorder.RecordedRequest;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.UniqueNames;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageId;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.admin.ConsumeStats;
import org.apache.rocketmq.remoting.protocol.admin.OffsetWrapper;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.body.Connection;
import org.apache.rocketmq.remoting.protocol.body.ConsumerConnection;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The admin API of rocketmq-tools 5.4.0 ({@link DefaultMQAdminExt}, in this JVM) with the gateway
 * as its only name server: routes and the cluster list name gateway addresses only, consumer
 * progress and connections show a group that is online through the gateway, and a message is found
 * by the offsetMsgId a client got from a send through the gateway, which names the gateway's port.
 * The broker's request recorder shows every request it received in the meantime came over the
 * gateway's upstream connections: the admin never reached the broker itself.
 */
@RocketMqCluster
class AdminThroughGatewayIT {

    static ClusterUnderTest cluster;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        gateway = shared.closeAfterClass(GatewayFixture.on(shared).start());
    }

    private static DefaultMQAdminExt startAdmin() throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(10_000);
        admin.setNamesrvAddr(gateway.namesrvAddress());
        admin.setInstanceName("rmqgw-it-admin-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        admin.setAdminExtGroup("rmqgw_it_admin_" + System.nanoTime());
        admin.start();
        return admin;
    }

    /** {@code ip:port} is one of the gateway's ports and not the real broker (main or VIP). */
    private static void assertGatewayAddress(String what, String address) {
        assertNotNull(address, what);
        int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
        assertNotEquals(cluster.brokerAddress(), address, what + " is the real broker address");
        assertTrue(gateway.clientPorts().contains(port),
            () -> what + " " + address + " is no gateway port " + gateway.clientPorts());
    }

    @Test
    void adminToolsSeeTheGatewayOnly() throws Exception {
        String topic = UniqueNames.topic("admin");
        String group = cluster.group("admin");
        String consumerInstance = "rmqgw-it-admin-consumer-" + System.nanoTime();
        String advertised = gateway.gateway().brokerListeners().get(cluster.brokerAddress());
        int gatewayBrokerPort = gateway.brokerPort(cluster.brokerAddress());
        int n = 8;

        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            ScenarioResult send = ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send")
                .namesrv(gateway.namesrvAddress()).topic(topic).count(n).keyPrefix("admin")
                .timeout(Duration.ofSeconds(30)).run().assertOk();
            Map<String, String> offsetIdByKey = new LinkedHashMap<>();
            Map<String, String> msgIdByKey = new LinkedHashMap<>();
            for (JsonNode l : send.lines("sent")) {
                offsetIdByKey.put(l.path("key").asText(), l.path("offsetMsgId").asText());
                msgIdByKey.put(l.path("key").asText(), l.path("msgId").asText());
            }
            assertEquals(n, offsetIdByKey.size(), send::describe);

            DefaultMQAdminExt admin = startAdmin();
            ScenarioProcess consumer = null;
            try {
                // --- topic route: gateway addresses only
                TopicRouteData route = admin.examineTopicRouteInfo(topic);
                System.err.println("[it] admin route of " + topic + ": " + route.getBrokerDatas());
                assertFalse(route.getBrokerDatas().isEmpty(), route::toString);
                for (BrokerData bd : route.getBrokerDatas()) {
                    bd.getBrokerAddrs().values().forEach(a -> assertGatewayAddress("route address of " + bd.getBrokerName(), a));
                }
                assertEquals(advertised, route.getBrokerDatas().stream()
                    .filter(bd -> cluster.brokerName().equals(bd.getBrokerName())).findFirst().orElseThrow()
                    .getBrokerAddrs().get(0L), "the shared broker's master in the route");

                // --- cluster list: the broker at its gateway address, every address a gateway one
                ClusterInfo info = admin.examineBrokerClusterInfo();
                System.err.println("[it] admin cluster list: " + info.getBrokerAddrTable());
                assertTrue(info.getClusterAddrTable().get(cluster.clusterName()).contains(cluster.brokerName()),
                    () -> "cluster table " + info.getClusterAddrTable());
                assertEquals(advertised, info.getBrokerAddrTable().get(cluster.brokerName()).getBrokerAddrs().get(0L));
                info.getBrokerAddrTable().forEach((name, bd) -> bd.getBrokerAddrs().values()
                    .forEach(a -> assertGatewayAddress("cluster list address of " + name, a)));

                // --- query by id: the offsetMsgId names the gateway, and the message comes back through it
                for (Map.Entry<String, String> e : offsetIdByKey.entrySet()) {
                    MessageId id = MessageDecoder.decodeMessageId(e.getValue());
                    InetSocketAddress at = (InetSocketAddress) id.getAddress();
                    assertEquals(gatewayBrokerPort, at.getPort(), () -> "offsetMsgId " + e.getValue() + " names " + at);
                    assertNotEquals(cluster.brokerPort(), at.getPort());
                }
                String key = offsetIdByKey.keySet().iterator().next();
                String offsetMsgId = offsetIdByKey.get(key);
                int viewsBefore = (int) rec.brokerRequests().stream()
                    .filter(r -> r.code() == RequestCode.VIEW_MESSAGE_BY_ID).count();
                MessageExt m = admin.viewMessage(topic, offsetMsgId);
                assertNotNull(m, "viewMessage " + offsetMsgId);
                System.err.println("[it] viewMessage(" + offsetMsgId + "): key " + m.getKeys() + " store host "
                    + m.getStoreHost() + " msgId " + m.getMsgId());
                assertEquals(key, m.getKeys());
                assertEquals(topic, m.getTopic());
                assertTrue(new String(m.getBody(), StandardCharsets.UTF_8).startsWith(key + "|"),
                    () -> "body " + new String(m.getBody(), StandardCharsets.UTF_8));
                assertEquals(MessageDecoder.decodeMessageId(offsetMsgId).getOffset(), m.getCommitLogOffset(),
                    "commit log offset of the returned message");
                assertEquals(msgIdByKey.get(key), m.getMsgId(), "client message id (UNIQ_KEY) of the returned message");
                assertEquals(gatewayBrokerPort, ((InetSocketAddress) m.getStoreHost()).getPort(),
                    "store host of the returned message");
                // it was a VIEW_MESSAGE_BY_ID (not the fallback query by key), and it came over the gateway
                assertTrue(rec.brokerRequests().stream().filter(r -> r.code() == RequestCode.VIEW_MESSAGE_BY_ID)
                    .count() > viewsBefore, "the broker never received VIEW_MESSAGE_BY_ID");

                // --- a push consumer of the group online through the gateway
                consumer = ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume")
                    .namesrv(gateway.namesrvAddress()).topic(topic).group(group).count(n)
                    .arg("instance", consumerInstance).arg("linger-ms", 60_000)
                    .timeout(Duration.ofSeconds(90)).start();
                ScenarioProcess c = consumer;
                assertNotNull(consumer.awaitLine("received", Duration.ofSeconds(60)),
                    () -> "the consumer received nothing: " + c.linesSoFar());

                AtomicReference<ConsumeStats> stats = new AtomicReference<>();
                Await.until(() -> "consume stats of " + group + " with every message consumed: "
                        + (stats.get() == null ? "none" : stats.get().getOffsetTable()),
                    Duration.ofSeconds(45), Duration.ofMillis(500), () -> {
                        ConsumeStats s = admin.examineConsumeStats(group);
                        stats.set(s);
                        Map<MessageQueue, OffsetWrapper> ours = ofTopic(s, topic);
                        return !ours.isEmpty()
                            && ours.values().stream().mapToLong(OffsetWrapper::getBrokerOffset).sum() == n
                            && ours.values().stream().mapToLong(OffsetWrapper::getConsumerOffset).sum() == n;
                    });
                Map<MessageQueue, OffsetWrapper> queues = ofTopic(stats.get(), topic);
                System.err.println("[it] admin consume stats of " + group + ": " + queues.entrySet().stream()
                    .map(e -> e.getKey().getBrokerName() + "/" + e.getKey().getQueueId() + " broker "
                        + e.getValue().getBrokerOffset() + " consumer " + e.getValue().getConsumerOffset())
                    .collect(Collectors.joining(", ")));
                Set<Integer> queueIds = queues.keySet().stream().map(MessageQueue::getQueueId)
                    .collect(Collectors.toCollection(TreeSet::new));
                Set<Integer> sentQueues = send.lines("sent").stream().map(l -> l.path("queueId").asInt())
                    .collect(Collectors.toCollection(TreeSet::new));
                assertTrue(queueIds.containsAll(sentQueues), () -> "queues " + queueIds + " vs sent to " + sentQueues);
                assertTrue(queues.keySet().stream().allMatch(q -> cluster.brokerName().equals(q.getBrokerName())),
                    () -> "queues " + queues.keySet());

                ConsumerConnection conn = admin.examineConsumerConnectionInfo(group);
                System.err.println("[it] admin consumer connections of " + group + ": " + conn.getConnectionSet().stream()
                    .map(x -> x.getClientId() + " at " + x.getClientAddr() + " " + x.getLanguage() + " v" + x.getVersion())
                    .collect(Collectors.joining(", ")));
                assertTrue(conn.getConnectionSet().stream().map(Connection::getClientId)
                    .anyMatch(id -> id.contains(consumerInstance)), () -> "no connection of " + consumerInstance);
                assertTrue(conn.getSubscriptionTable().containsKey(topic), () -> "subscriptions "
                    + conn.getSubscriptionTable().keySet());
                // the broker saw the consumer over a gateway upstream connection
                for (Connection x : conn.getConnectionSet()) {
                    assertTrue(gateway.upstreamEnds().contains(x.getClientAddr()),
                        () -> "consumer connection " + x.getClientAddr() + " is no gateway upstream end");
                }
            } finally {
                admin.shutdown();
                if (consumer != null) {
                    consumer.close();
                }
            }

            // nothing reached the broker except over the gateway's own upstream connections
            Set<String> strangers = rec.brokerRequests().stream().map(RecordedRequest::remoteAddress)
                .collect(Collectors.toCollection(TreeSet::new));
            strangers.removeAll(gateway.upstreamEnds());
            assertTrue(strangers.isEmpty(), () -> "the broker saw peers that are no gateway upstream connection: "
                + strangers + " (codes " + rec.brokerRequests().stream().filter(r -> strangers.contains(r.remoteAddress()))
                .map(RecordedRequest::code).collect(Collectors.toCollection(TreeSet::new)) + ")");
        }
    }

    private static Map<MessageQueue, OffsetWrapper> ofTopic(ConsumeStats stats, String topic) {
        Map<MessageQueue, OffsetWrapper> out = new LinkedHashMap<>();
        stats.getOffsetTable().forEach((q, o) -> {
            if (topic.equals(q.getTopic())) {
                out.put(q, o);
            }
        });
        return out;
    }
}
