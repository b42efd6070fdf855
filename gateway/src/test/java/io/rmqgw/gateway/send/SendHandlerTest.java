package io.rmqgw.gateway.send;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.config.ResponseEncoding;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.testing.FakeExchange;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.Wire;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The send family's handler against a fake exchange: what goes upstream, and the answer's ids pointed at the gateway. */
@ExtendWith(LeakCheckExtension.class)
class SendHandlerTest {

    /** 10.0.0.1:10911 (0x2A9F), where the broker stores, and 127.0.0.1:30911 (0x78BF), the gateway's port for it. */
    private static final StoreHostMapper TO_GATEWAY = (ip, port) ->
        ip == 0x0A000001 && port == 10911 ? StoreHostMapper.pack(0x7F000001, 30911) : StoreHostMapper.UNKNOWN;
    private static final String BROKER_ID = "0A00000100002A9F00000000000004D2";
    private static final String GATEWAY_ID = "7F000001000078BF00000000000004D2";

    private final SendHandler handler = new SendHandler(TO_GATEWAY);

    private static byte[] send(SerializeType type) {
        return Wire.request(RequestCode.SEND_MESSAGE_V2).type(type).opaque(7).ext("a", "Group").ext("b", "Topic")
            .ext("c", "TBW102").ext("d", "4").ext("e", "1").ext("f", "0").ext("g", "1700000000000").ext("h", "0")
            .body("hello").bytes();
    }

    @Test
    void aSendNothingDecodedGoesAsItCame() {
        byte[] wire = send(SerializeType.JSON);
        RemotingFrame request = FakeExchange.frame(wire);
        try (FakeExchange exchange = FakeExchange.of(request)) {
            ByteBuf out = handler.toUpstream(exchange, request);
            try {
                assertEquals(wire.length, out.readableBytes());
                Wire.Frame sent = FakeExchange.parse(out);
                assertEquals(RequestCode.SEND_MESSAGE_V2, sent.code());
                assertEquals("Topic", sent.ext().get("b"));
                assertTrue(exchange.answers().isEmpty(), "forwarded, not answered");
            } finally {
                out.release();
            }
        }
    }

    @Test
    void aSendAFilterDecodedGoesFromThatHeaderInTheUpstreamEncoding() {
        RemotingFrame request = FakeExchange.frame(send(SerializeType.JSON));
        EdgeSettings binaryUpstream = new EdgeSettings(SerializeType.ROCKETMQ, ResponseEncoding.MIRROR, null, false);
        try (FakeExchange exchange = FakeExchange.of(request, binaryUpstream, GatewayMetrics.inMemory())) {
            // as the topic-label or name filter does before the handler
            assertEquals("Topic", exchange.header(request, SendRequestHeader.class).topic());
            ByteBuf out = handler.toUpstream(exchange, request);
            try {
                Wire.Frame sent = FakeExchange.parse(out);
                assertEquals(SerializeType.ROCKETMQ, sent.serializeType());
                assertEquals("Topic", sent.ext().get("b"));
                assertEquals("hello", new String(sent.body()));
            } finally {
                out.release();
            }
        }
    }

    @Test
    void theAnswersIdNamesTheGatewaysPortForTheBroker() {
        RemotingFrame request = FakeExchange.frame(send(SerializeType.JSON));
        try (FakeExchange exchange = FakeExchange.of(request)) {
            request.release();
            RemotingFrame response = FakeExchange.frame(Wire.response(Wire.SUCCESS, 7).type(SerializeType.JSON)
                .ext("msgId", BROKER_ID).ext("queueId", "1").ext("queueOffset", "5").bytes());
            Wire.Frame answer = FakeExchange.parse(released(handler.onResponse(exchange, response)));
            assertEquals(GATEWAY_ID, answer.ext().get("msgId"));
            assertEquals("5", answer.ext().get("queueOffset"));
        }
    }

    /** Parsing copies: the bytes are released after. */
    private static ByteBuf released(ByteBuf out) {
        ByteBuf copy = io.netty.buffer.Unpooled.copiedBuffer(out);
        out.release();
        return copy;
    }
}
