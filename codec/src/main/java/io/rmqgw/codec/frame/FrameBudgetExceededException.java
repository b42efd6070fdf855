package io.rmqgw.codec.frame;

import io.netty.handler.codec.DecoderException;

/**
 * A read that would make the bytes held in incomplete frames pass the {@link IncompleteFrameBudget}:
 * the connection it came on is closed (its partial frame given back) before memory runs out.
 */
public final class FrameBudgetExceededException extends DecoderException {

    public FrameBudgetExceededException(String message) {
        super(message);
    }
}
