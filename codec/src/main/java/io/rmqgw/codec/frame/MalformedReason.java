package io.rmqgw.codec.frame;

/** Why a frame was refused; the label is used as a metric tag, so the set stays small. */
public enum MalformedReason {
    BAD_LENGTH("bad_length"),
    FRAME_TOO_LONG("frame_too_long"),
    /** Another protocol on a remoting port: HTTP, or a TLS handshake. */
    NOT_REMOTING("not_remoting"),
    HEADER_PAST_FRAME("header_past_frame"),
    UNKNOWN_SERIALIZE_TYPE("unknown_serialize_type"),
    INVALID_JSON("invalid_json"),
    TRUNCATED_BINARY_FIELD("truncated_binary_field"),
    MISSING_FIELD("missing_field");

    private final String label;

    MalformedReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
