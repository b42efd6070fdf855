package io.rmqgw.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

/** 5.4.0 clients in the test JVM, pointed at a gateway: a producer without retries, and a consumer that checks. */
public final class GatewayClients {

    private GatewayClients() {
    }

    /** A started producer of its own group and client instance (its own connections), without send retries. */
    public static DefaultMQProducer producer(SharedCluster cluster, GatewayFixture gateway, String hint)
        throws Exception {
        return producer(cluster::group, gateway, hint);
    }

    /** As {@link #producer(SharedCluster, GatewayFixture, String)}, its group named by {@code groups} from a hint. */
    public static DefaultMQProducer producer(UnaryOperator<String> groups, GatewayFixture gateway, String hint)
        throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(groups.apply(hint + "_pg"));
        p.setNamesrvAddr(gateway.namesrvAddress());
        p.setInstanceName("rmqgw-it-" + hint + "-" + System.nanoTime());
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        return p;
    }

    /**
     * What a consumer of {@code topic} through the gateway receives from the first offset, by key: waits
     * (up to {@code timeout}) for {@code expected} messages, then 3 s more, so an extra or duplicate message
     * would show; fails on a duplicate key or another count.
     */
    public static Map<String, MessageExt> receive(SharedCluster cluster, GatewayFixture gateway, String topic,
                                                  int expected, Duration timeout) throws Exception {
        return receive(cluster::group, gateway, topic, expected, timeout);
    }

    /** As {@link #receive(SharedCluster, GatewayFixture, String, int, Duration)}, its group named by {@code groups}. */
    public static Map<String, MessageExt> receive(UnaryOperator<String> groups, GatewayFixture gateway, String topic,
                                                  int expected, Duration timeout) throws Exception {
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(groups.apply(topic + "_cg"));
        consumer.setNamesrvAddr(gateway.namesrvAddress());
        consumer.setInstanceName("rmqgw-it-consume-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.start();
        try {
            return poll(consumer, topic, expected, timeout);
        } finally {
            consumer.shutdown();
        }
    }

    /**
     * What a started lite pull consumer polls, by key: waits (up to {@code timeout}) for {@code expected} messages,
     * then 3 s more, so an extra or duplicate message would show; fails on a duplicate key or another count.
     */
    public static Map<String, MessageExt> poll(DefaultLitePullConsumer consumer, String topic, int expected,
                                               Duration timeout) {
        Map<String, MessageExt> byKey = new TreeMap<>();
        List<String> duplicates = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        long quietUntil = Long.MAX_VALUE;
        while (System.nanoTime() < Math.min(deadline, quietUntil)) {
            for (MessageExt m : consumer.poll(500)) {
                if (byKey.put(m.getKeys(), m) != null) {
                    duplicates.add(m.getKeys());
                }
            }
            if (byKey.size() >= expected && quietUntil == Long.MAX_VALUE) {
                quietUntil = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            }
        }
        return checked(topic, expected, byKey, duplicates);
    }

    /**
     * As {@link #receive(UnaryOperator, GatewayFixture, String, int, Duration)} with a push consumer, which pulls
     * with PULL_MESSAGE (5.x lite pull consumers use LITE_PULL_MESSAGE, which 4.x brokers do not know: the gateway
     * sends it to them as PULL_MESSAGE, see LegacyLitePullIT).
     */
    public static Map<String, MessageExt> receivePushed(UnaryOperator<String> groups, GatewayFixture gateway,
                                                        String topic, int expected, Duration timeout) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(groups.apply(topic + "_cg"));
        consumer.setNamesrvAddr(gateway.namesrvAddress());
        consumer.setInstanceName("rmqgw-it-consume-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        Map<String, MessageExt> byKey = new ConcurrentHashMap<>();
        List<String> duplicates = new CopyOnWriteArrayList<>();
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            for (MessageExt m : msgs) {
                if (byKey.putIfAbsent(m.getKeys(), m) != null) {
                    duplicates.add(m.getKeys());
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        try {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (byKey.size() < expected && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
            if (byKey.size() >= expected) {
                TimeUnit.SECONDS.sleep(3);
            }
        } finally {
            consumer.shutdown();
        }
        return checked(topic, expected, new TreeMap<>(byKey), duplicates);
    }

    /** {@code byKey}, once there were no duplicates and it holds {@code expected} messages. */
    private static Map<String, MessageExt> checked(String topic, int expected, Map<String, MessageExt> byKey,
                                                   List<String> duplicates) {
        assertTrue(duplicates.isEmpty(), "duplicates " + duplicates);
        assertEquals(expected, byKey.size(), () -> topic + " received " + (byKey.size() > 50 ? byKey.size()
            : new TreeSet<>(byKey.keySet())));
        return byKey;
    }

    /** Receives a topic's messages through a gateway, by key: exactly {@code expected} of them, none twice. */
    @FunctionalInterface
    public interface Receiver {
        Map<String, MessageExt> receive(String topic, int expected) throws Exception;
    }
}
