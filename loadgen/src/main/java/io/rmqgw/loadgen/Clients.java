package io.rmqgw.loadgen;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * What the bench needs from the RocketMQ client beyond sending and consuming, written so that the same
 * source compiles against rocketmq-client 4.9.7 and 5.4.0 (their {@code createTopic} signatures differ:
 * that one call goes through reflection).
 */
final class Clients {

    /** The key topic whose route names the brokers a new topic is created on (autoCreateTopicEnable keeps it). */
    static final String TOPIC_KEY = "TBW102";

    private Clients() {
    }

    /** The client library's version, e.g. {@code V5_4_0}. */
    static String version() {
        return MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION);
    }

    /**
     * Sends the client's logs to {@code dir} (4.x reads {@code rocketmq.client.logRoot}, 5.x's stock
     * configuration {@code rocketmq.log.root}) and, on 5.x, picks the client's own logback configuration
     * rather than the first {@code rmq.*.logback.xml} on the class path (the broker's, in rmqgw's). Call
     * before any client class is used.
     */
    static void logTo(Path dir) {
        String root = dir.toAbsolutePath().toString();
        setIfAbsent("rocketmq.client.logRoot", root);
        setIfAbsent("rocketmq.log.root", root);
        setIfAbsent("rocketmq.client.logLevel", "WARN");
        setIfAbsent("rmq.logback.configurationFile", "rmq.client.logback.xml");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /** A producer as the bench uses it: no compression (bodies are random), {@code retries} retries. */
    static DefaultMQProducer producer(String namesrv, String group, String instance, BenchSettings s) {
        DefaultMQProducer p = new DefaultMQProducer(group);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName(instance);
        p.setSendMsgTimeout((int) Math.min(Integer.MAX_VALUE, s.sendTimeout().toMillis()));
        p.setRetryTimesWhenSendFailed(s.retries());
        p.setRetryTimesWhenSendAsyncFailed(s.retries());
        p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE);
        p.setMaxMessageSize(Math.max(4 * 1024 * 1024, s.size() + 64 * 1024));
        return p;
    }

    /**
     * Creates or updates {@code topic} with {@code queues} read and write queues on every broker of the
     * {@value #TOPIC_KEY} route known to {@code namesrv} (UPDATE_AND_CREATE_TOPIC to each broker).
     */
    static void createTopic(String namesrv, String topic, int queues, String instance, BenchSettings s)
        throws MQClientException {
        DefaultMQProducer admin = producer(namesrv, "bench_admin_" + instance, "bench-admin-" + instance, s);
        admin.start();
        try {
            invokeCreateTopic(admin, topic, queues);
        } finally {
            admin.shutdown();
        }
    }

    private static void invokeCreateTopic(DefaultMQProducer admin, String topic, int queues) throws MQClientException {
        Method withAttributes = null;
        Method plain = null;
        for (Method m : DefaultMQProducer.class.getMethods()) {
            if (!m.getName().equals("createTopic")) {
                continue;
            }
            Class<?>[] t = m.getParameterTypes();
            if (t.length == 4 && t[2] == int.class && t[3] == Map.class) {
                withAttributes = m;
            } else if (t.length == 3 && t[2] == int.class) {
                plain = m;
            }
        }
        try {
            if (withAttributes != null) {
                withAttributes.invoke(admin, TOPIC_KEY, topic, queues, Map.of());
            } else if (plain != null) {
                plain.invoke(admin, TOPIC_KEY, topic, queues);
            } else {
                throw new IllegalStateException("this rocketmq-client has no createTopic(key, topic, queues)");
            }
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof MQClientException c) {
                throw c;
            }
            throw new IllegalStateException("createTopic failed: " + e.getCause(), e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Waits until {@code producer}'s name server (the target) answers a route for {@code topic} with at
     * least {@code queues} writable queues; returns how many it has.
     */
    static int awaitRoute(DefaultMQProducer producer, String topic, int queues, Duration timeout)
        throws InterruptedException, MQClientException {
        long deadline = System.nanoTime() + timeout.toNanos();
        MQClientException last = null;
        int seen = 0;
        while (System.nanoTime() - deadline < 0) {
            try {
                List<MessageQueue> q = producer.fetchPublishMessageQueues(topic);
                seen = q.size();
                if (seen >= queues) {
                    return seen;
                }
            } catch (MQClientException e) {
                last = e;
            }
            Thread.sleep(200);
        }
        if (last != null && seen == 0) {
            throw last;
        }
        throw new MQClientException("topic " + topic + " has " + seen + " queues after " + timeout.toSeconds()
            + "s, expected " + queues, null);
    }

    /** A short name for the kind of a failure: the exception's class and its response code. */
    static String reason(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c && !(c instanceof MQBrokerException)
            && !(c instanceof MQClientException && ((MQClientException) c).getResponseCode() > 0)
            && c.getClass().getName().startsWith("java.util.concurrent")) {
            c = c.getCause();
        }
        String name = c.getClass().getSimpleName();
        if (c instanceof MQBrokerException b) {
            return name + ":" + b.getResponseCode();
        }
        if (c instanceof MQClientException m) {
            if (m.getResponseCode() > 0) {
                return name + ":" + m.getResponseCode();
            }
            if (m.getCause() != null) {
                return name + "(" + m.getCause().getClass().getSimpleName() + ")";
            }
        }
        return name;
    }
}
