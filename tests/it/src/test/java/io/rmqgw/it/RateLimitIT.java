package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.RateLimitConfig.ClientLimit;
import io.rmqgw.gateway.config.RateLimitConfig.TopicLimit;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Send rate limits with real clients through the gateway to the real broker: sends past a topic's limit are
 * answered SYSTEM_BUSY (2) with a remark naming the limit, counted in {@code rmqgw_rate_limited_total}, and never
 * reach the broker; a reload changes the limits for the next send. Limits are tiny (1 send a second after a
 * burst of 2) so that a burst of 20 sync sends is over them on any machine.
 */
@ExtendWith(SharedClusterExtension.class)
class RateLimitIT {

    private static ScenarioResult send(ClientVersion version, GatewayFixture gateway, String topic, String prefix)
        throws Exception {
        return ScenarioRunner.scenario(version, "sync-send").namesrv(gateway.namesrvAddress()).topic(topic).count(20)
            .keyPrefix(prefix).arg("retries", 0).timeout(Duration.ofSeconds(90)).run();
    }

    @Test
    void sendsPastTheLimitsGetSystemBusyAndAReloadChangesThem(SharedCluster shared) throws Exception {
        String topic = shared.topic("ratelimited");
        String other = shared.topic("unlimited");
        RateLimitConfig tight = new RateLimitConfig(List.of(new TopicLimit(topic, 1, 2)), null);
        try (GatewayFixture gateway = GatewayFixture.startWith(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ,
            c -> c.withRateLimits(tight))) {
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
            assertEquals(refused.size(), gateway.metrics().rateLimitedSends("topic"));
            assertEquals(sent, reachedBroker.get(), "refused sends never reached the broker");

            // other topics are not limited
            assertTrue(send(ClientVersion.V4_9_7, gateway, other, "other").ok());

            // a reload raises the limit: every send passes
            GatewayConfig raised = gateway.gateway().config().withRateLimits(
                new RateLimitConfig(List.of(new TopicLimit(topic, 10_000, 10_000)), null));
            assertTrue(gateway.gateway().reload(raised).applied().contains("rate-limits"));
            send(ClientVersion.V4_9_7, gateway, topic, "raised").assertOk();
            assertEquals(refused.size(), gateway.metrics().rateLimitedSends("topic"), "nothing more refused");

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
            assertEquals(clientRefusals.size(), gateway.metrics().rateLimitedSends("client"));
        }
    }

    @Test
    void pullsPastATopicsLimitAndRequestsPastAClientsLimitGetSystemBusy(SharedCluster shared) throws Exception {
        String topic = shared.topic("pull_limited");
        Admin.createTopic(shared.brokerAddress(), topic, 1);
        Admin.awaitRoute(shared.namesrvAddress(), topic, shared.brokerName(), Duration.ofSeconds(15));
        ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send").namesrv(shared.namesrvAddress()).topic(topic)
            .count(5).timeout(Duration.ofSeconds(60)).run().assertOk();
        RateLimitConfig pulls = new RateLimitConfig(List.of(new TopicLimit(topic, null, null, 1, 2)), null);
        try (GatewayFixture gateway = GatewayFixture.startWith(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ,
            c -> c.withRateLimits(pulls))) {
            AtomicInteger pullsAtBroker = new AtomicInteger();
            RPCHook pullsOfTopic = new RPCHook() {
                @Override
                public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
                    Map<String, String> ext = request.getExtFields();
                    if (request.getCode() == RequestCode.PULL_MESSAGE && ext != null && topic.equals(ext.get("topic"))) {
                        pullsAtBroker.incrementAndGet();
                    }
                }

                @Override
                public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
                }
            };
            @SuppressWarnings("deprecation")
            DefaultMQPullConsumer consumer = new DefaultMQPullConsumer(shared.group("pull_limited"));
            consumer.setNamesrvAddr(gateway.namesrvAddress());
            consumer.setInstanceName("rmqgw-it-pull-limited-" + System.nanoTime());
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
                assertEquals(busy, gateway.metrics().rateLimitedSends("topic_pull"));
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
                    + "; counted " + gateway.metrics().rateLimitedSends("client_request"));
                assertTrue(answered.get() >= 1 && !refusedCodes.isEmpty(), () -> answered + " answered, " + refusedCodes);
                assertTrue(refusedCodes.stream().allMatch(c -> c == ResponseCode.SYSTEM_BUSY), refusedCodes::toString);
                // the client's own background requests (offsets, heartbeats are exempt) may be refused too
                assertTrue(gateway.metrics().rateLimitedSends("client_request") >= refusedCodes.size());
            } finally {
                shared.recorder().removeBrokerHook(pullsOfTopic);
                consumer.shutdown();
            }
        }
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
