package io.rmqgw.scenarios;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.RPCHook;

/** Options every scenario shares, the deadline, and the client factories. */
final class Ctx {

    final String scenario;
    final Out out;
    final String namesrv;
    final String topic;
    final String producerGroup;
    final String consumerGroup;
    final int count;
    final long timeoutMs;
    final long startNanos;
    final long deadlineNanos;
    final String keyPrefix;
    final String tag;
    final int bodySize;
    /** --random-body: bodies of random bytes after their prefix (incompressible), checked whole by consumers. */
    final boolean randomBody;
    final String instance;
    final Boolean vip;
    final int sendTimeoutMs;
    final int retries;
    final long pollNamesrvMs;
    final long lingerMs;
    final boolean fromLast;
    final String createTopicKey;
    final String shortId;
    /** RocketMQ ACL signing (AccessKey/Signature in every request), or null without --access-key. */
    final RPCHook aclHook;

    Ctx(String scenario, Args args, Out out, int defaultCount) {
        this.scenario = scenario;
        this.out = out;
        this.shortId = ProcessHandle.current().pid() + "-" + Long.toString(System.nanoTime() & 0xFFFFFFFL, 36);
        this.namesrv = args.required("namesrv");
        this.topic = args.required("topic");
        String safeScenario = scenario.replaceAll("[^A-Za-z0-9_-]", "_");
        // Default groups are unique per process: a transaction check-back must never reach a
        // producer of an earlier run, and a consumer must never resume an earlier run's offsets.
        this.producerGroup = args.str("producer-group", "rmqgw_pg_" + safeScenario + "_" + shortId);
        this.consumerGroup = args.str("group", "rmqgw_cg_" + safeScenario + "_" + shortId);
        this.count = args.integer("count", defaultCount);
        this.timeoutMs = args.longValue("timeout-ms", 60_000);
        this.startNanos = System.nanoTime();
        this.deadlineNanos = startNanos + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.keyPrefix = args.str("key-prefix", safeScenario + "-" + shortId);
        this.tag = args.str("tag", "rmqgw");
        this.bodySize = args.integer("body-size", 64);
        this.randomBody = Boolean.TRUE.equals(args.bool("random-body"));
        this.instance = args.str("instance", "rmqgw-" + safeScenario + "-" + shortId);
        this.vip = args.bool("vip");
        this.sendTimeoutMs = args.integer("send-timeout-ms", 5_000);
        this.retries = args.integer("retries", -1);
        this.pollNamesrvMs = args.longValue("poll-namesrv-ms", -1);
        this.lingerMs = args.longValue("linger-ms", 0);
        String from = args.str("from", "first");
        if (!"first".equals(from) && !"last".equals(from)) {
            throw new Args.UsageException("option --from must be first or last, was '" + from + "'");
        }
        this.fromLast = "last".equals(from);
        // The topic whose route producers borrow to auto-create an unknown topic (TBW102); naming a
        // topic that does not exist makes "no route" a send failure instead of an auto-creation.
        this.createTopicKey = args.str("create-topic-key", null);
        String accessKey = args.str("access-key", null);
        String secretKey = args.str("secret-key", null);
        if ((accessKey == null) != (secretKey == null)) {
            throw new Args.UsageException("--access-key and --secret-key go together");
        }
        this.aclHook = accessKey == null ? null : new AclClientRPCHook(new SessionCredentials(accessKey, secretKey));
        if (count < 0 || timeoutMs <= 0 || bodySize < 0) {
            throw new Args.UsageException("--count and --body-size must be >= 0, --timeout-ms > 0");
        }
    }

    long elapsedMs() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    long remainingMs() {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
    }

    boolean expired() {
        return System.nanoTime() - deadlineNanos >= 0;
    }

    String key(int seq) {
        return keyPrefix + "-" + seq;
    }

    /** Body: {@code key|seq|} padded with dots to {@code --body-size} bytes (never shorter than the prefix). */
    byte[] body(String key, int seq) {
        if (randomBody) {
            return randomBody(key, seq, bodySize);
        }
        StringBuilder sb = new StringBuilder(key).append('|').append(seq).append('|');
        while (sb.length() < bodySize) {
            sb.append('.');
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * {@code key|seq|R<size>|} then random bytes seeded by key and seq, {@code size} bytes in all (at least the
     * prefix): a consumer rebuilds it from its prefix ({@link #randomBodyIntact}).
     */
    static byte[] randomBody(String key, int seq, int size) {
        byte[] prefix = (key + "|" + seq + "|R" + size + "|").getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[Math.max(size, prefix.length)];
        System.arraycopy(prefix, 0, body, 0, prefix.length);
        java.util.Random random = new java.util.Random(key.hashCode() * 31L + seq);
        for (int i = prefix.length; i < body.length; i++) {
            body[i] = (byte) random.nextInt(256);
        }
        return body;
    }

    /** For a body made by {@link #randomBody}: whether it is exactly that body; null for any other body. */
    static Boolean randomBodyIntact(String key, byte[] body) {
        String head = new String(body, 0, Math.min(body.length, 200), StandardCharsets.ISO_8859_1);
        if (key == null || !head.startsWith(key + "|")) {
            return null;
        }
        String[] parts = head.substring(key.length() + 1).split("\\|", 3);
        if (parts.length < 3 || !parts[1].startsWith("R")) {
            return null;
        }
        try {
            return java.util.Arrays.equals(body,
                randomBody(key, Integer.parseInt(parts[0]), Integer.parseInt(parts[1].substring(1))));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    Message message(int seq) {
        String key = key(seq);
        return message(key, seq);
    }

    Message message(String key, int seq) {
        Message m = new Message(topic, tag, key, body(key, seq));
        return m;
    }

    private void common(ClientConfig c) {
        c.setNamesrvAddr(namesrv);
        c.setInstanceName(instance);
        if (vip != null) {
            c.setVipChannelEnabled(vip);
        }
        if (pollNamesrvMs > 0) {
            c.setPollNameServerInterval((int) pollNamesrvMs);
        }
    }

    DefaultMQProducer producer() {
        DefaultMQProducer p = new DefaultMQProducer(producerGroup, aclHook);
        configureProducer(p);
        return p;
    }

    void configureProducer(DefaultMQProducer p) {
        common(p);
        p.setSendMsgTimeout(sendTimeoutMs);
        if (createTopicKey != null) {
            p.setCreateTopicKey(createTopicKey);
        }
        if (retries >= 0) {
            p.setRetryTimesWhenSendFailed(retries);
            p.setRetryTimesWhenSendAsyncFailed(retries);
        }
    }

    DefaultMQPushConsumer pushConsumer(int consumeThreads) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(consumerGroup, aclHook, new AllocateMessageQueueAveragely());
        common(c);
        c.setConsumeFromWhere(fromLast ? ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
            : ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setConsumeThreadMax(Math.max(consumeThreads, 1));
        c.setConsumeThreadMin(Math.max(consumeThreads, 1));
        c.setConsumeMessageBatchMaxSize(1);
        c.subscribe(topic, "*");
        return c;
    }

    DefaultLitePullConsumer litePullConsumer() throws Exception {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(consumerGroup, aclHook);
        common(c);
        c.setConsumeFromWhere(fromLast ? ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
            : ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setAutoCommit(true);
        c.setPollTimeoutMillis(1_000);
        c.subscribe(topic, "*");
        return c;
    }

    Json.Obj line(String type) {
        return Json.obj().put("type", type).put("t", elapsedMs());
    }
}
