package io.rmqgw.gateway.vq;

import java.util.HashMap;
import java.util.Map;

/** One virtual queue's head and leases; owned by the group's event loop. */
final class VirtualQueue {

    final int id;
    /** The next virtual offset to hand out; never decreases. */
    long nextOffset;
    /** Leases by virtual offset. */
    final LeasesByOffset leases = new LeasesByOffset();
    /** Holder to when it last pulled or committed here (System.nanoTime scale). Every lease's holder is here. */
    final Map<Long, Long> lastActivity = new HashMap<>();

    VirtualQueue(int id) {
        this.id = id;
    }
}
