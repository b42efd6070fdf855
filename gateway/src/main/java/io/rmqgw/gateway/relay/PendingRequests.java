package io.rmqgw.gateway.relay;

import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;
import java.util.ArrayList;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import java.util.Iterator;
import java.util.List;

/**
 * Requests a client sent upstream that still await their response, by opaque. Owned by one event
 * loop: no locking. Oneway requests never enter (they get no response). An entry's {@code asPull}
 * is owned here until {@link #remove} hands it to the caller; the bulk removals release it.
 */
final class PendingRequests {

    /**
     * One request in flight; {@code context} is whatever its handler needs to treat the response; {@code asPull}
     * (null for most) is a LITE_PULL_MESSAGE's bytes as PULL_MESSAGE, sent once instead if the broker does not
     * know 361.
     */
    record Pending(int opaque, int code, SerializeType encoding, long startNanos, long sentNanos, long deadlineNanos,
                   RequestHandler handler, Object context, ByteBuf asPull) {

        Pending(int opaque, int code, SerializeType encoding, long startNanos, long sentNanos, long deadlineNanos,
                RequestHandler handler, Object context) {
            this(opaque, code, encoding, startNanos, sentNanos, deadlineNanos, handler, context, null);
        }

        private void releaseAsPull() {
            if (asPull != null) {
                asPull.release();
            }
        }
    }

    private final IntObjectHashMap<Pending> byOpaque = new IntObjectHashMap<>();
    private volatile int size;

    void add(Pending pending) {
        Pending replaced = byOpaque.put(pending.opaque(), pending);
        if (replaced != null) {
            // a client reusing an opaque still in flight: the older answer is lost to it either way
            replaced.releaseAsPull();
        }
        size = byOpaque.size();
    }

    Pending remove(int opaque) {
        Pending pending = byOpaque.remove(opaque);
        if (pending != null) {
            size = byOpaque.size();
        }
        return pending;
    }

    /** Removes and returns the requests whose deadline passed. */
    List<Pending> expire(long nowNanos) {
        List<Pending> expired = null;
        for (Iterator<Pending> it = byOpaque.values().iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (nowNanos - p.deadlineNanos() >= 0) {
                if (expired == null) {
                    expired = new ArrayList<>();
                }
                expired.add(p);
                it.remove();
                p.releaseAsPull();
            }
        }
        size = byOpaque.size();
        return expired == null ? List.of() : expired;
    }

    /** Removes and returns the requests {@code which} selects. */
    List<Pending> removeIf(java.util.function.Predicate<Pending> which) {
        List<Pending> removed = new ArrayList<>();
        for (Iterator<Pending> it = byOpaque.values().iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (which.test(p)) {
                removed.add(p);
                it.remove();
                p.releaseAsPull();
            }
        }
        size = byOpaque.size();
        return removed;
    }

    /** Removes and returns everything, for answering when the upstream is gone. */
    List<Pending> drain() {
        List<Pending> all = new ArrayList<>(byOpaque.values());
        byOpaque.clear();
        all.forEach(Pending::releaseAsPull);
        size = 0;
        return all;
    }

    /** Readable from any thread (drain on shutdown); exact on the owning event loop. */
    int size() {
        return size;
    }
}
