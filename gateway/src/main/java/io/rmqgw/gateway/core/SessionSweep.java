package io.rmqgw.gateway.core;

import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A session's timeouts, scanned every {@value #SCAN_MILLIS} ms on its event loop: a frame that never completes, a
 * client that takes nothing of its write buffer or sends nothing at all, answers owed long after a malformed frame,
 * and requests the upstream did not answer in time. One scheduled task per connection instead of a timer per
 * request; a failure in it closes the connection rather than ending the scan, which would leave the connection's
 * timeouts unwatched for good.
 */
final class SessionSweep {

    static final long SCAN_MILLIS = 500;

    private final RelaySession session;
    private final Channel client;
    private final RelayContext context;
    private final ReadGate reads;
    private final String role;
    private ScheduledFuture<?> scan;

    SessionSweep(RelaySession session, Channel client, RelayContext context, ReadGate reads, String role) {
        this.session = session;
        this.client = client;
        this.context = context;
        this.reads = reads;
        this.role = role;
    }

    void start() {
        scan = client.eventLoop().scheduleAtFixedRate(this::sweep, SCAN_MILLIS, SCAN_MILLIS, TimeUnit.MILLISECONDS);
    }

    void stop() {
        if (scan != null) {
            scan.cancel(false);
        }
    }

    private void sweep() {
        try {
            closeIfAFrameStalled();
            PeerCloses.reportSuppressed(context.peerCloseLog());
            session.timeoutsDue();
        } catch (Throwable t) {
            session.failed(client, "client", t);
        }
    }

    /**
     * A frame that began to arrive and never completes (slowloris) would hold its buffer for ever. Its time runs
     * only while the gateway reads the client: one the gateway stopped reading (a client that takes none of its
     * answers is closed by {@link ClientWrites#closeIfUnwritableTooLong}) stalls because of the gateway, and its frame's time
     * starts again when its reads resume.
     */
    private void closeIfAFrameStalled() {
        Duration limit = context.downstream().frameTimeout();
        FrameDecoder frames = session.clientFrames();
        long since = frames == null ? 0 : frames.partialFrameSinceNanos();
        if (since == 0 || limit.isZero() || !client.isActive() || !reads.clientRead()) {
            return;
        }
        long resumed = reads.clientReadSinceNanos();
        if (resumed != 0 && resumed - since > 0) {
            since = resumed;
        }
        if (System.nanoTime() - since < limit.toNanos()) {
            return;
        }
        PeerCloses.logClose(context.peerCloseLog(), "client", client, "a frame began to arrive " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since)
            + " ms ago and is still incomplete (downstream.frame-timeout " + limit + ")", false);
        context.metrics().connectionClosed(role, CloseReason.FRAME_TIMEOUT);
        client.close();
    }
}
