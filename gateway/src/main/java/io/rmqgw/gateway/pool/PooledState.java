package io.rmqgw.gateway.pool;

import io.netty.channel.Channel;

/** Where a pooled connection stands; changes on its event loop only. */
sealed interface PooledState {
    record Idle() implements PooledState {
    }

    record Connecting() implements PooledState {
    }

    record Connected(Channel channel) implements PooledState {
    }

    record Closed() implements PooledState {
    }
}
