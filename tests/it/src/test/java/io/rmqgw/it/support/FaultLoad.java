package io.rmqgw.it.support;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Load for a fault test: sync producers (rocketmq-client 5.4.0, in this JVM) sending without pause through one
 * name-server address, each acknowledged key recorded in a {@link DeliveryLedger}, each failure kept with its
 * cause; and a push consumer recording every key it receives in the same ledger. Nothing is retried by the
 * load itself: a failed key is never sent again, so a key received twice is a duplicate the path made (a
 * client's own retry of a send stored but answered as failed, or a redelivery).
 */
public final class FaultLoad implements AutoCloseable {

    /** How one failed send ended: its elapsed time, the broker code if an answer came, and the message. */
    public record Failure(String key, long atMillis, long elapsedMillis, int brokerCode, String message) {
    }

    private final String topic;
    private final DeliveryLedger ledger;
    private final List<DefaultMQProducer> producers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final List<DefaultMQPushConsumer> consumers = new ArrayList<>();
    private final Map<String, Failure> failures = new ConcurrentHashMap<>();
    private final AtomicInteger acknowledged = new AtomicInteger();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final long startNanos = System.nanoTime();
    private volatile Acknowledgements observer = (key, result, nanos) -> { };

    /** Told of every acknowledged send: its key, the client's result, and when (System.nanoTime()). */
    @FunctionalInterface
    public interface Acknowledgements {
        void acknowledged(String key, org.apache.rocketmq.client.producer.SendResult result, long atNanos);
    }

    private FaultLoad(String topic, DeliveryLedger ledger) {
        this.topic = topic;
        this.ledger = ledger;
    }

    /** As {@link #start}, with {@code observer} told of every acknowledged send from the first. */
    public static FaultLoad start(String namesrv, String topic, String group, int producerCount, long pauseMillis,
                                  Duration sendTimeout, int retries, DeliveryLedger ledger, Acknowledgements observer)
        throws Exception {
        return launch(namesrv, topic, group, producerCount, pauseMillis, sendTimeout, retries, ledger, observer);
    }

    /**
     * Starts a push consumer of {@code group} (from the first offset) and {@code producerCount} producers, each
     * sending one message after another (a pause of {@code pauseMillis} between sends, 50 ms after a failure)
     * with {@code sendTimeout} and {@code retries} (the client's retryTimesWhenSendFailed).
     */
    public static FaultLoad start(String namesrv, String topic, String group, int producerCount, long pauseMillis,
                                  Duration sendTimeout, int retries, DeliveryLedger ledger) throws Exception {
        return launch(namesrv, topic, group, producerCount, pauseMillis, sendTimeout, retries, ledger,
            (key, result, nanos) -> { });
    }

    private static FaultLoad launch(String namesrv, String topic, String group, int producerCount, long pauseMillis,
                                    Duration sendTimeout, int retries, DeliveryLedger ledger, Acknowledgements observer)
        throws Exception {
        FaultLoad load = new FaultLoad(topic, ledger);
        load.observer = observer;
        try {
            load.consumers.add(pushConsumer(group, topic, namesrv, group + "-c-" + System.nanoTime(),
                ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, ledger));
            for (int p = 0; p < producerCount; p++) {
                DefaultMQProducer producer = new DefaultMQProducer(group + "_p" + p);
                producer.setNamesrvAddr(namesrv);
                producer.setInstanceName(group + "-p" + p + "-" + System.nanoTime());
                producer.setSendMsgTimeout((int) sendTimeout.toMillis());
                producer.setRetryTimesWhenSendFailed(retries);
                producer.setPollNameServerInterval(1_000);
                // without a route the producer would create the topic on any broker with the default key
                producer.setCreateTopicKey("RMQGW_NO_SUCH_TOPIC");
                producer.start();
                load.producers.add(producer);
                String id = "p" + p;
                Thread t = new Thread(() -> load.produce(producer, id, pauseMillis),
                    "fault-load-" + topic + "-" + p);
                t.setDaemon(true);
                load.threads.add(t);
            }
            load.threads.forEach(Thread::start);
            return load;
        } catch (Exception | Error e) {
            load.close();
            throw e;
        }
    }

    private void produce(DefaultMQProducer producer, String id, long pauseMillis) {
        String prefix = topic + "-" + id + "-";
        for (int i = 0; !stop.get(); i++) {
            String key = prefix + i;
            long t0 = System.nanoTime();
            try {
                org.apache.rocketmq.client.producer.SendResult result = producer.send(new Message(topic, "f", key,
                    key.getBytes(StandardCharsets.UTF_8)));
                if (result.getSendStatus() == SendStatus.SEND_OK) {
                    ledger.sent(key);
                    observer.acknowledged(key, result, System.nanoTime());
                    acknowledged.incrementAndGet();
                } else {
                    failures.put(key, failure(key, t0, -1, "not SEND_OK"));
                }
                if (pauseMillis > 0) {
                    TimeUnit.MILLISECONDS.sleep(pauseMillis);
                }
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // the client wraps the broker's (or the gateway's) answer: keep the innermost answer's code and text
                Throwable answer = e;
                for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
                    if (t instanceof MQBrokerException) {
                        answer = t;
                    }
                }
                int code = answer instanceof MQBrokerException b ? b.getResponseCode() : -1;
                failures.put(key, failure(key, t0, code, String.valueOf(answer.getMessage())));
                try {
                    TimeUnit.MILLISECONDS.sleep(50);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private Failure failure(String key, long t0, int code, String message) {
        long now = System.nanoTime();
        return new Failure(key, TimeUnit.NANOSECONDS.toMillis(now - startNanos), TimeUnit.NANOSECONDS.toMillis(now - t0),
            code, message.length() > 300 ? message.substring(0, 300) : message);
    }

    /** A 5.4.0 push consumer (one consume thread) recording each key it receives in {@code ledger}. */
    public static DefaultMQPushConsumer pushConsumer(String group, String topic, String namesrv, String instance,
                                                     ConsumeFromWhere from, DeliveryLedger ledger) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName(instance);
        c.setPollNameServerInterval(2_000);
        c.setConsumeFromWhere(from);
        c.setConsumeThreadMin(1);
        c.setConsumeThreadMax(1);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            for (MessageExt m : msgs) {
                ledger.received(m.getKeys());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        return c;
    }

    public int acknowledged() {
        return acknowledged.get();
    }

    public int failed() {
        return failures.size();
    }

    /** Every failed send, by key. */
    public Map<String, Failure> failures() {
        return new TreeMap<>(failures);
    }

    /** Milliseconds since the load started (the clock of {@link Failure#atMillis()}). */
    public long elapsedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** Waits until {@code n} more sends than now are acknowledged. */
    public void awaitMoreAcknowledged(int n, Duration timeout) throws InterruptedException {
        int target = acknowledged() + n;
        await(target + " acknowledged sends (" + acknowledged() + " so far, " + failed() + " failed)", timeout,
            () -> acknowledged() >= target);
    }

    /** Stops the producers (the consumer goes on until {@link #close()}). */
    public void stopSending() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not stop");
            }
        }
    }

    /** Waits until every acknowledged send was received. */
    public void awaitNothingMissing(Duration timeout) throws InterruptedException {
        await("every acknowledged send received (" + ledger + ")", timeout, () -> ledger.missing().isEmpty());
    }

    public static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
    }

    /** Sends SIGSTOP, SIGCONT... to {@code pid}. */
    public static void signal(String signal, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new AssertionError("kill -" + signal + " " + pid + " failed");
        }
    }

    @Override
    public void close() {
        stop.set(true);
        producers.forEach(DefaultMQProducer::shutdown);
        consumers.forEach(DefaultMQPushConsumer::shutdown);
    }
}
