package io.rmqgw.codec.name;

/** The outcome of a topic or group name check; {@link #label()} is a small, fixed metric tag. */
public enum NameCheck {
    VALID("valid"),
    /** Missing, empty or only whitespace (the broker's "blank"). */
    EMPTY("empty"),
    /** A character outside {@code %|-_0-9A-Za-z}. */
    ILLEGAL_CHARACTER("illegal_character"),
    /** Longer than the configured maximum for its kind. */
    TOO_LONG("too_long"),
    /** A system topic brokers refuse sends to (answered with NO_PERMISSION, not INVALID_PARAMETER). */
    SEND_FORBIDDEN("send_forbidden");

    private final String label;

    NameCheck(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public boolean isValid() {
        return this == VALID;
    }
}
