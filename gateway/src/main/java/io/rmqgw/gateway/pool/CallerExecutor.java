package io.rmqgw.gateway.pool;

import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import io.rmqgw.gateway.pool.UpstreamException.Reason;
import java.util.concurrent.RejectedExecutionException;

/** A pooled request's outcome, handed to its caller on the caller's executor (no thread of the pool's). */
final class CallerExecutor {

    private CallerExecutor() {
    }

    /** Completes {@code promise} on {@code on}; a result nobody takes (cancelled, executor gone) is released. */
    static <T> void complete(EventExecutor on, Promise<T> promise, T result) {
        Runnable done = () -> {
            if (!promise.trySuccess(result)) {
                ReferenceCountUtil.release(result);
            }
        };
        if (on.inEventLoop()) {
            done.run();
            return;
        }
        try {
            on.execute(done);
        } catch (RejectedExecutionException e) {
            ReferenceCountUtil.release(result);
            promise.tryFailure(new UpstreamException(Reason.CLOSED, "the caller's executor is shut down"));
        }
    }

    /** Fails {@code promise} on {@code on} (at once when that executor is gone). */
    static void fail(EventExecutor on, Promise<?> promise, Throwable cause) {
        if (on.inEventLoop()) {
            promise.tryFailure(cause);
            return;
        }
        try {
            on.execute(() -> promise.tryFailure(cause));
        } catch (RejectedExecutionException e) {
            promise.tryFailure(cause);
        }
    }
}
