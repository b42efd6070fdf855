package io.rmqgw.gateway.core;

import io.netty.util.collection.IntObjectHashMap;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Requests a client sent upstream that still await their response, by opaque. Owned by one event
 * loop: no locking. Oneway requests never enter (they get no response). What an entry's handler kept stays
 * the entry's until {@link #remove} hands it to the caller; the bulk removals release it.
 */
final class PendingRequests {

    private final IntObjectHashMap<RequestExchange> byOpaque = new IntObjectHashMap<>();
    private volatile int size;

    void add(RequestExchange pending) {
        RequestExchange replaced = byOpaque.put(pending.opaque(), pending);
        if (replaced != null) {
            // a client reusing an opaque still in flight: the older answer is lost to it either way
            replaced.releaseKept();
            replaced.phase = RequestExchange.Phase.DONE;
        }
        size = byOpaque.size();
    }

    RequestExchange remove(int opaque) {
        RequestExchange pending = byOpaque.remove(opaque);
        if (pending != null) {
            size = byOpaque.size();
        }
        return pending;
    }

    /** Removes and returns the requests whose deadline passed. */
    List<RequestExchange> expire(long nowNanos) {
        List<RequestExchange> expired = null;
        for (Iterator<RequestExchange> it = byOpaque.values().iterator(); it.hasNext(); ) {
            RequestExchange p = it.next();
            if (nowNanos - p.deadlineNanos >= 0) {
                if (expired == null) {
                    expired = new ArrayList<>();
                }
                expired.add(p);
                it.remove();
                p.releaseKept();
            }
        }
        size = byOpaque.size();
        return expired == null ? List.of() : expired;
    }

    /** Removes and returns the requests {@code which} selects. */
    List<RequestExchange> removeIf(java.util.function.Predicate<RequestExchange> which) {
        List<RequestExchange> removed = new ArrayList<>();
        for (Iterator<RequestExchange> it = byOpaque.values().iterator(); it.hasNext(); ) {
            RequestExchange p = it.next();
            if (which.test(p)) {
                removed.add(p);
                it.remove();
                p.releaseKept();
            }
        }
        size = byOpaque.size();
        return removed;
    }

    /** Removes and returns everything, for answering when the upstream is gone. */
    List<RequestExchange> drain() {
        List<RequestExchange> all = new ArrayList<>(byOpaque.values());
        byOpaque.clear();
        all.forEach(RequestExchange::releaseKept);
        size = 0;
        return all;
    }

    /** Readable from any thread (drain on shutdown); exact on the owning event loop. */
    int size() {
        return size;
    }
}
