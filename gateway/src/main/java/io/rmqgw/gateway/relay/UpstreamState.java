package io.rmqgw.gateway.relay;

import io.netty.channel.Channel;

/** Where a session's upstream connection stands. Transitions happen on the session's event loop only. */
sealed interface UpstreamState {

    /** Dialing; the client channel is not read meanwhile. */
    record Connecting(String target) implements UpstreamState {
    }

    /** Connected to {@code target} over {@code channel}. */
    record Connected(String target, Channel channel) implements UpstreamState {
    }

    /** No upstream could be reached: requests are answered by the policy (cache or error). */
    record Unavailable(String reason) implements UpstreamState {
    }

    /** The session is over. */
    record Closed() implements UpstreamState {
    }
}
