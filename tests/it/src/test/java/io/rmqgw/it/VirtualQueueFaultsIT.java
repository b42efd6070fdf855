package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.RedeliveryReason;
import io.rmqgw.gateway.vq.VirtualConsumer;
import io.rmqgw.gateway.vq.VirtualQueueStats;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedGateway;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.DeliveryLedger;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.testing.FreePorts;
import io.rmqgw.testing.UniqueNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Virtual queues under faults, against the real 5.4.0 broker: a topic with 4 queues, consumers of one group
 * through the gateway (rocketmq-client 5.4.0 in this JVM, forked 4.9.7 ones), a producer sending steadily.
 * Consumers killed with SIGKILL, a consumer stopped with SIGSTOP past the lease timeout, the gateway restarted
 * on its own ports: every acknowledged send is received (no loss), the backlog drains by itself, and the
 * duplicates stay within the documented bound of {@code window-size} per real queue per fault. A forked gateway
 * killed with SIGKILL and started again: no loss (its duplicates are reported: a crash's bound adds what was
 * acknowledged in its last second). Numbers: docs/RELIABILITY.md, "Virtual queues under faults".
 */
@RocketMqCluster
class VirtualQueueFaultsIT {

    private static final int REAL_QUEUES = 4;
    private static final int PER_REAL_QUEUE = 2;
    private static final int WINDOW = 32;
    private static final int LEASES_PER_QUEUE = 8;
    /**
     * Short, for CI: a consumer's rebalance drops a virtual queue together with the messages it prefetched there
     * and never pulls that queue again, so those leases end only at the lease timeout (default 60 s).
     */
    private static final Duration LEASE_TIMEOUT = Duration.ofSeconds(10);
    /** A message every 20 ms: a steady stream through every fault. */
    private static final long SEND_INTERVAL_MS = 20;

    static ClusterUnderTest cluster;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) {
        cluster = shared;
    }

    @Test
    void killedConsumersLeasesGoToTheOthers() throws Exception {
        try (Run run = Run.start("vqkill", LEASE_TIMEOUT, 4, 4, true)) {
            run.produceFor(Duration.ofSeconds(6));
            List<ScenarioProcess> killed = run.forked.subList(0, 2);
            for (ScenarioProcess p : killed) {
                assertTrue(received(p) > 0, p + " had work before it was killed");
            }
            for (ScenarioProcess p : killed) {
                p.process().destroyForcibly(); // SIGKILL: no unregister, no last commit
            }
            for (ScenarioProcess p : killed) {
                assertTrue(p.process().waitFor(10, TimeUnit.SECONDS), "killed " + p);
            }
            run.produceFor(Duration.ofSeconds(10));
            run.stopProducer();
            run.drainAndCheck("kill 2 of 8 consumers (SIGKILL)", 1);
        }
    }

    @Test
    void stoppedConsumersLeasesTimeOutAndGoToTheOthers() throws Exception {
        Duration leaseTimeout = Duration.ofSeconds(5);
        try (Run run = Run.start("vqstop", leaseTimeout, 2, 4, true)) {
            run.produceFor(Duration.ofSeconds(5));
            ScenarioProcess stopped = run.forked.get(0);
            assertTrue(received(stopped) > 0, stopped + " had work before it was stopped");
            long idleAtStop = run.stats().redeliveries().getOrDefault(RedeliveryReason.IDLE, 0L);
            FaultLoad.signal("STOP", stopped.pid());
            long idleDuringStop;
            try {
                // past the lease timeout: its leases go to the others while it sleeps, and the stream goes on
                run.produceFor(Duration.ofSeconds(20));
                idleDuringStop = run.stats().redeliveries().getOrDefault(RedeliveryReason.IDLE, 0L) - idleAtStop;
            } finally {
                FaultLoad.signal("CONT", stopped.pid());
            }
            run.produceFor(Duration.ofSeconds(5));
            run.stopProducer();
            assertTrue(stopped.isAlive(), "the continued consumer lives on");
            assertTrue(idleDuringStop > 0, "leases ended by the lease timeout while the consumer slept");
            System.out.println("VQ-FAULTS leases ended by lease-timeout during the stop: " + idleDuringStop
                + " (before it: " + idleAtStop + ")");
            run.drainAndCheck("SIGSTOP 1 of 6 consumers for 20 s (lease-timeout 5 s), then SIGCONT", 1);
        }
    }

    @Test
    void restartedGatewayRedeliversAtMostTheWindow() throws Exception {
        // the producer goes straight to the brokers: the fault under test is the consuming side's gateway
        try (Run run = Run.start("vqrestart", LEASE_TIMEOUT, 2, 4, false)) {
            run.produceFor(Duration.ofSeconds(6));
            long acknowledgedBefore = run.stats().acknowledged();
            assertTrue(acknowledgedBefore > 0, "the first gateway served");
            run.gateway = run.gateway.restart();
            run.produceFor(Duration.ofSeconds(10));
            run.stopProducer();
            Result r = run.drainAndCheck("restart the gateway (close, start on the same ports)", 1);
            assertTrue(r.stats.acknowledged() > 0, "the restarted gateway served: " + r);
        }
    }

    @Test
    void crashedGatewayLosesNothing() throws Exception {
        // a forked gateway killed with SIGKILL (nothing pushed on the way out) and started again on its ports
        String topic = cluster.topic("vqcrash", REAL_QUEUES);
        String group = cluster.group("vqcrash");
        String vqYaml = "virtual-queues:\n  - {group: " + group + ", topic: " + topic + ", per-real-queue: "
            + PER_REAL_QUEUE + ", window-size: " + WINDOW + ", max-leases-per-queue: " + LEASES_PER_QUEUE
            + ", lease-timeout: " + LEASE_TIMEOUT.toSeconds() + "s}\n";
        int port = FreePorts.port();
        int brokerPorts = FreePorts.range(12);
        List<String> jvm = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData");
        DeliveryLedger ledger = new DeliveryLedger();
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        ForkedGateway gateway = GatewayFixture.on(cluster).forked(UniqueNames.workDir("vq-crash-1")).jvmOptions(jvm)
            .ports(port, brokerPorts).extraYaml(vqYaml).start();
        DefaultMQProducer producer = new DefaultMQProducer(cluster.group(topic + "p"));
        try {
            for (int i = 0; i < 8; i++) {
                consumers.add(pushConsumer(group, topic, gateway.namesrvAddress(), topic + "-" + i, ledger));
            }
            TimeUnit.SECONDS.sleep(8); // registered, rebalanced over the 8 virtual queues
            producer.setNamesrvAddr(cluster.namesrvAddress());
            producer.setInstanceName(topic + "-producer");
            producer.start();
            AtomicInteger sequence = new AtomicInteger();
            produce(producer, topic, Duration.ofSeconds(8), sequence, ledger);
            int sentBeforeCrash = ledger.sentCount();
            long receivedBeforeCrash = ledger.deliveries();
            gateway.kill();
            gateway = GatewayFixture.on(cluster).forked(UniqueNames.workDir("vq-crash-2")).jvmOptions(jvm)
                .ports(port, brokerPorts).extraYaml(vqYaml).start();
            produce(producer, topic, Duration.ofSeconds(10), sequence, ledger);
            long drainStart = System.nanoTime();
            try {
                FaultLoad.await("every acknowledged send received after the crash", Duration.ofSeconds(90),
                    () -> ledger.missing().isEmpty());
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + ledger, e);
            }
            long drainMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStart);
            TimeUnit.SECONDS.sleep(3); // late redeliveries still count as duplicates
            System.out.println("VQ-FAULTS crash the gateway (SIGKILL, start again on the same ports): " + ledger
                + " (" + sentBeforeCrash + " sent and " + receivedBeforeCrash + " delivered before the crash), drained "
                + drainMillis + " ms after the last send; window bound for a close " + WINDOW * REAL_QUEUES);
            assertTrue(sentBeforeCrash > 0 && receivedBeforeCrash > 0, "the first gateway served");
            assertEquals(Set.of(), ledger.missing(), "acknowledged sends never received");
        } finally {
            producer.shutdown();
            consumers.forEach(DefaultMQPushConsumer::shutdown);
            gateway.close();
        }
    }

    private static void produce(DefaultMQProducer producer, String topic, Duration duration, AtomicInteger sequence,
                                DeliveryLedger ledger) throws InterruptedException {
        long end = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() - end < 0) {
            String key = topic + "-" + sequence.getAndIncrement();
            try {
                if (producer.send(new Message(topic, "t", key, key.getBytes(StandardCharsets.UTF_8)), 3_000)
                    .getSendStatus() == SendStatus.SEND_OK) {
                    ledger.sent(key);
                }
            } catch (Exception e) {
                // not acknowledged: not counted as sent
            }
            TimeUnit.MILLISECONDS.sleep(SEND_INTERVAL_MS);
        }
    }

    private static DefaultMQPushConsumer pushConsumer(String group, String topic, String namesrv, String instance,
                                                      DeliveryLedger ledger) throws Exception {
        return FaultLoad.pushConsumer(group, topic, namesrv, instance, ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, ledger);
    }

    private static long received(ScenarioProcess p) {
        return p.linesSoFar().stream().filter(l -> "received".equals(l.path("type").asText())).count();
    }


    /** What a scenario ended with. */
    private record Result(String scenario, int sent, long lost, long duplicates, long duplicatedKeys, long bound,
                          VirtualQueueStats stats) {
    }

    /** One scenario's topic, group, gateway, consumers, producer and ledger. */
    private static final class Run implements AutoCloseable {
        final String topic;
        final String group;
        final VirtualQueueConfig config;
        final boolean produceThroughGateway;
        final DeliveryLedger ledger = new DeliveryLedger();
        final List<ScenarioProcess> forked = new ArrayList<>();
        final List<DefaultMQPushConsumer> inJvm = new ArrayList<>();
        GatewayFixture gateway;
        DefaultMQProducer producer;
        final AtomicInteger sendFailures = new AtomicInteger();
        int sequence;

        private Run(String name, Duration leaseTimeout, boolean produceThroughGateway) {
            this.topic = UniqueNames.topic(name);
            this.group = cluster.group(name);
            this.produceThroughGateway = produceThroughGateway;
            this.config = new VirtualQueueConfig(group, topic, PER_REAL_QUEUE, WINDOW, null, LEASES_PER_QUEUE,
                leaseTimeout, null, null);
        }

        static Run start(String name, Duration leaseTimeout, int forkedCount, int inJvmCount,
                         boolean produceThroughGateway) throws Exception {
            Run run = new Run(name, leaseTimeout, produceThroughGateway);
            try {
                run.startAll(forkedCount, inJvmCount);
            } catch (Exception | AssertionError e) {
                run.close();
                throw e;
            }
            return run;
        }

        private void startAll(int forkedCount, int inJvmCount) throws Exception {
            cluster.createTopic(topic, REAL_QUEUES);
            gateway = GatewayFixture.on(cluster).virtualQueues(List.of(config)).start();
            for (int i = 0; i < forkedCount; i++) {
                forked.add(ScenarioRunner.scenario(ClientVersion.V4_9_7, "push-consume")
                    .namesrv(gateway.namesrvAddress()).topic(topic).group(group).count(0)
                    .arg("linger-ms", 170_000).arg("poll-namesrv-ms", 2_000).timeout(Duration.ofSeconds(180))
                    .rebalanceInterval(Duration.ofSeconds(2)).start());
            }
            for (int i = 0; i < inJvmCount; i++) {
                inJvm.add(pushConsumer(topic + "-" + i));
            }
            int members = forkedCount + inJvmCount;
            FaultLoad.await("all " + members + " consumers registered on the virtual broker", Duration.ofSeconds(60),
                () -> gateway.gateway().virtualQueues().memberIds(group).size() == members);
            FaultLoad.await("the gateway owns the 4 real queues", Duration.ofSeconds(30),
                () -> consumer().virtualQueueCount() == REAL_QUEUES * PER_REAL_QUEUE);
            TimeUnit.SECONDS.sleep(4); // the clients' rebalance (notified, and every 2 s)
            producer = new DefaultMQProducer(cluster.group(topic + "p"));
            producer.setNamesrvAddr(produceThroughGateway ? gateway.namesrvAddress() : cluster.namesrvAddress());
            producer.setInstanceName(topic + "-producer");
            producer.start();
        }

        private DefaultMQPushConsumer pushConsumer(String instance) throws Exception {
            return VirtualQueueFaultsIT.pushConsumer(group, topic, gateway.namesrvAddress(), instance, ledger);
        }

        /** Sends one message every {@link #SEND_INTERVAL_MS} for {@code duration}, recording acknowledged keys. */
        void produceFor(Duration duration) throws InterruptedException {
            long end = System.nanoTime() + duration.toNanos();
            while (System.nanoTime() - end < 0) {
                String key = topic + "-" + sequence++;
                Message m = new Message(topic, "t", key, key.getBytes(StandardCharsets.UTF_8));
                try {
                    if (producer.send(m, 3_000).getSendStatus() == SendStatus.SEND_OK) {
                        ledger.sent(key);
                    } else {
                        sendFailures.incrementAndGet();
                    }
                } catch (Exception e) {
                    sendFailures.incrementAndGet(); // not acknowledged: not counted as sent
                }
                TimeUnit.MILLISECONDS.sleep(SEND_INTERVAL_MS);
            }
        }

        void stopProducer() {
            producer.shutdown();
            producer = null;
        }

        VirtualConsumer consumer() {
            return gateway.gateway().virtualQueues().consumer(group, topic);
        }

        VirtualQueueStats stats() {
            try {
                return gateway.gateway().virtualQueues().loop().submit(consumer()::stats).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        /** The in-JVM receipts plus what every forked consumer printed so far. */
        DeliveryLedger everything() {
            DeliveryLedger all = ledger.sendsOnly();
            all.add(ledger);
            for (ScenarioProcess p : forked) {
                all.receivedAll(p.linesSoFar().stream().filter(l -> "received".equals(l.path("type").asText()))
                    .map(l -> l.path("key").asText()).toList());
            }
            return all;
        }

        /**
         * Waits (bounded) for every acknowledged send to be received and the gateway to hold nothing leased or
         * available; then stops every consumer and checks loss and duplicates against
         * {@code faults} x window-size x real queues.
         */
        Result drainAndCheck(String scenario, int faults) throws Exception {
            long drainStart = System.nanoTime();
            try {
                FaultLoad.await("the backlog drained: every acknowledged send received, nothing leased or available",
                    Duration.ofSeconds(90), () -> {
                        VirtualQueueStats s = stats();
                        return everything().missing().isEmpty() && s.leased() == 0 && s.available() == 0;
                    });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + everything() + "; " + stats(), e);
            }
            long drainMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStart);
            VirtualQueueStats stats = stats();
            assertEquals(List.of(), gateway.gateway().virtualQueues().loop().submit(consumer()::checkInvariants)
                .get(5, TimeUnit.SECONDS), "the gateway's invariants");
            assertEquals(0, stats.invariantViolationCount(), stats::toString);
            inJvm.forEach(DefaultMQPushConsumer::shutdown);
            inJvm.clear();
            for (ScenarioProcess p : forked) {
                p.close(); // after the drain: whatever it printed was received
            }
            DeliveryLedger all = ledger.sendsOnly();
            all.add(ledger);
            for (ScenarioProcess p : forked) {
                all.receivedAll(p.await().keys("received"));
            }
            long bound = (long) faults * WINDOW * REAL_QUEUES;
            Result r = new Result(scenario, all.sentCount(), all.missing().size(), all.duplicates(),
                all.duplicatedKeys(), bound, stats);
            // the numbers docs/RELIABILITY.md quotes
            System.out.println("VQ-FAULTS " + scenario + ": sent " + r.sent + " acknowledged, lost " + r.lost
                + ", duplicates " + r.duplicates + " (" + r.duplicatedKeys + " keys; bound " + bound + "), send failures "
                + sendFailures.get() + ", redeliveries " + stats.redeliveries() + ", deliveries " + stats.deliveries() + ", drained " + drainMillis + " ms after the last send");
            assertTrue(all.sentCount() > 0, "something was sent");
            assertEquals(0, r.lost, "acknowledged sends never received, e.g. " + all.missing().stream().limit(5).toList());
            assertTrue(r.duplicates <= bound, "duplicates past the bound: " + r);
            return r;
        }

        @Override
        public void close() {
            if (producer != null) {
                producer.shutdown();
            }
            inJvm.forEach(DefaultMQPushConsumer::shutdown);
            for (ScenarioProcess p : forked) {
                if (p.isAlive()) {
                    try {
                        FaultLoad.signal("CONT", p.pid()); // never leave a stopped process behind
                    } catch (Exception | AssertionError e) {
                        // ended meanwhile
                    }
                }
                p.close();
            }
            if (gateway != null) {
                gateway.close();
            }
        }
    }
}
