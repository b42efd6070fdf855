package io.rmqgw.gateway.pool;

/**
 * Why a gateway-originated request got no answer. The message names the upstream, the request code
 * and, for a timeout, how long the request waited: it is meant to end up in a log line or a remark.
 */
public final class UpstreamException extends Exception {

    /** What went wrong; callers branch on it (retry elsewhere, answer SYSTEM_BUSY, ...). */
    public enum Reason {
        /** No connection could be made (every name server tried, for the name-server connection). */
        CONNECT_FAILED,
        /** The connection closed while the request was in flight. */
        CONNECTION_LOST,
        /** No answer within the request's timeout. */
        TIMEOUT,
        /** Refused without being sent: the in-flight bound is reached or the connection's write buffer is full. */
        BUSY,
        /** The pool is closed (the gateway is stopping). */
        CLOSED
    }

    private final Reason reason;

    public UpstreamException(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
