package io.rmqgw.gateway.core;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;

/**
 * Where the client's input stands, and the answers it is owed: its requests (not oneway) read and not yet answered,
 * wherever they wait (dial, upstream, a handler's later answer). A malformed frame ends the input (framing is
 * lost): nothing more is relayed, but the requests read before it still get their answers, then the connection
 * closes. The client is still read meanwhile, its bytes discarded by the decoder: a socket closed with unread bytes
 * is reset by the kernel, which may drop the last answers before they reach the client. On the session's loop.
 *
 * While the gateway stops, the session is Draining: new requests are refused with SYSTEM_BUSY (oneways still relayed),
 * those read before are answered; the gateway closes the connection at the end of its drain.
 *
 * <pre>
 *   Reading --gateway stops--> Draining
 *      |                          |
 *      +------malformed frame-----+--> InputEnded --owed nothing--> Closing
 * </pre>
 */
final class ClientInput {

    /** The client's input. */
    sealed interface State {
        /** Frames are read and relayed. */
        record Reading() implements State {
        }

        /** The gateway stops since {@code sinceNanos}: nothing new goes upstream but oneways. */
        record Draining(long sinceNanos) implements State {
        }

        /** A malformed frame ended the input at {@code sinceNanos}: what was read before is still answered. */
        record InputEnded(long sinceNanos) implements State {
        }

        /** Owed nothing more after its input ended: the close is issued, once. */
        record Closing() implements State {
        }
    }

    private static final State READING = new State.Reading();

    private final Channel client;
    private State state = READING;
    private int owed;

    ClientInput(Channel client) {
        this.client = client;
    }

    State state() {
        return state;
    }

    /** Whether the input ended: nothing more is relayed. */
    boolean ended() {
        return state instanceof State.InputEnded || state instanceof State.Closing;
    }

    /**
     * Whether the session drains: entered when the gateway starts stopping ({@code gatewayDraining}, read on the
     * request path, or the session's drain task, whichever comes first).
     */
    boolean draining(boolean gatewayDraining) {
        if (gatewayDraining && state == READING) {
            state = new State.Draining(System.nanoTime());
        }
        return state instanceof State.Draining;
    }

    /** Answers owed now. */
    int owed() {
        return owed;
    }

    /** A request that will get an answer was read. */
    void owe() {
        owed++;
    }

    /** One answer the client was owed went out (or was given up). */
    void answered() {
        if (owed > 0) {
            owed--;
        }
    }

    /** Every answer still owed was given up (each got SYSTEM_ERROR). */
    void answeredAll() {
        owed = 0;
    }

    /** A malformed frame ended the input; the connection closes once it is owed nothing. */
    void end() {
        if (state == READING || state instanceof State.Draining) {
            state = new State.InputEnded(System.nanoTime());
        }
        closeIfAnswered();
    }

    /** Whether the input ended at least {@code timeoutNanos} ago and the close is not issued yet. */
    boolean overdue(long timeoutNanos) {
        return state instanceof State.InputEnded e && System.nanoTime() - e.sinceNanos() >= timeoutNanos;
    }

    /** Closes a client whose input ended once it is owed nothing more (its last answers flushed first). */
    void closeIfAnswered() {
        if (!(state instanceof State.InputEnded) || owed > 0) {
            return;
        }
        state = new State.Closing();
        client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }
}
