package io.rmqgw.gateway.vq;

/**
 * What {@link VirtualQueueGroup#append} did with a broker's pull answer.
 *
 * @param accepted    records taken into the window
 * @param duplicates  records below the window's fetch offset (already fetched), released
 * @param overflow    records the window had no room for, released; the fetch offset stays at the first of them,
 *                    so they are fetched again once the window has room
 * @param malformed   true when the walk stopped at bytes that are not a well-formed record of this queue; the
 *                    fetch offset stays after the last good record (nothing past it is skipped unseen)
 * @param fetchOffset the window's next offset to fetch afterwards
 */
public record Appended(int accepted, int duplicates, int overflow, boolean malformed, long fetchOffset) {

    /** The queue is not owned (removed meanwhile): everything was released. */
    public static final Appended NOT_OWNED = new Appended(0, 0, 0, false, -1);
}
