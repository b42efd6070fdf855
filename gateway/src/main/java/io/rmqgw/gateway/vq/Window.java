package io.rmqgw.gateway.vq;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The messages of one real queue between its real commit and its fetch offset, in offset order (gaps where
 * the broker filtered messages out). The head is always unacknowledged: acknowledged messages at the head
 * are dropped as the window slides; acknowledged ones behind an unacknowledged one keep their place (without
 * their bytes) so the window's size bounds what a restart redelivers.
 */
final class Window {

    final RealQueue queue;
    final ArrayDeque<WindowMessage> messages = new ArrayDeque<>();
    /** Never-delivered messages, in offset order. */
    final ArrayDeque<WindowMessage> fresh = new ArrayDeque<>();
    /** Dead letters handed to the wiring, by offset, until it reports the outcome. */
    final Map<Long, WindowMessage> reportedDeadLetters = new HashMap<>();
    long fetchOffset;
    /** The broker's max offset of the queue as last heard (a fetch answer or GET_MAX_OFFSET); -1: not yet. */
    long brokerEnd = -1;
    long heldBytes;
    long reportedCommit;
    boolean dropped;
    /** The broker's commit when the queue was taken: what it holds for sure. */
    private final long startOffset;

    Window(RealQueue queue, long startOffset) {
        this.queue = queue;
        this.startOffset = startOffset;
        this.fetchOffset = startOffset;
        this.reportedCommit = startOffset;
    }

    long startOffset() {
        return startOffset;
    }

    /** The lowest unacknowledged offset, or the fetch offset when nothing fetched is unacknowledged. */
    long commitOffset() {
        WindowMessage head = messages.peekFirst();
        return head == null ? fetchOffset : head.offset;
    }

    /** Slides past acknowledged messages at the head. */
    void slide() {
        while (!messages.isEmpty() && messages.peekFirst().state == WindowMessage.State.ACKED) {
            messages.pollFirst();
        }
    }
}
