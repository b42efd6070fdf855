package io.rmqgw.gateway.vq;

/**
 * How fetches from the brokers and clients' pulls flowed for one group (kept on the group's event loop, published
 * as a copy with the meters' snapshot): where throughput waits, on the brokers, on a full window or on clients.
 */
final class FlowCounters {

    /** PULL_MESSAGE requests sent to the brokers. */
    long fetches;
    /** Messages those answers brought into the windows. */
    long fetchedMessages;
    /** Fetches answered with messages, but fewer than asked (the queue's end reached, or a broker's transfer limit). */
    long fetchesShort;
    /** Fetches answered with no message (held by the broker until its suspend ended, or the queue's end). */
    long fetchesEmpty;
    /** Time fetches answered with messages were in flight (a long poll's wait included), summed. */
    long fetchNanos;
    /**
     * Time real queues went without a fetch because their window was full, summed over queues; also while no client
     * consumes (the window stays full of messages nobody pulls).
     */
    long windowFullNanos;
    /** Client pulls answered with messages, at once or when woken. */
    long pullsFound;
    /** Messages in those answers. */
    long pulledMessages;
    /** Client pulls held (nothing to lease when they came). */
    long pullsHeld;
    /** Held pulls answered with messages when messages arrived or acknowledgements lifted a limit. */
    long heldWoken;
    /** Time those pulls were held, summed. */
    long heldWokenNanos;
    /** Held pulls answered empty so their clients' next pulls bring their commits (a window was full). */
    long heldRefreshed;
    /** Held pulls answered empty at the end of their hold. */
    long heldExpired;
    /** Client pulls answered empty at once because another client owns their virtual queue (or the group drains). */
    long pullsRefused;
    /** Clients starting on a virtual queue (QUERY_CONSUMER_OFFSET after their rebalance gave it to them). */
    long starts;
    /** Starts that took the queue from another client. */
    long ownerChanges;
    /** Virtual queues taken over by a client that kept pulling them while their owner was quiet. */
    long claims;

    FlowCounters copy() {
        FlowCounters c = new FlowCounters();
        c.fetches = fetches;
        c.fetchedMessages = fetchedMessages;
        c.fetchesShort = fetchesShort;
        c.fetchesEmpty = fetchesEmpty;
        c.fetchNanos = fetchNanos;
        c.windowFullNanos = windowFullNanos;
        c.pullsFound = pullsFound;
        c.pulledMessages = pulledMessages;
        c.pullsHeld = pullsHeld;
        c.heldWoken = heldWoken;
        c.heldWokenNanos = heldWokenNanos;
        c.heldRefreshed = heldRefreshed;
        c.heldExpired = heldExpired;
        c.pullsRefused = pullsRefused;
        c.starts = starts;
        c.ownerChanges = ownerChanges;
        c.claims = claims;
        return c;
    }
}
