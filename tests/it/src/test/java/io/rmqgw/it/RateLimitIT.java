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
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
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
}
