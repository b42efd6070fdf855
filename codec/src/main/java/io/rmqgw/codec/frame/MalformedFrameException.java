package io.rmqgw.codec.frame;

import io.netty.handler.codec.CorruptedFrameException;

/** A frame that cannot be a remoting frame. The connection that sent it is closed. */
public final class MalformedFrameException extends CorruptedFrameException {

    private final MalformedReason reason;

    public MalformedFrameException(MalformedReason reason, String detail) {
        super(reason.label() + ": " + detail);
        this.reason = reason;
    }

    public MalformedFrameException(MalformedReason reason, String detail, Throwable cause) {
        super(reason.label() + ": " + detail, cause);
        this.reason = reason;
    }

    public MalformedReason reason() {
        return reason;
    }
}
