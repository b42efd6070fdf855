package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;

/**
 * How the gateway treats a request an upstream sends to a client (transaction check-back,
 * consumer notifications, running info), registered in a {@link HandlerTable}. Called on the
 * client connection's event loop only.
 */
@FunctionalInterface
public interface UpstreamRequestHandler {

    /** Relays the request in the encoding the client uses. */
    UpstreamRequestHandler PASS_THROUGH = (client, request) -> client.forClient(request, null);

    /** The bytes to write to the client; takes ownership of {@code request}. */
    ByteBuf toClient(ClientConnection client, RemotingFrame request);
}
