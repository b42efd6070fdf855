package io.rmqgw.gateway.vq;

/**
 * The leases in flight in the order leased, so in deadline order: a list threaded through the messages
 * themselves ({@link WindowMessage#olderLease}, {@link WindowMessage#newerLease}). Adding and removing are a few
 * field writes, with no entry object and no identity hash per lease (a LinkedHashSet took both per delivery).
 * Owned by the group's event loop.
 */
final class LeaseList {

    private WindowMessage oldest;
    private WindowMessage newest;
    private int size;

    /** Appends {@code m}, which must not be in the list. */
    void add(WindowMessage m) {
        m.olderLease = newest;
        m.newerLease = null;
        if (newest == null) {
            oldest = m;
        } else {
            newest.newerLease = m;
        }
        newest = m;
        m.inLeaseList = true;
        size++;
    }

    /** Takes {@code m} out; false when it was not in the list. */
    boolean remove(WindowMessage m) {
        if (!m.inLeaseList) {
            return false;
        }
        if (m.olderLease == null) {
            oldest = m.newerLease;
        } else {
            m.olderLease.newerLease = m.newerLease;
        }
        if (m.newerLease == null) {
            newest = m.olderLease;
        } else {
            m.newerLease.olderLease = m.olderLease;
        }
        m.olderLease = null;
        m.newerLease = null;
        m.inLeaseList = false;
        size--;
        return true;
    }

    /** The oldest lease, null when there is none; follow {@link WindowMessage#newerLease} for the others. */
    WindowMessage oldest() {
        return oldest;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }
}
