package io.rmqgw.probe;

import io.rmqgw.probe.ProbeTally.Counts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.client.impl.consumer.RebalanceImpl;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.exception.RemotingException;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;

/**
 * One probe run with real RocketMQ clients (rocketmq-client 5.4.0): a producer and a push consumer
 * sharing one client instance, pointed at {@link ProbeSettings#namesrv()} (a gateway or a name server).
 *
 * <ol>
 *   <li>Make sure the topic has a route; if the name server does not know it, send one warm-up message
 *       so a broker with {@code autoCreateTopicEnable} creates it, and wait for the route.</li>
 *   <li>Start the consumer (group unique to the run unless one was given, CONSUME_FROM_LAST_OFFSET with
 *       {@link RunOffsetStore}, so it starts at the end of each queue) and wait until its rebalance owns
 *       every queue of the topic and pulls from each, so nothing sent later is missed or delayed.</li>
 *   <li>Send {@code count} messages at {@code rate}, asynchronously, each with the run id and its
 *       sequence number in properties and keys; wait for every send's outcome.</li>
 *   <li>Wait up to the drain timeout for every acknowledged message to arrive; take the tally.</li>
 *   <li>Shut the consumer down, delete the run's group and its retry topic (best effort), shut the producer
 *       down.</li>
 * </ol>
 * Every wait is bounded; the sender sleeps between messages rather than spinning.
 */
public final class ProbeRunner {

    /** Message property: the run id. */
    public static final String RUN_PROPERTY = "RMQGW_PROBE_RUN";
    /** Message property: the sequence number ({@code -1} for the topic warm-up message). */
    public static final String SEQ_PROPERTY = "RMQGW_PROBE_SEQ";
    /** The tag of probe messages. */
    public static final String TAG = "rmqgw_probe";

    private static final long ADMIN_TIMEOUT_MILLIS = 3_000;
    private static final Duration SETTLE_MARGIN = Duration.ofSeconds(2);
    /** The client's delay before the first pull of a newly owned queue (500 ms in 5.4.0), and some. */
    static final Duration FIRST_PULL_WAIT = Duration.ofMillis(700);

    private final ProbeSettings settings;
    private final String runId;

    public ProbeRunner(ProbeSettings settings) {
        this(settings, newRunId());
    }

    ProbeRunner(ProbeSettings settings, String runId) {
        this.settings = settings;
        this.runId = runId;
    }

    /** A new run id: the time in hex and 24 random bits, e.g. {@code 19a2b3c4d5e6f0a1b2}. */
    static String newRunId() {
        return Long.toHexString(System.currentTimeMillis()) + String.format("%06x", new SecureRandom().nextInt(1 << 24));
    }

    public String runId() {
        return runId;
    }

    /** The consumer group: the one given, else {@code PREFIX_RUNID}. */
    String group() {
        return settings.group() != null ? settings.group() : ProbeSettings.DEFAULT_GROUP_PREFIX + "_" + runId;
    }

    /** Runs the probe; problems end up in the result, never as exceptions. */
    public ProbeResult run() {
        ProbeLogging logging;
        try {
            logging = ProbeLogging.setUp(settings.logDir());
        } catch (IOException | RuntimeException e) {
            ProbeTally empty = new ProbeTally(runId, settings.count());
            return new ProbeResult(settings, runId, group(), empty.counts(),
                "cannot set up the client log directory: " + Messages.oneLine(e), null, null, null, "skipped", null);
        }
        String group = group();
        ProbeTally tally = new ProbeTally(runId, settings.count());
        DefaultMQProducer producer = null;
        DefaultMQPushConsumer consumer = null;
        String error = null;
        Duration ready = Duration.ZERO;
        Duration sending = Duration.ZERO;
        Duration draining = Duration.ZERO;
        Counts counts = null;
        String cleanup = "skipped";
        try {
            long begin = System.nanoTime();
            long readyDeadline = begin + settings.readyTimeout().toNanos();
            producer = producer(group);
            producer.start();
            ensureRoute(producer, readyDeadline);
            consumer = consumer(group, tally);
            consumer.start();
            awaitQueues(consumer, readyDeadline);

            long start = System.nanoTime();
            ready = Duration.ofNanos(start - begin);
            send(producer, tally);
            tally.awaitSendsSettled(System.nanoTime() + settings.sendTimeout().plus(SETTLE_MARGIN).toNanos(),
                "no send result within " + settings.sendTimeout().toMillis() + "ms");
            long sent = System.nanoTime();
            sending = Duration.ofNanos(sent - start);
            tally.awaitDelivered(sent + settings.drainTimeout().toNanos());
            draining = Duration.ofNanos(System.nanoTime() - sent);
        } catch (ProbeFailure e) {
            error = e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = "interrupted";
        } catch (MQClientException | RuntimeException e) {
            error = Messages.oneLine(e);
        } finally {
            counts = tally.counts();
            if (consumer != null) {
                MQClientInstance instance = consumer.getDefaultMQPushConsumerImpl().getmQClientFactory();
                quietly(consumer::shutdown);
                if (settings.group() == null && settings.cleanup() && instance != null) {
                    cleanup = deleteGroup(instance.getMQClientAPIImpl(), group);
                }
            }
            if (producer != null) {
                quietly(producer::shutdown);
            }
        }
        ProbeResult provisional = new ProbeResult(settings, runId, group, counts, error, ready, sending, draining, cleanup,
            null);
        Path logs = logging.finish(!provisional.passed());
        return new ProbeResult(settings, runId, group, counts, error, ready, sending, draining, cleanup,
            logs == null ? null : logs.toString());
    }

    /** Runs a client shutdown after the tally was taken: a failure there must not hide the run's result. */
    private static void quietly(Runnable shutdown) {
        try {
            shutdown.run();
        } catch (RuntimeException e) {
            // the client logs its own shutdown problems; the probe's verdict is already made
        }
    }

    private String instanceName() {
        return "rmqgw-probe-" + runId;
    }

    private DefaultMQProducer producer(String group) {
        DefaultMQProducer p = new DefaultMQProducer(group);
        p.setNamesrvAddr(settings.namesrv());
        p.setInstanceName(instanceName());
        p.setSendMsgTimeout((int) Math.min(Integer.MAX_VALUE, settings.sendTimeout().toMillis()));
        p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE); // the probe sends --size bytes, not fewer
        p.setMaxMessageSize(Math.max(p.getMaxMessageSize(), settings.size()));
        return p;
    }

    private DefaultMQPushConsumer consumer(String group, ProbeTally tally) throws MQClientException {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(settings.namesrv());
        c.setInstanceName(instanceName());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        c.setOffsetStore(new RunOffsetStore()); // start at the end of every queue even for a brand-new group
        c.setConsumeMessageBatchMaxSize(1);
        c.subscribe(settings.topic(), "*");
        c.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            long now = System.currentTimeMillis();
            for (MessageExt m : messages) {
                tally.received(m.getProperty(RUN_PROPERTY), m.getProperty(SEQ_PROPERTY), m.getBornTimestamp(), now);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        return c;
    }

    private Message message(int seq, byte[] body) {
        Message m = new Message(settings.topic(), TAG, "rmqgw-probe-" + runId + "-" + seq, body);
        m.putUserProperty(RUN_PROPERTY, runId);
        m.putUserProperty(SEQ_PROPERTY, Integer.toString(seq));
        return m;
    }

    /** The topic has a route, or is auto-created by a warm-up message and then has one. */
    private void ensureRoute(DefaultMQProducer producer, long deadline) throws InterruptedException {
        try {
            producer.fetchPublishMessageQueues(settings.topic());
            return;
        } catch (MQClientException e) {
            if (!topicNotFound(e)) {
                throw new ProbeFailure("cannot get the route of topic " + settings.topic() + " from "
                    + settings.namesrv() + ": " + Messages.oneLine(e));
            }
        }
        try {
            producer.send(message(-1, "warm-up".getBytes(StandardCharsets.UTF_8)), settings.sendTimeout().toMillis());
        } catch (MQClientException | RemotingException | org.apache.rocketmq.client.exception.MQBrokerException e) {
            throw new ProbeFailure("topic " + settings.topic() + " does not exist and could not be auto-created (create"
                + " it, or enable autoCreateTopicEnable on the broker): " + Messages.oneLine(e));
        }
        MQClientException last = null;
        for (int pass = 0; pass < 10_000; pass++) {
            try {
                producer.fetchPublishMessageQueues(settings.topic());
                return;
            } catch (MQClientException e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                break;
            }
            Thread.sleep(200);
        }
        throw new ProbeFailure("topic " + settings.topic() + " was auto-created but has no route at " + settings.namesrv()
            + " after " + settings.readyTimeout().toSeconds() + "s" + (last == null ? "" : ": " + Messages.oneLine(last)));
    }

    private static boolean topicNotFound(MQClientException e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof RemotingException) {
                return false; // the name server was not reached
            }
            if (c instanceof MQClientException m && m.getResponseCode() == ResponseCode.TOPIC_NOT_EXIST) {
                return true;
            }
        }
        return e.getResponseCode() == ResponseCode.TOPIC_NOT_EXIST;
    }

    /**
     * Waits until the consumer's rebalance owns every queue of the topic and has started pulling each:
     * the client dispatches the first pull of a newly owned queue 500 ms after the rebalance, and a
     * message sent before that would show that wait as latency. A queue counts as pulling once its
     * last-pull time moves, or {@link #FIRST_PULL_WAIT} after it was owned (had the first pull happened
     * before we looked, the time would not move again until the next pull). Nudges the client every half
     * second (route refresh, heartbeat, rebalance) instead of waiting for its 20 s rebalance period.
     */
    private void awaitQueues(DefaultMQPushConsumer consumer, long deadline) throws InterruptedException {
        RebalanceImpl rebalance = consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl();
        MQClientInstance instance = consumer.getDefaultMQPushConsumerImpl().getmQClientFactory();
        String topic = settings.topic();
        Map<MessageQueue, Long> firstSeen = new HashMap<>();
        int known = 0;
        int owned = 0;
        int pulling = 0;
        long ownedSince = 0;
        for (int pass = 0; pass < 100_000; pass++) {
            Set<MessageQueue> queues = rebalance.getTopicSubscribeInfoTable().get(topic);
            known = queues == null ? 0 : queues.size();
            owned = 0;
            pulling = 0;
            for (Map.Entry<MessageQueue, ProcessQueue> e : rebalance.getProcessQueueTable().entrySet()) {
                if (!topic.equals(e.getKey().getTopic()) || e.getValue().isDropped()) {
                    continue;
                }
                owned++;
                long lastPull = e.getValue().getLastPullTimestamp();
                // a process queue starts with its creation time as "last pull"; a later value is a real pull
                if (lastPull != firstSeen.computeIfAbsent(e.getKey(), q -> lastPull)) {
                    pulling++;
                }
            }
            if (known > 0 && owned >= known) {
                if (ownedSince == 0) {
                    ownedSince = System.nanoTime();
                }
                if (pulling >= owned || System.nanoTime() - ownedSince >= FIRST_PULL_WAIT.toNanos()) {
                    return;
                }
            } else {
                ownedSince = 0;
            }
            if (System.nanoTime() - deadline > 0) {
                break;
            }
            Thread.sleep(50);
            if (owned < known || known == 0) {
                if (pass % 10 == 9) {
                    instance.updateTopicRouteInfoFromNameServer(topic);
                    instance.sendHeartbeatToAllBrokerWithLock();
                    instance.rebalanceImmediately();
                }
            }
        }
        throw new ProbeFailure("the consumer owned " + owned + " of " + known + " queues of topic " + topic
            + (owned > 0 ? " (pulling " + pulling + ")" : "") + " after " + settings.readyTimeout().toSeconds()
            + "s (is another consumer in group " + group() + "?)");
    }

    private void send(DefaultMQProducer producer, ProbeTally tally) throws InterruptedException {
        byte[] body = new byte[settings.size()];
        ThreadLocalRandom.current().nextBytes(body); // incompressible, like real payloads
        Pacer pacer = Pacer.of(settings.rate());
        long timeout = settings.sendTimeout().toMillis();
        for (int i = 0; i < settings.count(); i++) {
            pacer.awaitTurn(i);
            int seq = i;
            tally.attempted(seq);
            try {
                producer.send(message(seq, body), new SendCallback() {
                    @Override
                    public void onSuccess(SendResult result) {
                        tally.sent(seq);
                    }

                    @Override
                    public void onException(Throwable e) {
                        tally.failed(seq, Messages.oneLine(e));
                    }
                }, timeout);
            } catch (MQClientException | RemotingException | RuntimeException e) {
                tally.failed(seq, Messages.oneLine(e));
            }
        }
    }

    /** Deletes the run's group (offsets included) and its retry topic from the brokers and the name server. */
    private String deleteGroup(MQClientAPIImpl api, String group) {
        String retryTopic = MixAll.getRetryTopic(group);
        try {
            TopicRouteData route = api.getTopicRouteInfoFromNameServer(settings.topic(), ADMIN_TIMEOUT_MILLIS);
            for (BrokerData broker : route.getBrokerDatas()) {
                String master = broker.getBrokerAddrs() == null ? null : broker.getBrokerAddrs().get(MixAll.MASTER_ID);
                if (master == null) {
                    continue;
                }
                api.deleteSubscriptionGroup(master, group, true, ADMIN_TIMEOUT_MILLIS);
                api.deleteTopicInBroker(master, retryTopic, ADMIN_TIMEOUT_MILLIS);
            }
            for (String namesrv : List.of(settings.namesrv().split(";"))) {
                if (!namesrv.isBlank()) {
                    api.deleteTopicInNameServer(namesrv.trim(), retryTopic, ADMIN_TIMEOUT_MILLIS);
                }
            }
            return "ok";
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return "could not delete consumer group " + group + ": " + Messages.oneLine(e);
        }
    }

    /** Ends the run early with a reason. */
    private static final class ProbeFailure extends RuntimeException {
        ProbeFailure(String message) {
            super(message, null, false, false);
        }
    }
}
