package io.rmqgw.gateway.vq;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * A found pull's deliveries, made on demand from the leased messages and what they were when leased (their
 * delivery counts; queue and offset never change; virtual offsets are consecutive): no {@link Delivery} object
 * per message unless someone looks. Immutable.
 */
final class Deliveries extends AbstractList<Delivery> implements RandomAccess {

    private final WindowMessage[] messages;
    private final int[] deliveryCounts;
    private final int size;
    private final int virtualQueue;
    private final long firstVirtualOffset;
    private final long holder;

    /** The first {@code size} of {@code leased}, just leased on {@code virtualQueue} by {@code holder}. */
    Deliveries(WindowMessage[] leased, int size, int virtualQueue, long holder) {
        this.messages = leased;
        this.size = size;
        this.virtualQueue = virtualQueue;
        this.holder = holder;
        this.firstVirtualOffset = leased[0].virtualOffset;
        this.deliveryCounts = new int[size];
        for (int i = 0; i < size; i++) {
            deliveryCounts[i] = leased[i].deliveries;
        }
    }

    @Override
    public Delivery get(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("delivery " + index + " of " + size);
        }
        WindowMessage m = messages[index];
        return new Delivery(m.window.queue, m.offset, virtualQueue, firstVirtualOffset + index, deliveryCounts[index],
            holder);
    }

    @Override
    public int size() {
        return size;
    }
}
