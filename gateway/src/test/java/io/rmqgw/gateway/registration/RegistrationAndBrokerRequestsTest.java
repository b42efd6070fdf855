package io.rmqgw.gateway.registration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.brokerrequests.StoreHostRequests;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.testing.FakeExchange;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.Wire;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The client-registration family (heartbeats, unregistration) and the broker-to-client family (transaction
 * check-back) against a fake exchange; ClientRegistrationTest and BrokerToClientRequestTest run them whole.
 */
@ExtendWith(LeakCheckExtension.class)
class RegistrationAndBrokerRequestsTest {

    private static final String BROKER = "10.0.0.1:10911";

    @Test
    void aHeartbeatRegistersItsClientOnItsConnectionAndGoesOnUnchanged() {
        ClientRegistry clients = new ClientRegistry();
        ClientRegistration registration = new ClientRegistration(BROKER, clients);
        byte[] wire = Wire.request(RequestCode.HEART_BEAT).type(SerializeType.JSON).opaque(4)
            .body("{\"clientID\":\"c1\",\"consumerDataSet\":[{\"groupName\":\"G\",\"subscriptionDataSet\":[]}],"
                + "\"producerDataSet\":[]}").bytes();
        RemotingFrame heartbeat = FakeExchange.frame(wire);
        try (FakeExchange exchange = FakeExchange.of(heartbeat)) {
            ByteBuf out = registration.toUpstream(exchange, heartbeat);
            try {
                assertEquals(wire.length, out.readableBytes(), "relayed as it came");
            } finally {
                out.release();
            }
            assertEquals("c1", clients.clientIdOf(exchange.client().channel()));
            assertTrue(clients.clientsOfGroup(ClientRegistry.Role.CONSUMER, "G").contains("c1"));

            RemotingFrame unregister = FakeExchange.frame(Wire.request(RequestCode.UNREGISTER_CLIENT).opaque(5)
                .ext("clientID", "c1").ext("consumerGroup", "G").bytes());
            registration.toUpstream(exchange, unregister).release();
            assertFalse(clients.clientsOfGroup(ClientRegistry.Role.CONSUMER, "G").contains("c1"));
        }
    }

    @Test
    void aCheckBackNamesTheGatewaysPortInItsOffsetMsgId() {
        StoreHostMapper toGateway = (ip, port) ->
            ip == 0x0A000001 && port == 10911 ? StoreHostMapper.pack(0x7F000001, 30911) : StoreHostMapper.UNKNOWN;
        StoreHostRequests requests = new StoreHostRequests(toGateway);
        RemotingFrame checkBack = FakeExchange.frame(Wire.request(RequestCode.CHECK_TRANSACTION_STATE).oneway()
            .type(SerializeType.JSON).opaque(6).ext("offsetMsgId", "0A00000100002A9F00000000000004D2")
            .ext("tranStateTableOffset", "1").ext("commitLogOffset", "1234").bytes());
        try (FakeExchange exchange = FakeExchange.of(checkBack)) {
            ByteBuf out = requests.checkBack(exchange.client(), checkBack);
            try {
                assertEquals("7F000001000078BF00000000000004D2", FakeExchange.parse(out).ext().get("offsetMsgId"));
            } finally {
                out.release();
            }
        }
    }
}
