package io.rmqgw.gateway.vq;

import java.util.List;

/**
 * Consumer groups the gateway itself stands for on the real brokers (virtual queues): the brokers must see
 * only the gateway as their member, so their clients' registrations stop at the gateway, and a client asking
 * a real broker for its group's members gets the gateway's own list.
 */
interface ServedGroups {

    /** Whether any group is served now (a reload changes them). */
    boolean any();

    /** Whether the gateway stands for {@code group} on the real brokers. */
    boolean isServed(String group);

    /** The client ids of the group's consumers as its clients must see them (their rebalance). */
    List<String> memberIds(String group);
}
