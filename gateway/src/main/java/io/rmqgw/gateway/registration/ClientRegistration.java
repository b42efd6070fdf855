package io.rmqgw.gateway.registration;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestHandler;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RequestCode;

/**
 * HEART_BEAT and UNREGISTER_CLIENT (their names checked by the role's filters): the client's groups recorded in the
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
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        try {
            if (request.code() == RequestCode.UNREGISTER_CLIENT) {
                unregister(exchange, request);
            } else {
                clients.heartbeat(exchange.client().channel(), brokerAddress, request.bodySlice());
            }
        } catch (RuntimeException e) {
            request.release();
            throw e;
        }
        return exchange.forward(request);
    }

    private void unregister(Exchange exchange, RemotingFrame request) {
        Map<String, String> ext = HeaderCodec.decodeHeader(request).extFields();
        if (ext != null) {
            clients.unregister(exchange.client().channel(), ext.get("clientID"), ext.get("producerGroup"), ext.get("consumerGroup"));
        }
    }
}
