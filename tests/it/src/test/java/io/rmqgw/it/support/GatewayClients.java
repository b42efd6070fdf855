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
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
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
        DefaultMQProducer p = new DefaultMQProducer(cluster.group(hint + "_pg"));
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
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(cluster.group(topic + "_cg"));
        consumer.setNamesrvAddr(gateway.namesrvAddress());
        consumer.setInstanceName("rmqgw-it-consume-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        Map<String, MessageExt> byKey = new TreeMap<>();
        List<String> duplicates = new ArrayList<>();
        consumer.start();
        try {
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
        } finally {
            consumer.shutdown();
        }
        assertTrue(duplicates.isEmpty(), "duplicates " + duplicates);
        assertEquals(expected, byKey.size(), () -> topic + " received " + (byKey.size() > 50 ? byKey.size()
            : new TreeSet<>(byKey.keySet())));
        return byKey;
    }
}
