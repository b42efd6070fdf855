package io.rmqgw.gateway.core;

import io.netty.channel.Channel;

/**
 * Where a session's upstream connection stands. Each event is a method that returns the next
 * state; an event that makes no sense in a state is rejected with {@link IllegalStateException}
 * rather than silently ignored. Transitions happen on the session's event loop only.
 *
 * <pre>
 *   Accepted --dialing--> Connecting --connected--> Connected --lost--> Unavailable
 *      |                   |  ^  |
 *      |                   |  +--+ dialing (the next target)
 *      |                   +--unavailable--> Unavailable --dialing--> Connecting (a redial)
 *      +--unavailable (no target configured)--> Unavailable
 *      +--local (a role without upstream)--> Local
 *   any --closed--> Closed (final: every other event is rejected)
 * </pre>
 */
sealed interface SessionState {

    /** The role has no upstream: the gateway itself serves every request (a virtual broker). */
    default SessionState local() {
        throw illegal("local");
    }

    /** Starts a dial of {@code target}. */
    default SessionState dialing(String target) {
        throw illegal("dialing " + target);
    }

    /** The dial in progress succeeded over {@code channel}. */
    default SessionState connected(Channel channel) {
        throw illegal("connected");
    }

    /** No upstream could be reached. */
    default SessionState unavailable(String reason, long nowNanos) {
        throw illegal("unavailable");
    }

    /** The upstream connection closed. */
    default SessionState lost(String reason, long nowNanos) {
        throw illegal("lost");
    }

    /** The client connection closed: final. */
    default SessionState closed() {
        return new Closed();
    }

    private IllegalStateException illegal(String event) {
        return new IllegalStateException("session event '" + event + "' is illegal in state " + this);
    }

    /** Accepted, not read yet, nothing dialed. */
    record Accepted() implements SessionState {
        @Override
        public SessionState local() {
            return new Local();
        }

        @Override
        public SessionState dialing(String target) {
            return new Connecting(target);
        }

        @Override
        public SessionState unavailable(String reason, long nowNanos) {
            return new Unavailable(reason, nowNanos);
        }
    }

    /** Dialing {@code target}; the client channel is not read meanwhile. */
    record Connecting(String target) implements SessionState {
        @Override
        public SessionState dialing(String next) {
            return new Connecting(next);
        }

        @Override
        public SessionState connected(Channel channel) {
            return new Connected(target, channel);
        }

        @Override
        public SessionState unavailable(String reason, long nowNanos) {
            return new Unavailable(reason, nowNanos);
        }
    }

    /** Connected to {@code target} over {@code channel}: frames relayed. */
    record Connected(String target, Channel channel) implements SessionState {
        @Override
        public SessionState lost(String reason, long nowNanos) {
            return new Unavailable(reason, nowNanos);
        }
    }

    /** No upstream since {@code sinceNanos}: requests are answered by their handler (cache) or an error. */
    record Unavailable(String reason, long sinceNanos) implements SessionState {
        @Override
        public SessionState dialing(String target) {
            return new Connecting(target);
        }

        @Override
        public SessionState unavailable(String again, long nowNanos) {
            return new Unavailable(again, nowNanos);
        }
    }

    /** No upstream by design: each request's handler answers it (the gateway as a broker). */
    record Local() implements SessionState {
    }

    /** The session is over. */
    record Closed() implements SessionState {
        @Override
        public SessionState closed() {
            return this;
        }
    }
}
