package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;

/**
 * How the gateway treats the requests of one or more codes, registered in a {@link HandlerTable}.
 * Every method has the pass-through behaviour as its default: the frame goes on as the bytes it
 * arrived as (only re-encoded when an edge needs another header encoding), so a handler overrides
 * just what it changes, and a code nobody registered is never decoded. Called on the client
 * connection's event loop only.
 */
public interface RequestHandler {

    /** Forwards every request and answer unchanged. */
    RequestHandler PASS_THROUGH = new RequestHandler() {
        @Override
        public boolean streamsBody(RemotingFrame head) {
            return true;
        }

        @Override
        public String toString() {
            return "pass-through";
        }
    };

    /**
     * Answers REQUEST_CODE_NOT_SUPPORTED, as a broker does for a code it has no processor for: the
     * fallback of roles the gateway serves itself.
     */
    RequestHandler NOT_SERVED = new RequestHandler() {
        @Override
        public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
            request.release();
            exchange.answerError(RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                "request code " + exchange.code() + " is not supported by the gateway");
            return null;
        }

        @Override
        public String toString() {
            return "not served";
        }
    };

    /**
     * The bytes to send upstream, in the upstream header encoding; takes ownership of {@code request}. Returns
     * null when the handler answers the client itself ({@link Exchange#answer}, now or later) instead of
     * forwarding; what it needs for the response it {@linkplain Exchange#keep keeps} with the exchange.
     */
    default ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        return exchange.forUpstream(request, null);
    }

    /**
     * Whether a large request may stream through: its {@link #toUpstream} then gets the head only (the header,
     * {@link RemotingFrame#streamedBodyLength()} body bytes to follow) and the body goes upstream unchanged as
     * it arrives. Only for a handler that never reads the body and forwards it to the session's upstream or
     * refuses it; decided once, from the head ({@code head} not owned). Default: stored whole.
     */
    default boolean streamsBody(RemotingFrame head) {
        return false;
    }

    /**
     * Treats the upstream's answer before it reaches the client; takes ownership of {@code response}. Returns
     * the bytes to write now, or null when the handler answers later through {@link Exchange#answer}.
     */
    default ByteBuf onResponse(Exchange exchange, RemotingFrame response) {
        return exchange.forClient(response, null);
    }

    /** Whether the upstream may hold the request (long polling): it then gets the long-poll timeout. */
    default boolean longPolling() {
        return false;
    }

    /**
     * Whether a request of this handler held upstream may be answered SYSTEM_BUSY at once when the gateway
     * drains, its upstream answer then dropped: only where that loses nothing. A pull reads without
     * consuming (the client pulls the same offset again elsewhere); a pop does not qualify, since the
     * broker hides what it popped until the invisible time passes.
     */
    default boolean cutShortWhenDraining() {
        return false;
    }

    /**
     * Answers a request while no upstream is reachable ({@code request} stays the caller's). Returns
     * the answer, or null to let the session answer with SYSTEM_ERROR naming {@code reason}.
     */
    default ByteBuf answerWithoutUpstream(Exchange exchange, RemotingFrame request, String reason) {
        return null;
    }
}
