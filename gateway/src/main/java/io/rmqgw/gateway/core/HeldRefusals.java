package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * A session's rate-limit refusals, each composed and held {@code rate-limits.refusal-delay} before it is written, so
 * that a client retrying at once (as RocketMQ producers retry SYSTEM_BUSY) cannot spin: written once, when due, by
 * the drain, or released with the connection. Every one is owed an answer and counts in the session's in-flight
 * requests. On the session's event loop.
 */
final class HeldRefusals {

    /**
     * Refusals held on one connection at once; past it a refusal is answered at once, so a client that keeps sending
     * does not grow what the gateway holds for it.
     */
    static final int MAX_HELD = 64;

    private final Replies replies;
    private final RelaySession session;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    /** {@code held.size()}, readable from any thread (the drain's count). */
    private volatile int count;

    HeldRefusals(Replies replies, RelaySession session) {
        this.replies = replies;
        this.session = session;
    }

    /**
     * Holds {@code answer} for {@code delayNanos}; false (the answer still the caller's, to write at once) when the
     * delay is 0, {@value #MAX_HELD} are held already, the gateway drains or the client is gone.
     */
    boolean hold(ByteBuf answer, long delayNanos, boolean draining) {
        if (delayNanos <= 0 || held.size() >= MAX_HELD || draining || !session.channel().isActive()) {
            return false;
        }
        Held h = new Held(answer);
        held.add(h);
        count = held.size();
        h.timer = session.loop().schedule(() -> due(h), delayNanos, TimeUnit.NANOSECONDS);
        return true;
    }

    int count() {
        return count;
    }

    /** A held refusal's delay is over: written unless the drain wrote it or a close released it already. */
    private void due(Held h) {
        if (!held.remove(h)) {
            return;
        }
        count = held.size();
        replies.heldRefusalDue(h.answer);
    }

    /** Every held refusal goes out now (the drain), each once: their timers find them gone. */
    void writeAll() {
        for (Held h; (h = held.poll()) != null; ) {
            h.timer.cancel(false);
            replies.heldRefusalWritten(h.answer);
        }
        count = 0;
    }

    /** A closed connection's held refusals: released unwritten, their timers stopped. */
    void releaseAll() {
        for (Held h; (h = held.poll()) != null; ) {
            h.timer.cancel(false);
            h.answer.release();
        }
        count = 0;
    }

    /** A refusal's answer, held, and the timer that writes it. */
    private static final class Held {
        final ByteBuf answer;
        ScheduledFuture<?> timer;

        Held(ByteBuf answer) {
            this.answer = answer;
        }
    }
}
