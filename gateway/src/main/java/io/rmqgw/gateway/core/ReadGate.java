package io.rmqgw.gateway.core;

import io.netty.channel.Channel;

/**
 * The only writer of {@code autoRead} on a session's two channels, so backpressure has one place
 * to read. The client is read only while its upstream is settled (not being dialed) and can take
 * more writes, and while the client itself can take more writes (a client that reads nothing must
 * not get more requests in, each of which may end in an answer the gateway composes itself); the
 * upstream is read only while the client can take more writes. Owned by the session's event loop.
 */
final class ReadGate {

    private final Channel client;
    private Channel upstream;
    /** Accepted connections start unread: nothing to forward to until the first dial settles. */
    private boolean dialing = true;
    private boolean upstreamFull;
    /** Whether the client is read now (its autoRead as last set here). */
    private boolean clientRead;
    /** When the client's reads last resumed after the gateway stopped them ({@code System.nanoTime()}); 0: never. */
    private long clientReadSinceNanos;

    ReadGate(Channel client) {
        this.client = client;
    }

    /** A dial started ({@code true}) or settled either way ({@code false}). */
    void dialing(boolean dialing) {
        this.dialing = dialing;
        apply();
    }

    /** The session's upstream channel is now {@code channel} (null: none). */
    void upstream(Channel channel) {
        this.upstream = channel;
        this.upstreamFull = channel != null && !channel.isWritable();
        if (channel != null) {
            channel.config().setAutoRead(client.isWritable());
        }
    }

    /** The upstream's outbound buffer crossed a water mark. */
    void upstreamWritabilityChanged() {
        upstreamFull = upstream != null && !upstream.isWritable();
        apply();
    }

    /** The client's outbound buffer crossed a water mark. */
    void clientWritabilityChanged() {
        if (upstream != null) {
            upstream.config().setAutoRead(client.isWritable());
        }
        apply();
    }

    /**
     * Whether the gateway reads the client now: while it does not (a dial, a full upstream, a client that takes
     * nothing of its answers), a frame the client began stalls because of the gateway, not the client.
     */
    boolean clientRead() {
        return clientRead;
    }

    /** When the gateway last resumed reading the client after it had stopped ({@code System.nanoTime()}; 0: never). */
    long clientReadSinceNanos() {
        return clientReadSinceNanos;
    }

    private void apply() {
        boolean read = !dialing && !upstreamFull && client.isWritable();
        if (read && !clientRead) {
            clientReadSinceNanos = System.nanoTime() | 1;
        }
        clientRead = read;
        client.config().setAutoRead(read);
    }
}
