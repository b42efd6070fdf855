package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.RateLimitConfig.AddressLimit;
import io.rmqgw.gateway.config.RateLimitConfig.ClientLimit;
import io.rmqgw.gateway.config.RateLimitConfig.TopicLimit;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.RawRemoting;
import io.rmqgw.testing.UniqueNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.heartbeat.HeartbeatData;
import org.apache.rocketmq.remoting.protocol.heartbeat.ProducerData;
import org.junit.jupiter.api.Test;

/**
 * Send rate limits with real clients through the gateway to the real broker: sends past a topic's limit are
 * answered SYSTEM_BUSY (2) with a remark naming the limit, counted in {@code rmqgw_rate_limited_total}, and never
 * reach the broker; a reload changes the limits for the next send. Limits are tiny (1 send a second after a
 * burst of 2) so that a burst of 20 sync sends is over them on any machine.
 */
@RocketMqCluster
class RateLimitIT {

    private static ScenarioResult send(ClientVersion version, GatewayFixture gateway, String topic, String prefix)
        throws Exception {
        return ScenarioRunner.scenario(version, "sync-send").namesrv(gateway.namesrvAddress()).topic(topic).count(20)
            .keyPrefix(prefix).arg("retries", 0).timeout(Duration.ofSeconds(90)).run();
    }

    @Test
    void sendsPastTheLimitsGetSystemBusyAndAReloadChangesThem(ClusterUnderTest shared) throws Exception {
        String topic = UniqueNames.topic("ratelimited");
        String other = UniqueNames.topic("unlimited");
        RateLimitConfig tight = new RateLimitConfig(List.of(new TopicLimit(topic, 1, 2)), null);
        try (GatewayFixture gateway = GatewayFixture.on(shared).configure(c -> c.withRateLimits(tight)).start()) {
            // the topic exists first, so that its limit is the only reason for a refusal
            ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send").namesrv(shared.namesrvAddress()).topic(topic)
                .count(1).timeout(Duration.ofSeconds(60)).run().assertOk();

            AtomicInteger reachedBroker = new AtomicInteger();
            RPCHook sendsOfTopic = new RPCHook() {
                @Override
                public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
                    Map<String, String> ext = request.getExtFields();
                    if ((request.getCode() == 10 || request.getCode() == 310) && ext != null
                        && (topic.equals(ext.get("b")) || topic.equals(ext.get("topic")))) {
                        reachedBroker.incrementAndGet();
                    }
                }

                @Override
                public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
                }
            };
            shared.recorder().addBrokerHook(sendsOfTopic);
            ScenarioResult limited;
            try {
                limited = send(ClientVersion.V5_4_0, gateway, topic, "limited");
            } finally {
                shared.recorder().removeBrokerHook(sendsOfTopic);
            }
            List<JsonNode> refused = limited.lines("send-error");
            int sent = limited.keys("sent").size();
            System.err.println("[it] rate limit 1/s burst 2: " + sent + " sent, " + refused.size() + " refused");
            assertTrue(sent >= 2, limited::describe);
            assertTrue(refused.size() >= 1, limited::describe);
            assertEquals(20, sent + refused.size(), limited::describe);
            for (JsonNode error : refused) {
                assertEquals(2, error.path("brokerCode").asInt(), error::toString);
                assertEquals("[RATE_LIMITED] sends to topic " + topic + " exceed the gateway's limit of 1 per second"
                    + " (burst 2); retry later", error.path("brokerRemark").asText());
            }
            assertEquals(refused.size(), MeterReadings.of(gateway.metrics()).rateLimitedSends("topic"));
            assertEquals(sent, reachedBroker.get(), "refused sends never reached the broker");

            // other topics are not limited
            assertTrue(send(ClientVersion.V4_9_7, gateway, other, "other").ok());

            // a reload raises the limit: every send passes
            GatewayConfig raised = gateway.gateway().config().withRateLimits(
                new RateLimitConfig(List.of(new TopicLimit(topic, 10_000, 10_000)), null));
            assertTrue(gateway.gateway().reload(raised).applied().contains("rate-limits"));
            send(ClientVersion.V4_9_7, gateway, topic, "raised").assertOk();
            assertEquals(refused.size(), MeterReadings.of(gateway.metrics()).rateLimitedSends("topic"), "nothing more refused");

            // and a reload to a per-client limit refuses a client's excess, whatever the topic
            gateway.gateway().reload(raised.withRateLimits(
                new RateLimitConfig(null, List.of(new ClientLimit(RateLimitConfig.ANY, 1, 2)))));
            ScenarioResult perClient = send(ClientVersion.V4_9_7, gateway, other, "client");
            List<JsonNode> clientRefusals = perClient.lines("send-error");
            assertTrue(clientRefusals.size() >= 1, perClient::describe);
            for (JsonNode error : clientRefusals) {
                assertEquals(2, error.path("brokerCode").asInt(), error::toString);
                assertTrue(error.path("brokerRemark").asText().contains("exceed the gateway's limit of 1 per second"
                    + " (burst 2)"), error::toString);
            }
            assertEquals(clientRefusals.size(), MeterReadings.of(gateway.metrics()).rateLimitedSends("client"));
        }
    }

    @Test
    void pullsPastATopicsLimitAndRequestsPastAClientsLimitGetSystemBusy(ClusterUnderTest shared) throws Exception {
        String topic = shared.topic("pull_limited", 1);
        ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send").namesrv(shared.namesrvAddress()).topic(topic)
            .count(5).timeout(Duration.ofSeconds(60)).run().assertOk();
        RateLimitConfig pulls = new RateLimitConfig(List.of(new TopicLimit(topic, null, null, 1, 2)), null);
        try (GatewayFixture gateway = GatewayFixture.on(shared).configure(c -> c.withRateLimits(pulls)).start()) {
            AtomicInteger pullsAtBroker = new AtomicInteger();
            RPCHook pullsOfTopic = counting(pullsAtBroker, RequestCode.PULL_MESSAGE, "topic", topic);
            @SuppressWarnings("deprecation")
            DefaultMQPullConsumer consumer = new DefaultMQPullConsumer(shared.group("pull_limited"));
            consumer.setNamesrvAddr(gateway.namesrvAddress());
            consumer.setInstanceName(UniqueNames.instance("pull-limited"));
            consumer.start();
            shared.recorder().addBrokerHook(pullsOfTopic);
            try {
                MessageQueue queue = new MessageQueue(topic, shared.brokerName(), 0);
                List<Integer> outcomes = new ArrayList<>();
                List<String> remarks = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    try {
                        PullResult r = consumer.pull(queue, "*", 0, 1);
                        outcomes.add(r.getPullStatus() == PullStatus.FOUND ? 0 : -1);
                    } catch (MQBrokerException e) {
                        outcomes.add(e.getResponseCode());
                        remarks.add(e.getErrorMessage());
                    }
                }
                long found = outcomes.stream().filter(o -> o == 0).count();
                long busy = outcomes.stream().filter(o -> o == ResponseCode.SYSTEM_BUSY).count();
                System.err.println("[it] pull limit 1/s burst 2: " + outcomes + "; pulls at the broker "
                    + pullsAtBroker.get());
                assertEquals(10, found + busy, outcomes::toString);
                assertTrue(found >= 2 && busy >= 1, outcomes::toString);
                for (String remark : remarks) {
                    assertEquals("[RATE_LIMITED] pulls of topic " + topic + " exceed the gateway's limit of 1 per second"
                        + " (burst 2); retry later", remark);
                }
                assertEquals(busy, MeterReadings.of(gateway.metrics()).rateLimitedSends("topic_pull"));
                assertEquals(found, pullsAtBroker.get(), "refused pulls never reached the broker");

                // a reload to a per-client request limit: any request past it, here GET_MAX_OFFSET, is refused
                assertTrue(gateway.gateway().reload(gateway.gateway().config().withRateLimits(new RateLimitConfig(
                    null, List.of(new ClientLimit(RateLimitConfig.ANY, null, null, 1, 3))))).applied()
                    .contains("rate-limits"));
                AtomicInteger answered = new AtomicInteger();
                List<Integer> refusedCodes = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    try {
                        consumer.maxOffset(queue);
                        answered.incrementAndGet();
                    } catch (MQClientException e) {
                        MQBrokerException answer = brokerAnswer(e);
                        assertTrue(answer != null, () -> "not a broker answer: " + e);
                        refusedCodes.add(answer.getResponseCode());
                        assertTrue(answer.getErrorMessage().startsWith("[RATE_LIMITED] requests of client ")
                            && answer.getErrorMessage().endsWith(" (this one code " + RequestCode.GET_MAX_OFFSET
                            + ") exceed the gateway's limit of 1 per second (burst 3); retry later"),
                            answer::getErrorMessage);
                    }
                }
                System.err.println("[it] request limit 1/s burst 3: " + answered + " answered, refused " + refusedCodes
                    + "; counted " + MeterReadings.of(gateway.metrics()).rateLimitedSends("client_request"));
                assertTrue(answered.get() >= 1 && !refusedCodes.isEmpty(), () -> answered + " answered, " + refusedCodes);
                assertTrue(refusedCodes.stream().allMatch(c -> c == ResponseCode.SYSTEM_BUSY), refusedCodes::toString);
                // the client's own background requests (offsets, heartbeats are exempt) may be refused too
                assertTrue(MeterReadings.of(gateway.metrics()).rateLimitedSends("client_request") >= refusedCodes.size());
            } finally {
                shared.recorder().removeBrokerHook(pullsOfTopic);
                consumer.shutdown();
            }
        }
    }

    /** Raw connections from 127.0.0.1 at once, and how long each sends. */
    private static final int CONNECTIONS = 20;
    private static final Duration WINDOW = Duration.ofSeconds(2);
    /** Sends each connection writes before it reads their answers (within the 64 refusals a connection may hold). */
    private static final int PIPELINE = 32;

    /** What {@link #CONNECTIONS} raw connections got for the sends they pushed through the gateway in one window. */
    private record Tally(int accepted, int busy, int other, long minBusyMillis, double seconds, List<String> remarks) {
        String describe() {
            return accepted + " accepted, " + busy + " SYSTEM_BUSY, " + other + " other in " + String.format("%.2f s",
                seconds) + " (" + String.format("%.0f", (accepted + busy + other) / seconds) + " sends/s tried);"
                + " fastest refusal " + minBusyMillis + " ms; remarks " + remarks;
        }

        /** At most the burst plus the rate over the window, give or take 10% and a few for timing. */
        void assertWithin(int rate, int burst) {
            double allowance = burst + rate * seconds;
            assertTrue(accepted <= allowance * 1.1 + 10, () -> "over the allowance " + allowance + ": " + describe());
            assertTrue(accepted >= burst, () -> "not even the burst went through: " + describe());
            assertEquals(0, other, this::describe);
            assertTrue(busy > accepted, () -> "the connections tried less than twice what passed: " + describe());
            assertTrue(minBusyMillis >= 90, () -> "a refusal answered before rate-limits.refusal-delay: " + describe());
        }
    }

    /**
     * {@link #CONNECTIONS} raw connections to the gateway's broker port push pipelined SEND_MESSAGE_V2 to
     * {@code topic} for {@link #WINDOW}; each first claims client id {@code claim.apply(i)} with a HEART_BEAT
     * when that is not null (else it stays unidentified).
     */
    private static Tally push(int port, String topic, java.util.function.IntFunction<String> claim) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CONNECTIONS);
        try {
            List<Future<int[]>> results = new ArrayList<>();
            List<String> remarks = java.util.Collections.synchronizedList(new ArrayList<>());
            long start = System.nanoTime();
            long end = start + WINDOW.toNanos();
            for (int i = 0; i < CONNECTIONS; i++) {
                String id = claim.apply(i);
                int conn = i;
                results.add(pool.submit(() -> {
                    int[] t = {0, 0, 0, Integer.MAX_VALUE};
                    try (RawRemoting c = RawRemoting.connect(port, Duration.ofSeconds(20))) {
                        if (id != null) {
                            HeartbeatData hb = new HeartbeatData();
                            hb.setClientID(id);
                            ProducerData producer = new ProducerData();
                            producer.setGroupName("rmqgw_it_raw_pg");
                            hb.getProducerDataSet().add(producer);
                            RemotingCommand beat = RemotingCommand.createRequestCommand(RequestCode.HEART_BEAT, null);
                            beat.setBody(hb.encode());
                            assertEquals(ResponseCode.SUCCESS, c.invoke(beat, SerializeType.JSON).code());
                        }
                        int n = 0;
                        while (System.nanoTime() < end) {
                            Map<Integer, Long> written = new HashMap<>();
                            java.io.ByteArrayOutputStream batch = new java.io.ByteArrayOutputStream();
                            for (int k = 0; k < PIPELINE; k++) {
                                RemotingCommand send = EncodingOnTheWireIT.sendV2(topic, "c" + conn + "-" + n++);
                                batch.write(RawRemoting.frame(send, SerializeType.ROCKETMQ));
                                written.put(send.getOpaque(), 0L);
                            }
                            long sent = System.nanoTime();
                            c.write(batch.toByteArray());
                            for (int got = 0; got < PIPELINE; ) {
                                RawRemoting.Answer a = c.readFrame();
                                if (!a.command().isResponseType() || !written.containsKey(a.command().getOpaque())) {
                                    continue;
                                }
                                got++;
                                if (a.code() == ResponseCode.SUCCESS) {
                                    t[0]++;
                                } else if (a.code() == ResponseCode.SYSTEM_BUSY) {
                                    t[1]++;
                                    t[3] = (int) Math.min(t[3], TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent));
                                    if (remarks.size() < 3 && !remarks.contains(a.remark())) {
                                        remarks.add(a.remark());
                                    }
                                } else {
                                    t[2]++;
                                    remarks.add(a.code() + " " + a.remark());
                                }
                            }
                        }
                    }
                    return t;
                }));
            }
            int accepted = 0;
            int busy = 0;
            int other = 0;
            long minBusy = Long.MAX_VALUE;
            for (Future<int[]> f : results) {
                int[] t = f.get(60, TimeUnit.SECONDS);
                accepted += t[0];
                busy += t[1];
                other += t[2];
                minBusy = Math.min(minBusy, t[3]);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            return new Tally(accepted, busy, other, minBusy, seconds, List.copyOf(remarks));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void unidentifiedConnectionsOfOneAddressAndClaimedIdsAreHeldToTheirLimits(ClusterUnderTest shared) throws Exception {
        String topic = shared.topic("address_limited", 4);
        // the setting: a per-client limit of 300 sends a second for every client
        RateLimitConfig perClient = new RateLimitConfig(null, List.of(new ClientLimit(RateLimitConfig.ANY, 300, 300)));
        try (GatewayFixture gateway = GatewayFixture.on(shared).configure(c -> c.withRateLimits(perClient)).start()) {
            int port = gateway.brokerPort(shared.brokerAddress());
            AtomicInteger reachedBroker = new AtomicInteger();
            RPCHook sendsOfTopic = counting(reachedBroker, RequestCode.SEND_MESSAGE_V2, "b", topic);
            shared.recorder().addBrokerHook(sendsOfTopic);
            try {
                // twenty connections that never send a heartbeat share one client: unidentified@127.0.0.1
                Tally unidentified = push(port, topic, i -> null);
                System.err.println("[it] 20 unidentified connections, client limit 300/s: " + unidentified.describe());
                unidentified.assertWithin(300, 300);
                assertTrue(unidentified.remarks().contains("[RATE_LIMITED] sends of client unidentified@127.0.0.1 exceed"
                    + " the gateway's limit of 300 per second (burst 300); retry later"), unidentified::describe);
                assertEquals(unidentified.busy(), MeterReadings.of(gateway.metrics()).rateLimitedSends("client"));

                // an address limit, and connections that each claim another client's id: the claims get each its
                // own 300/s client bucket, the address holds them all to 200/s
                assertTrue(gateway.gateway().reload(gateway.gateway().config().withRateLimits(new RateLimitConfig(
                    null, perClient.perClient(), List.of(new AddressLimit(RateLimitConfig.ANY, 200, 200, null, null)),
                    null))).applied().contains("rate-limits"));
                double clientRefusals = MeterReadings.of(gateway.metrics()).rateLimitedSends("client");
                Tally claimed = push(port, topic, i -> "10.9.9." + i + "@victim");
                System.err.println("[it] 20 connections claiming other clients' ids, address limit 200/s: "
                    + claimed.describe());
                claimed.assertWithin(200, 200);
                assertEquals(List.of("[RATE_LIMITED] sends from address 127.0.0.1 exceed the gateway's limit of 200 per"
                    + " second (burst 200); retry later"), claimed.remarks(), claimed::describe);
                assertEquals(claimed.busy(), MeterReadings.of(gateway.metrics()).rateLimitedSends("address"));
                assertEquals(clientRefusals, MeterReadings.of(gateway.metrics()).rateLimitedSends("client"), "no claimed id ran dry");
                assertEquals(unidentified.accepted() + claimed.accepted(), reachedBroker.get(),
                    "refused sends never reached the broker");
            } finally {
                shared.recorder().removeBrokerHook(sendsOfTopic);
            }
        }
    }

    /** A broker hook counting in {@code n} the requests with {@code code} whose extField {@code key} is {@code topic}. */
    private static RPCHook counting(AtomicInteger n, int code, String key, String topic) {
        return new RPCHook() {
            @Override
            public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
                Map<String, String> ext = request.getExtFields();
                if (request.getCode() == code && ext != null && topic.equals(ext.get(key))) {
                    n.incrementAndGet();
                }
            }

            @Override
            public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            }
        };
    }

    private static MQBrokerException brokerAnswer(Throwable e) {
        for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof MQBrokerException b) {
                return b;
            }
        }
        return null;
    }
}
