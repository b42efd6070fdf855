package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.ClusterTopic;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.metrics.MeterReadings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.Test;

/**
 * Stopping the gateway under load (issue 16, item 1): four real sync producers and a long-polling
 * consumer work through it, then {@code close(10 s)} runs. The stop must end well inside the drain
 * timeout (new requests answered SYSTEM_BUSY at once, held pulls cut short, requests upstream finished),
 * and no send the broker stored may have been answered as failed: read straight from the broker, every
 * acknowledged key is there and no failed key is.
 */
@RocketMqCluster
class DrainIT {

    private static final int PRODUCERS = 4;
    private static final Duration DRAIN = Duration.ofSeconds(10);

    @Test
    void stopUnderLoadDrainsInsideTheTimeoutAndFailsNoStoredSend(ClusterUnderTest cluster,
        @ClusterTopic(hint = "drain") String topic) throws Exception {
        GatewayFixture gateway = GatewayFixture.on(cluster).start();

        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        Map<String, String> failed = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger sentBeforeStop = new AtomicInteger();
        List<DefaultMQProducer> producers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        DefaultLitePullConsumer polling = new DefaultLitePullConsumer(cluster.group("drain_poll"));
        try {
            // a consumer through the gateway: it holds a long poll at the broker most of the time
            polling.setNamesrvAddr(gateway.namesrvAddress());
            polling.setInstanceName("rmqgw-it-drain-poll-" + System.nanoTime());
            polling.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
            polling.subscribe(topic, "*");
            polling.start();
            Thread poller = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        polling.poll(500);
                    } catch (RuntimeException e) {
                        // the gateway goes away under it
                    }
                }
            }, "drain-poller");
            poller.setDaemon(true);
            poller.start();
            threads.add(poller);

            for (int p = 0; p < PRODUCERS; p++) {
                DefaultMQProducer producer = new DefaultMQProducer(cluster.group("drain_p" + p));
                producer.setNamesrvAddr(gateway.namesrvAddress());
                producer.setInstanceName("rmqgw-it-drain-" + p + "-" + System.nanoTime());
                // long enough that no answer the gateway relays arrives after the client gave up
                producer.setSendMsgTimeout(15_000);
                producer.start();
                producers.add(producer);
                int id = p;
                Thread t = new Thread(() -> {
                    for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
                        String key = "drain-" + id + "-" + i;
                        Message m = new Message(topic, "drain", key, ("drain " + key).getBytes(StandardCharsets.UTF_8));
                        try {
                            SendResult r = producer.send(m);
                            if (r.getSendStatus() == SendStatus.SEND_OK) {
                                acknowledged.add(key);
                                sentBeforeStop.incrementAndGet();
                            } else {
                                failed.put(key, r.getSendStatus().toString());
                            }
                        } catch (Exception e) {
                            failed.put(key, e.toString());
                            try {
                                Thread.sleep(50); // the gateway is gone: no tight loop meanwhile
                            } catch (InterruptedException ie) {
                                return;
                            }
                        }
                    }
                }, "drain-producer-" + p);
                t.start();
                threads.add(t);
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (sentBeforeStop.get() < 2000 && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            assertTrue(sentBeforeStop.get() >= 2000, "the producers did not get going: " + sentBeforeStop.get());

            int acknowledgedAtStop = acknowledged.size();
            long start = System.nanoTime();
            gateway.gateway().close(DRAIN);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            double busySends = MeterReadings.of(gateway.metrics()).requests(RequestCode.SEND_MESSAGE_V2, ResponseCode.SYSTEM_BUSY)
                + MeterReadings.of(gateway.metrics()).requests(RequestCode.SEND_MESSAGE, ResponseCode.SYSTEM_BUSY);
            double busyPulls = MeterReadings.of(gateway.metrics()).requests(RequestCode.PULL_MESSAGE, ResponseCode.SYSTEM_BUSY)
                + MeterReadings.of(gateway.metrics()).requests(RequestCode.LITE_PULL_MESSAGE, ResponseCode.SYSTEM_BUSY);
            Thread.sleep(1000); // the producers meet the closed gateway
            stop.set(true);
            for (Thread t : threads) {
                t.join(30_000);
                assertTrue(!t.isAlive(), t.getName() + " did not stop");
            }

            Map<String, Integer> stored = readFromTheBroker(cluster, topic, acknowledged.size());
            Set<String> lost = new TreeSet<>(acknowledged);
            lost.removeAll(stored.keySet());
            Map<String, String> failedButStored = new HashMap<>();
            failed.forEach((key, why) -> {
                if (stored.containsKey(key)) {
                    failedButStored.put(key, why);
                }
            });
            long duplicates = stored.values().stream().filter(n -> n > 1).count();
            Set<String> failureKinds = new HashSet<>();
            failed.values().forEach(v -> failureKinds.add(v.length() > 160 ? v.substring(0, 160) : v));
            System.err.println("[it] drain: stop took " + tookMillis + " ms (drain timeout " + DRAIN.toMillis()
                + " ms); " + acknowledgedAtStop + " sends acknowledged when it began, " + acknowledged.size()
                + " in all, " + failed.size() + " failed; the gateway answered " + (long) busySends
                + " sends and " + (long) busyPulls + " held pulls SYSTEM_BUSY; the broker holds " + stored.size()
                + " keys (" + duplicates + " twice or more); acknowledged but absent " + lost.size()
                + ", failed but stored " + failedButStored.size() + "; failure kinds " + failureKinds.size());
            failureKinds.stream().limit(8).forEach(k -> System.err.println("[it]   failure: " + k));

            assertTrue(tookMillis < DRAIN.toMillis(), "the stop waited out the drain timeout: " + tookMillis + " ms");
            assertTrue(lost.isEmpty(), "acknowledged but not on the broker: " + lost);
            assertTrue(failedButStored.isEmpty(), "answered as failed although the broker stored them: "
                + failedButStored);
            assertEquals(0, duplicates, "stored twice");
        } finally {
            stop.set(true);
            producers.forEach(DefaultMQProducer::shutdown);
            polling.shutdown();
            gateway.close();
        }
    }

    /** Every message of {@code topic}, read straight from the broker: key to how many times it is stored. */
    private static Map<String, Integer> readFromTheBroker(ClusterUnderTest cluster, String topic, int atLeast)
        throws Exception {
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(cluster.group("drain_check"));
        consumer.setNamesrvAddr(cluster.namesrvAddress());
        consumer.setInstanceName("rmqgw-it-drain-check-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        Map<String, Integer> byKey = new HashMap<>();
        consumer.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            long quietUntil = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(deadline, quietUntil)) {
                List<MessageExt> batch = consumer.poll(500);
                for (MessageExt m : batch) {
                    byKey.merge(m.getKeys(), 1, Integer::sum);
                }
                if (!batch.isEmpty()) {
                    quietUntil = Long.MAX_VALUE;
                }
                if (byKey.size() >= atLeast && quietUntil == Long.MAX_VALUE) {
                    quietUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                }
            }
        } finally {
            consumer.shutdown();
        }
        return byKey;
    }
}
