package io.rmqgw.gateway.filters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.PullRequestHeader;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.ResponseEncoding;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.testing.FakeExchange;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.Wire;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The role filters against a fake exchange: what each lets on, what it answers, and that one decode serves all. */
@ExtendWith(LeakCheckExtension.class)
class FiltersTest {

    private static final EdgeSettings CHECKED = new EdgeSettings(null, ResponseEncoding.MIRROR, NameValidator.DEFAULT, false);
    private final GatewayMetrics metrics = GatewayMetrics.inMemory();

    private static RemotingFrame send(String topic) {
        return FakeExchange.frame(Wire.request(RequestCode.SEND_MESSAGE_V2).type(SerializeType.JSON).opaque(2)
            .ext("a", "Group").ext("b", topic).ext("c", "TBW102").ext("d", "4").ext("e", "0").ext("f", "0")
            .ext("g", "1700000000000").ext("h", "0").body("m").bytes());
    }

    private static final RequestFilter SEND_NAMES = NameChecks.typed(SendRequestHeader.class, NameGuard::checkSend,
        SendRequestHeader::namesValidInFrame);

    @Test
    void aSendWithGoodNamesGoesOnUndecoded() {
        RemotingFrame request = send("Topic");
        try (FakeExchange exchange = FakeExchange.of(request, CHECKED, metrics)) {
            assertSame(request, SEND_NAMES.filter(exchange, request));
            assertFalse(exchange.headerDecoded(), "the names were checked on the bytes");
            request.release();
        }
    }

    @Test
    void aSendWithABadTopicIsAnsweredAsABrokerWouldAndNeverGoesOn() {
        RemotingFrame request = send("bad topic");
        try (FakeExchange exchange = FakeExchange.of(request, CHECKED, metrics)) {
            assertNull(SEND_NAMES.filter(exchange, request));
            assertEquals(1, exchange.answers().size());
            Wire.Frame answer = exchange.answers().get(0);
            assertEquals(2, answer.opaque());
            assertTrue(answer.remark().contains("bad topic"), answer.remark());
        }
    }

    @Test
    void namesOffCostNothing() {
        RemotingFrame request = send("bad topic");
        try (FakeExchange exchange = FakeExchange.of(request)) {
            assertSame(request, SEND_NAMES.filter(exchange, request));
            assertFalse(exchange.headerDecoded());
            request.release();
        }
    }

    @Test
    void theLabelDecodeServesTheNameCheck() {
        metrics.topicLabels(true, 10);
        RemotingFrame request = send("Topic");
        try (FakeExchange exchange = FakeExchange.of(request, CHECKED, metrics)) {
            RequestFilter labels = TopicLabels.of(SendRequestHeader.class, SendRequestHeader::topic);
            assertSame(request, labels.filter(exchange, request));
            assertTrue(exchange.headerDecoded());
            assertSame(request, SEND_NAMES.filter(exchange, request));
            request.release();
        }
    }

    @Test
    void aPullPastItsTopicsLimitIsRateLimited() {
        RateLimits limits = new RateLimits(metrics);
        limits.apply(new RateLimitConfig(java.util.List.of(new RateLimitConfig.TopicLimit("T", null, null, 1, 1)), null));
        RequestFilter pulls = RateLimitFilters.pulls(limits);
        for (int i = 0; i < 2; i++) {
            RemotingFrame pull = FakeExchange.frame(Wire.request(RequestCode.PULL_MESSAGE).opaque(10 + i)
                .ext("consumerGroup", "G").ext("topic", "T").ext("queueId", "0").ext("queueOffset", "0")
                .ext("maxMsgNums", "32").ext("sysFlag", "0").ext("commitOffset", "0").ext("suspendTimeoutMillis", "0")
                .ext("subVersion", "0").bytes());
            try (FakeExchange exchange = FakeExchange.of(pull, EdgeSettings.passThrough(), metrics)) {
                PullRequestHeader header = exchange.header(pull, PullRequestHeader.class);
                assertEquals("T", header.topic());
                RemotingFrame out = pulls.filter(exchange, pull);
                if (i == 0) {
                    assertSame(pull, out, "the first within the burst");
                    pull.release();
                } else {
                    assertNull(out);
                    assertEquals(1, exchange.rateLimited().size());
                    assertTrue(exchange.rateLimited().get(0).startsWith("[RATE_LIMITED] pulls of topic T"),
                        exchange.rateLimited().get(0));
                }
            }
        }
    }
}
