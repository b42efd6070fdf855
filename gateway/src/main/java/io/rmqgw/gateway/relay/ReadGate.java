package io.rmqgw.gateway.relay;

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

    private void apply() {
        client.config().setAutoRead(!dialing && !upstreamFull && client.isWritable());
    }
}
