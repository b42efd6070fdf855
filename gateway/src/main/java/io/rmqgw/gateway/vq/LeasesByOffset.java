package io.rmqgw.gateway.vq;

import java.util.Arrays;

/**
 * One virtual queue's leases by virtual offset, ascending: two parallel arrays (offsets, messages) used from
 * {@code start} to {@code end}. Leases are made at the head of the queue, so adding is an append; commits take
 * the lowest, so removing there is a step of {@code start}; a lease in the middle (another holder's, a
 * redelivery) shifts the shorter side. No boxed key and no tree entry per lease (a TreeMap took both).
 * Indexes given and taken are 0-based over the leases, lowest offset first. Owned by the group's event loop.
 */
final class LeasesByOffset {

    private long[] offsets = new long[16];
    private WindowMessage[] messages = new WindowMessage[16];
    private int start;
    private int end;

    int size() {
        return end - start;
    }

    boolean isEmpty() {
        return end == start;
    }

    /** The highest offset leased; only when not empty. */
    long lastOffset() {
        return offsets[end - 1];
    }

    long offsetAt(int index) {
        return offsets[start + index];
    }

    WindowMessage at(int index) {
        return messages[start + index];
    }

    /** The lease at {@code offset}, or null. */
    WindowMessage get(long offset) {
        int i = Arrays.binarySearch(offsets, start, end, offset);
        return i >= 0 ? messages[i] : null;
    }

    /** The index of the first lease at or above {@code offset} ({@link #size} when none is). */
    int indexAtOrAbove(long offset) {
        int i = Arrays.binarySearch(offsets, start, end, offset);
        return (i >= 0 ? i : -i - 1) - start;
    }

    /** Puts {@code m} at {@code offset}, replacing a lease already there (as a map would). */
    void put(long offset, WindowMessage m) {
        if (end == start || offset > offsets[end - 1]) {
            if (end == offsets.length) {
                makeRoom();
            }
            offsets[end] = offset;
            messages[end++] = m;
            return;
        }
        int i = Arrays.binarySearch(offsets, start, end, offset);
        if (i >= 0) {
            messages[i] = m;
            return;
        }
        // below the highest: only when a rule was broken (offsets never go back); kept correct all the same
        if (end == offsets.length) {
            makeRoom();
            i = Arrays.binarySearch(offsets, start, end, offset);
        }
        i = -i - 1;
        System.arraycopy(offsets, i, offsets, i + 1, end - i);
        System.arraycopy(messages, i, messages, i + 1, end - i);
        offsets[i] = offset;
        messages[i] = m;
        end++;
    }

    /** Takes the lease at {@code offset} out; false when there is none. */
    boolean remove(long offset) {
        int i = Arrays.binarySearch(offsets, start, end, offset);
        if (i < 0) {
            return false;
        }
        removeAt(i - start);
        return true;
    }

    /** Takes out the lease at {@code index}. */
    void removeAt(int index) {
        int i = start + index;
        if (i - start < end - 1 - i) {
            System.arraycopy(offsets, start, offsets, start + 1, i - start);
            System.arraycopy(messages, start, messages, start + 1, i - start);
            messages[start++] = null;
        } else {
            System.arraycopy(offsets, i + 1, offsets, i, end - 1 - i);
            System.arraycopy(messages, i + 1, messages, i, end - 1 - i);
            messages[--end] = null;
        }
        if (start == end) {
            start = 0;
            end = 0;
        }
    }

    /** Moves the leases to the front, or into arrays twice as long when they are more than half full. */
    private void makeRoom() {
        int size = end - start;
        if (size * 2 > offsets.length) {
            long[] o = new long[offsets.length * 2];
            WindowMessage[] m = new WindowMessage[offsets.length * 2];
            System.arraycopy(offsets, start, o, 0, size);
            System.arraycopy(messages, start, m, 0, size);
            offsets = o;
            messages = m;
        } else {
            System.arraycopy(offsets, start, offsets, 0, size);
            System.arraycopy(messages, start, messages, 0, size);
            Arrays.fill(messages, size, end, null);
        }
        start = 0;
        end = size;
    }
}
