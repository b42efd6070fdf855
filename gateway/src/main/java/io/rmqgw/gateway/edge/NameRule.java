package io.rmqgw.gateway.edge;

import io.rmqgw.codec.frame.RemotingFrame;

/** The topic and group name check of one request kind, e.g. {@link NameGuard#checkOffsetRequest}. */
@FunctionalInterface
public interface NameRule {

    /** The refusal for a bad name in {@code frame} (not taken), or null when its names are valid. */
    NameRefusal check(RemotingFrame frame, EdgeSettings settings);
}
