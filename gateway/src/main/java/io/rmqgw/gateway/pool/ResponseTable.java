package io.rmqgw.gateway.pool;

import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Gateway-originated requests awaiting their answer on one connection, by the opaque the connection
 * gave them. Owned by the connection's event loop: no locking.
 */
final class ResponseTable {

    /** One request in flight: who waits ({@code promise}, completed on {@code replyOn}) and until when. */
    record Pending(int opaque, int code, long startNanos, long deadlineNanos, Promise<RemotingFrame> promise,
                   EventExecutor replyOn) {
    }

    private final IntObjectHashMap<Pending> byOpaque = new IntObjectHashMap<>();

    void add(Pending pending) {
        byOpaque.put(pending.opaque(), pending);
    }

    Pending remove(int opaque) {
        return byOpaque.remove(opaque);
    }

    int size() {
        return byOpaque.size();
    }

    /** Removes and returns the requests whose deadline passed. */
    List<Pending> expire(long nowNanos) {
        List<Pending> expired = List.of();
        for (Iterator<Pending> it = byOpaque.values().iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (nowNanos - p.deadlineNanos() >= 0) {
                if (expired.isEmpty()) {
                    expired = new ArrayList<>();
                }
                expired.add(p);
                it.remove();
            }
        }
        return expired;
    }

    /** Removes and returns everything (the connection is gone). */
    List<Pending> drain() {
        List<Pending> all = new ArrayList<>(byOpaque.values());
        byOpaque.clear();
        return all;
    }
}
