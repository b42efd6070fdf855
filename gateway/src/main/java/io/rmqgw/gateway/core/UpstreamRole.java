package io.rmqgw.gateway.core;

import java.util.List;

/**
 * What a listener's sessions relay to: the upstreams to dial, how remarks name them, and the
 * {@link HandlerTable} for their request codes. One per listener (the name-server port, each
 * broker's ports); called on the session's event loop, so implementations are thread-safe.
 */
public interface UpstreamRole {

    /**
     * Request code to filters and handler for this role, read per request: a reload that changes which features are
     * configured gives the role a rebuilt table.
     */
    HandlerTable handlers();

    /**
     * Whether the gateway itself serves this role's requests, with no upstream connection (a virtual
     * broker): every request then goes to its handler, which answers it; the table's fallback
     * answers codes nobody registered.
     */
    default boolean local() {
        return false;
    }

    /** Upstream addresses to dial, in order; the first that connects is used (unused when {@link #local}). */
    List<String> upstreamTargets();

    /** A dial to {@code target} starts; {@link #upstreamResult} follows for it. */
    default void upstreamDialing(String target) {
    }

    /** {@code target} connected (or refused): lets a role remember which upstream is good. */
    default void upstreamResult(String target, boolean connected) {
    }

    /** The upstream answered a request (any code). */
    default void upstreamAnswered() {
    }

    /** How remarks name an upstream, e.g. {@code broker 127.0.0.1:10911}. */
    String describe(String target);

    /** A role the gateway serves itself ({@link #local}): every request goes to {@code handlers}. */
    static UpstreamRole served(HandlerTable handlers, String description) {
        return new UpstreamRole() {
            @Override
            public HandlerTable handlers() {
                return handlers;
            }

            @Override
            public boolean local() {
                return true;
            }

            @Override
            public List<String> upstreamTargets() {
                return List.of();
            }

            @Override
            public String describe(String target) {
                return description;
            }
        };
    }
}
