package io.rmqgw.gateway.core;

import io.netty.channel.Channel;
import io.rmqgw.gateway.net.Addresses;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WARN lines of connections closed for what their peers sent (malformed or over-budget frames, a frame never
 * finished): a peer can cause these at will, so they go through the gateway-wide limiter, and a flood that stopped
 * is still reported with the count not logged (the metrics count each close).
 */
final class PeerCloses {

    private static final Logger log = LoggerFactory.getLogger(PeerCloses.class);

    private PeerCloses() {
    }

    /**
     * The WARN for a connection closed for what its peer sent (malformed or over-budget frames, a frame
     * never finished): a peer can cause these at will, so they go through the gateway-wide limiter.
     */
    static void logClose(LogRateLimiter limiter, String side, Channel channel, String why, boolean answersOwed) {
        String after = answersOwed ? " (after the answers it is owed)" : "";
        long suppressed = limiter.tryAcquire();
        if (suppressed == LogRateLimiter.SUPPRESS) {
            log.debug("closing {} connection {}{}: {}", side, Addresses.of(channel.remoteAddress()), after, why);
        } else if (suppressed > 0) {
            log.warn("closing {} connection {}{}: {} ({} more such lines were not logged; "
                + "rmqgw_connections_closed_total counts each)", side, Addresses.of(channel.remoteAddress()), after, why,
                suppressed);
        } else {
            log.warn("closing {} connection {}{}: {}", side, Addresses.of(channel.remoteAddress()), after, why);
        }
    }

    /** A flood of such closes that stopped is still reported: one line with the count not logged. */
    static void reportSuppressed(LogRateLimiter limits) {
        long suppressed = limits.takeSuppressed();
        if (suppressed > 0) {
            log.warn("{} more connections closed for what their peers sent (malformed, over-budget or unfinished "
                + "frames) were not logged (at most {} lines per {}; rmqgw_connections_closed_total counts each)",
                suppressed, limits.linesPerInterval(), limits.interval());
        }
    }
}
