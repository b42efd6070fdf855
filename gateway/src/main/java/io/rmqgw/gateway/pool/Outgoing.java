package io.rmqgw.gateway.pool;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import io.rmqgw.codec.frame.RemotingFrame;

/** A pooled connection's request encoded and waiting to be written; {@code response} is null for a oneway, {@code written} otherwise. */
record Outgoing(int opaque, int code, ByteBuf frame, long startNanos, long deadlineNanos,
                        Promise<RemotingFrame> response, Promise<Void> written, EventExecutor replyOn) {
}
