package io.rmqgw.gateway.clients;

import java.util.List;

/**
 * Consumer groups the gateway itself stands for on the real brokers (virtual queues): the brokers must see
 * only the gateway as their member, so their clients' registrations stop at the gateway, and a client asking
 * a real broker for its group's members gets the gateway's own list.
 */
public interface ServedGroups {

    /** No group is served: every registration goes to the brokers as it is. */
    ServedGroups NONE = new ServedGroups() {
        @Override
        public boolean isServed(String group) {
            return false;
        }

        @Override
        public List<String> memberIds(String group) {
            return List.of();
        }
    };

    /** Whether the gateway stands for {@code group} on the real brokers. */
    boolean isServed(String group);

    /** The client ids of the group's consumers as its clients must see them (their rebalance). */
    List<String> memberIds(String group);
}
