package io.rmqgw.gateway.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.testing.FakeExchange;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.Wire;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The pull family's LITE_PULL_MESSAGE translation against a fake exchange (LitePullTranslationTest runs it whole). */
@ExtendWith(LeakCheckExtension.class)
class LitePullHandlerTest {

    private static final int V4_9_7 = 407;
    private static final int REQUEST_CODE_NOT_SUPPORTED = 3;

    private final LitePullHandler handler = new LitePullHandler(StoreHostMapper.NONE);

    private static RemotingFrame litePull() {
        return FakeExchange.frame(Wire.request(RequestCode.LITE_PULL_MESSAGE).type(SerializeType.ROCKETMQ).opaque(3)
            .ext("consumerGroup", "G").ext("topic", "T").ext("queueId", "0").ext("queueOffset", "0").bytes());
    }

    @Test
    void aBrokerKnownToBeOlderThan5GetsPullMessage() {
        RemotingFrame request = litePull();
        try (FakeExchange exchange = FakeExchange.of(request)) {
            exchange.upstreamVersion(V4_9_7);
            ByteBuf out = handler.toUpstream(exchange, request);
            try {
                assertEquals(RequestCode.PULL_MESSAGE, FakeExchange.parse(out).code());
                assertEquals(1.0, io.rmqgw.metrics.MeterReadings.of(exchange.metrics()).litePullsTranslated());
            } finally {
                out.release();
            }
        }
    }

    @Test
    void a5xBrokerGetsLitePullAsItCame() {
        RemotingFrame request = litePull();
        try (FakeExchange exchange = FakeExchange.of(request)) {
            exchange.upstreamVersion(LitePullHandler.V5_0_0);
            ByteBuf out = handler.toUpstream(exchange, request);
            try {
                assertEquals(RequestCode.LITE_PULL_MESSAGE, FakeExchange.parse(out).code());
                assertNull(exchange.kept(), "nothing kept for a resend");
            } finally {
                out.release();
            }
        }
    }

    @Test
    void whileUnknownARefusedLitePullIsResentAsPullOnceAndTheConnectionRemembers() {
        RemotingFrame request = litePull();
        try (FakeExchange exchange = FakeExchange.of(request)) {
            ByteBuf out = handler.toUpstream(exchange, request);
            assertEquals(RequestCode.LITE_PULL_MESSAGE, FakeExchange.parse(out).code());
            out.release();
            RemotingFrame refused = FakeExchange.frame(Wire.response(REQUEST_CODE_NOT_SUPPORTED, 3)
                .type(SerializeType.ROCKETMQ).version(0).remark(" request type 361 not supported").bytes());
            assertNull(handler.onResponse(exchange, refused), "the refusal is not the client's answer");
            assertEquals(1, exchange.resent().size());
            assertEquals(RequestCode.PULL_MESSAGE, exchange.resent().get(0).code());
            assertEquals(3, exchange.resent().get(0).opaque());
            assertTrue(exchange.answers().isEmpty());

            // the next lite pull on this connection goes as 11 at once
            RemotingFrame next = litePull();
            ByteBuf again = handler.toUpstream(exchange, next);
            try {
                assertEquals(RequestCode.PULL_MESSAGE, FakeExchange.parse(again).code());
            } finally {
                again.release();
            }
        }
    }
}
