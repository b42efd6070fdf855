package io.rmqgw.gateway.vq;

/** Why a lease ended without an acknowledgement (and its message became available again, or dead). */
public enum RedeliveryReason {
    /** The holder's connection closed or unregistered the group. */
    HOLDER_GONE("holder_gone"),
    /** The holder neither pulled nor committed on the virtual queue for the lease timeout. */
    IDLE("idle"),
    /** The lease reached its hard deadline. */
    DEADLINE("deadline"),
    /** The holder gave the message back (CONSUMER_SEND_MSG_BACK: its consumer asked to consume it later). */
    GAVE_BACK("gave_back"),
    /**
     * The holder's own requests show it never got the message: it pulled again from an offset at or below the
     * lease, or asked for the queue's offset anew (it dropped the queue in a rebalance and got it back).
     */
    NOT_RECEIVED("not_received");

    private final String label;

    RedeliveryReason(String label) {
        this.label = label;
    }

    /** A small, fixed metric tag. */
    public String label() {
        return label;
    }
}
