package io.rmqgw.gateway.broker;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.relay.RelaySession;
import io.rmqgw.gateway.relay.RequestHandler;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RequestCode;

/**
 * HEART_BEAT and UNREGISTER_CLIENT: names checked, then the client's groups recorded in the
 * {@link ClientRegistry} (so broker requests and composed answers find the client's connection)
 * before the request goes on to the broker unchanged.
 */
public final class ClientRegistration implements RequestHandler {

    private final String brokerAddress;
    private final ClientRegistry clients;

    public ClientRegistration(String brokerAddress, ClientRegistry clients) {
        this.brokerAddress = brokerAddress;
        this.clients = clients;
    }

    @Override
    public ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        if (request.code() == RequestCode.UNREGISTER_CLIENT) {
            return Forwarding.checked(session, request, NameGuard::checkUnregister, r -> unregister(session, r));
        }
        return Forwarding.checked(session, request, NameGuard::checkBody,
            heartbeat -> clients.heartbeat(session.client(), brokerAddress, heartbeat.bodySlice()));
    }

    private void unregister(RelaySession session, RemotingFrame request) {
        Map<String, String> ext = HeaderCodec.decodeHeader(request).extFields();
        if (ext != null) {
            clients.unregister(session.client(), ext.get("clientID"), ext.get("producerGroup"), ext.get("consumerGroup"));
        }
    }
}
