package io.rmqgw.gateway.vq;

/**
 * Rules the state machine keeps by construction; a break is counted ({@link VirtualQueueStats#invariantViolations})
 * and must stay at zero. Each is also checked in full by {@link VirtualQueueGroup#checkInvariants()}.
 */
public enum Invariant {
    /** A real commit reported lower than one reported before for the same owned queue. */
    COMMIT_WENT_BACK("commit_went_back"),
    /** A virtual offset handed out at or below one already handed out on the same virtual queue. */
    VIRTUAL_OFFSET_WENT_BACK("virtual_offset_went_back"),
    /** A window held more messages than its size. */
    WINDOW_OVERFLOW("window_overflow"),
    /** A message was found in a state its transition does not start from. */
    STATE("state");

    private final String label;

    Invariant(String label) {
        this.label = label;
    }

    /** A small, fixed metric tag. */
    public String label() {
        return label;
    }
}
