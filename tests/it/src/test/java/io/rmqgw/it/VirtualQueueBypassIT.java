package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.VirtualConsumer;
import io.rmqgw.gateway.vq.VirtualQueues;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.testing.UniqueNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.store.stats.BrokerStatsManager;
import org.junit.jupiter.api.Test;

/**
 * Other groups on a virtual-queue topic, against the real 5.4.0 broker: while group A is served on virtual queues
 * (two consumers), a plain concurrent group B, an orderly group C and a broadcasting group D (5.4.0 clients in this
 * JVM) and a concurrent group E (a forked 4.9.7 client) consume the same topic through the same gateway. Their
 * virtual queues are the real queues one to one, with real offsets: each of B, C, D and E gets every message, C in
 * each queue's order, B's commits land on the broker, and A still spreads over its consumers.
 */
@RocketMqCluster
class VirtualQueueBypassIT {

    private static final int REAL_QUEUES = 4;
    private static final int PER_REAL_QUEUE = 2;
    private static final int VIRTUAL_QUEUES = REAL_QUEUES * PER_REAL_QUEUE;
    private static final int MESSAGES = 200;

    /** A consumer and what it received: every key in arrival order, and per queue id the keys in order. */
    private record Received(DefaultMQPushConsumer consumer, List<String> keys, Map<Integer, List<String>> perQueue,
                            Set<String> redelivered) {
        static Received of(DefaultMQPushConsumer consumer) {
            return new Received(consumer, Collections.synchronizedList(new ArrayList<>()), new ConcurrentHashMap<>(),
                ConcurrentHashMap.newKeySet());
        }

        void add(MessageExt m) {
            if (m.getReconsumeTimes() > 0) {
                redelivered.add(m.getKeys());
            }
            keys.add(m.getKeys());
            perQueue.computeIfAbsent(m.getQueueId(), q -> Collections.synchronizedList(new ArrayList<>())).add(m.getKeys());
        }

        Set<String> distinct() {
            synchronized (keys) {
                return new HashSet<>(keys);
            }
        }

        long heldQueues(String topic) {
            return consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet().stream()
                .filter(mq -> mq.getTopic().equals(topic)).count();
        }
    }

    @Test
    void concurrentOrderlyAndBroadcastingGroupsReadTheRealQueuesBesideTheServedGroup(ClusterUnderTest cluster)
        throws Exception {
        String topic = UniqueNames.topic("bypass");
        String served = cluster.group("bypass-a");
        String plain = cluster.group("bypass-b");
        String orderly = cluster.group("bypass-c");
        String broadcast = cluster.group("bypass-d");
        String forked = cluster.group("bypass-e");
        System.setProperty("rocketmq.client.localOffsetStoreDir", cluster.dir().resolve("bypass-offsets").toString());
        cluster.createTopic(topic, REAL_QUEUES);
        VirtualQueueConfig vq = new VirtualQueueConfig(served, topic, PER_REAL_QUEUE, null, null, 8, null, null, null);
        GatewayFixture gateway = GatewayFixture.on(cluster).virtualQueues(List.of(vq)).start();
        List<Received> all = new ArrayList<>();
        ScenarioProcess e4 = null;
        try {
            String namesrv = gateway.namesrvAddress();
            // a 4.9.7 client too (group E, forked): consumes from the first offset until it has every message
            e4 = ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume").namesrv(namesrv).topic(topic).group(forked)
                .count(MESSAGES).timeout(Duration.ofSeconds(75)).rebalanceInterval(Duration.ofSeconds(2)).start();
            Received a0 = concurrent(served, topic, namesrv, "bypass-a0", MessageModel.CLUSTERING, all);
            Received a1 = concurrent(served, topic, namesrv, "bypass-a1", MessageModel.CLUSTERING, all);
            // B sends a few messages back (RECONSUME_LATER): the send-back goes on to the broker storing them
            Set<String> sentBack = Set.of("bypass-3", "bypass-50", "bypass-101");
            Received b = concurrent(plain, topic, namesrv, "bypass-b", MessageModel.CLUSTERING, sentBack, all);
            Received c = orderly(orderly, topic, namesrv, all);
            Received d = concurrent(broadcast, topic, namesrv, "bypass-d", MessageModel.BROADCASTING, all);

            VirtualQueues queues = gateway.gateway().virtualQueues();
            VirtualConsumer consumer = queues.consumer(served, topic);
            FaultLoad.await("the gateway owns the 4 real queues for " + served, Duration.ofSeconds(30),
                () -> consumer.virtualQueueCount() == VIRTUAL_QUEUES);
            FaultLoad.await("A's two consumers split the virtual queues; B, C and D each hold all of them",
                Duration.ofSeconds(30),
                () -> a0.heldQueues(topic) == VIRTUAL_QUEUES / 2 && a1.heldQueues(topic) == VIRTUAL_QUEUES / 2
                    && b.heldQueues(topic) == VIRTUAL_QUEUES && c.heldQueues(topic) == VIRTUAL_QUEUES
                    && d.heldQueues(topic) == VIRTUAL_QUEUES);
            FaultLoad.await("the orderly consumer locked every virtual queue", Duration.ofSeconds(30),
                () -> c.consumer().getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().entrySet()
                    .stream().filter(e -> e.getKey().getTopic().equals(topic)).allMatch(e -> e.getValue().isLocked()));
            TimeUnit.SECONDS.sleep(2); // the first pulls of every queue are at the brokers

            // key -> where the broker stored it
            Map<String, MessageQueue> storedIn = new ConcurrentHashMap<>();
            Map<String, Long> storedAt = new ConcurrentHashMap<>();
            DefaultMQProducer producer = new DefaultMQProducer(cluster.group("bypass-p"));
            producer.setNamesrvAddr(namesrv);
            producer.setInstanceName("bypass-producer");
            producer.start();
            try {
                for (int i = 0; i < MESSAGES; i++) {
                    String key = "bypass-" + i;
                    SendResult sent = producer.send(new Message(topic, "t", key, ("m" + i).getBytes(StandardCharsets.UTF_8)));
                    assertEquals(SendStatus.SEND_OK, sent.getSendStatus());
                    storedIn.put(key, sent.getMessageQueue());
                    storedAt.put(key, sent.getQueueOffset());
                    if (i % 20 == 19) {
                        TimeUnit.MILLISECONDS.sleep(20);
                    }
                }
            } finally {
                producer.shutdown();
            }
            Set<String> sent = storedIn.keySet();

            java.util.function.Supplier<String> progress = () -> "A " + (a0.distinct().size() + a1.distinct().size())
                + ", B " + b.distinct().size() + " (redelivered " + b.redelivered() + "), C " + c.distinct().size() + ", D " + d.distinct().size()
                + " of " + MESSAGES;
            try {
                FaultLoad.await("every group got every message", Duration.ofSeconds(45), () -> {
                    Set<String> served2 = a0.distinct();
                    served2.addAll(a1.distinct());
                    return served2.containsAll(sent) && b.distinct().containsAll(sent) && c.distinct().containsAll(sent)
                        && d.distinct().containsAll(sent) && b.redelivered().containsAll(sentBack);
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + progress.get(), e);
            }
            ScenarioResult fromForked = e4.await();
            Set<String> missedByForked = new HashSet<>(sent);
            fromForked.keys("received").forEach(missedByForked::remove);
            assertTrue(missedByForked.isEmpty(), "the 4.9.7 group missed " + missedByForked.size() + " messages");
            assertTrue(a0.distinct().size() > 0 && a1.distinct().size() > 0, "A spreads over both its consumers: "
                + progress.get());

            // C: every queue in the order the broker stored it; the records say the virtual queue, which for one
            // broker is the real queue's id (the bypass order: broker name, then queue id)
            Map<Integer, List<String>> expected = new TreeMap<>();
            for (String key : sent) {
                expected.computeIfAbsent(storedIn.get(key).getQueueId(), q -> new ArrayList<>()).add(key);
            }
            expected.values().forEach(keys -> keys.sort(Comparator.comparingLong(storedAt::get)));
            Map<Integer, List<String>> inOrder = new TreeMap<>();
            c.perQueue().forEach((queue, keys) -> {
                synchronized (keys) {
                    inOrder.put(queue, new ArrayList<>(new LinkedHashSet<>(keys)));
                }
            });
            assertEquals(expected, inOrder, "the orderly group's messages, per queue in the order stored");

            // B's commits are the real queues' own, on the broker: up to each queue's end once all is consumed
            var broker = cluster.sharedCluster().brokerController();
            FaultLoad.await("B's committed offsets reached every real queue's end on the broker", Duration.ofSeconds(20),
                () -> {
                for (int q = 0; q < REAL_QUEUES; q++) {
                    long committed = broker.getConsumerOffsetManager().queryOffset(plain, topic, q);
                    if (committed != queueEnd(cluster, topic, q)) {
                        return false;
                    }
                }
                return true;
            });
            assertTrue(gateway.metrics().registry().get("rmqgw.vq.bypass.requests")
                .tag("code", "PULL_MESSAGE").counter().count() > 0);
            assertTrue(gateway.metrics().registry().get("rmqgw.vq.bypass.requests")
                .tag("code", "LOCK_BATCH_MQ").counter().count() > 0);
            // B's send-backs went through the virtual broker and the broker took them itself (a refused one would have
            // been sent to the retry topic by the client instead, which the broker does not count as a send-back)
            assertEquals(sentBack.size(), gateway.metrics().registry().get("rmqgw.vq.bypass.requests")
                .tag("code", "CONSUMER_SEND_MSG_BACK").counter().count());
            var sendBacks = broker.getBrokerStatsManager().getStatsItem(
                BrokerStatsManager.SNDBCK_PUT_NUMS, topic + "@" + plain);
            assertEquals(sentBack.size(), sendBacks == null ? 0 : sendBacks.getValue().sum());
        } finally {
            all.forEach(r -> r.consumer().shutdown());
            if (e4 != null) {
                e4.close();
            }
            gateway.close();
        }
    }

    private static Received concurrent(String group, String topic, String namesrv, String instance, MessageModel model,
                                       List<Received> all) throws Exception {
        return concurrent(group, topic, namesrv, instance, model, Set.of(), all);
    }

    /** A concurrent consumer that answers RECONSUME_LATER (delay level 1: 1 s) to the first delivery of {@code later}. */
    private static Received concurrent(String group, String topic, String namesrv, String instance, MessageModel model,
                                       Set<String> later, List<Received> all) throws Exception {
        return start(consumer(group, topic, namesrv, instance, model), all, (c, r) -> c.registerMessageListener(
            (MessageListenerConcurrently) (msgs, context) -> {
                msgs.forEach(r::add);
                if (msgs.stream().anyMatch(m -> m.getReconsumeTimes() == 0 && later.contains(m.getKeys()))) {
                    context.setDelayLevelWhenNextConsume(1);
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            }));
    }

    private static Received orderly(String group, String topic, String namesrv, List<Received> all) throws Exception {
        return start(consumer(group, topic, namesrv, "bypass-c", MessageModel.CLUSTERING), all, (c, r) ->
            c.registerMessageListener((MessageListenerOrderly) (msgs, context) -> {
                msgs.forEach(r::add);
                return ConsumeOrderlyStatus.SUCCESS;
            }));
    }

    /** Starts {@code c} with the listener {@code listen} registers, recording what it receives. */
    private static Received start(DefaultMQPushConsumer c, List<Received> all,
                                  java.util.function.BiConsumer<DefaultMQPushConsumer, Received> listen) throws Exception {
        Received r = Received.of(c);
        listen.accept(c, r);
        c.start();
        all.add(r);
        return r;
    }

    private static DefaultMQPushConsumer consumer(String group, String topic, String namesrv, String instance,
                                                  MessageModel model) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName(instance);
        c.setMessageModel(model);
        c.setPollNameServerInterval(2_000);
        c.setPersistConsumerOffsetInterval(1_000);
        c.subscribe(topic, "*");
        return c;
    }

    /** The broker's max offset of {@code topic}'s queue {@code q} (-1 when the store cannot say). */
    private static long queueEnd(ClusterUnderTest cluster, String topic, int q) {
        try {
            return cluster.sharedCluster().brokerController().getMessageStore().getMaxOffsetInQueue(topic, q);
        } catch (Exception e) {
            return -1;
        }
    }
}
