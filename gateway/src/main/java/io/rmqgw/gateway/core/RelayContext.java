package io.rmqgw.gateway.core;

import io.rmqgw.codec.frame.IncompleteFrameBudget;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.gateway.tls.ServerTls;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What every session and handler shares: transport, dialer, limits, metrics, the cluster as the
 * gateway learned it, the client connections by client id and group, and the sessions (to drain
 * them on stop).
 */
public final class RelayContext {

    private final Transport transport;
    private final Dialer dialer;
    private final GatewayMetrics metrics;
    private final int maxFrameLength;
    private volatile UpstreamSettings upstream;
    private volatile EdgeSettings edge = EdgeSettings.passThrough();
    private final Set<RelaySession> sessions = ConcurrentHashMap.newKeySet();
    private final ClusterView cluster = new ClusterView();
    private final ClientRegistry clients = new ClientRegistry();
    private final ConnectionLimits connections = new ConnectionLimits();
    private volatile DownstreamConfig downstream = DownstreamConfig.DEFAULT;
    /** Bytes all client connections hold in frames not yet whole (downstream.incomplete-frame-budget). */
    private final IncompleteFrameBudget incompleteFrames = new IncompleteFrameBudget(DownstreamConfig.DEFAULT.incompleteFrameLimit());
    /** A peer can send malformed or unfinished frames at will: the WARN lines of such closes are bounded (the metrics count each). */
    private final LogRateLimiter peerCloseLog = new LogRateLimiter(10, Duration.ofSeconds(10));
    private final ServerTls tls;
    private final RateLimits rateLimits;
    private final AllocationFailures allocationFailures;
    private volatile boolean draining;
    private static final long QUEUED_BYTES_FRESH_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    private volatile QueuedBytes lastQueued;

    public RelayContext(Transport transport, Dialer dialer, GatewayMetrics metrics, int maxFrameLength,
                        UpstreamSettings upstream) {
        this.transport = transport;
        // upstream.tls applies to every upstream connection, relayed and pooled, from the next dial on
        this.dialer = Dialer.withTls(dialer, () -> this.upstream.tls());
        this.metrics = metrics;
        this.maxFrameLength = maxFrameLength;
        this.upstream = upstream;
        metrics.incompleteFrames(incompleteFrames::held, incompleteFrames::limit);
        this.tls = new ServerTls(metrics);
        this.rateLimits = new RateLimits(metrics);
        this.allocationFailures = new AllocationFailures(metrics);
    }

    /** Buffers that could not be allocated for a connection (each closed it). */
    public AllocationFailures allocationFailures() {
        return allocationFailures;
    }

    /** The rate limits in force. */
    public RateLimits rateLimits() {
        return rateLimits;
    }

    /** TLS on the client listeners: the context each accepted connection takes. */
    public ServerTls tls() {
        return tls;
    }

    public Transport transport() {
        return transport;
    }

    /** Brokers, clusters and topic queues as the name servers described them to the gateway. */
    public ClusterView cluster() {
        return cluster;
    }

    /** Client connections by client id and group, from their heartbeats. */
    public ClientRegistry clients() {
        return clients;
    }

    /** Opens upstream connections. */
    public Dialer dialer() {
        return dialer;
    }

    public GatewayMetrics metrics() {
        return metrics;
    }

    public int maxFrameLength() {
        return maxFrameLength;
    }

    /** The current upstream settings (replaced by a reload). */
    public UpstreamSettings upstream() {
        return upstream;
    }

    /** The current edge settings: header encodings and name checks (replaced by a reload). */
    public EdgeSettings edge() {
        return edge;
    }

    /** How client connections are treated: idle and frame timeouts, connection limits (replaced by a reload). */
    public DownstreamConfig downstream() {
        return downstream;
    }

    /** Applies new client-connection settings: limits to the next accept, timeouts to connections accepted later. */
    public void downstream(DownstreamConfig settings) {
        this.downstream = settings;
        incompleteFrames.limit(settings.incompleteFrameLimit());
    }

    /** The budget every client connection's incomplete frame takes from (its limit follows the downstream settings). */
    public IncompleteFrameBudget incompleteFrames() {
        return incompleteFrames;
    }

    /**
     * The largest frame a client connection may store whole: {@code downstream.max-incomplete-frame-bytes}, within
     * {@code max-frame-length}; a larger one (up to {@code max-frame-length}) only streams through, when its handler
     * and filters let it.
     */
    int clientFrameLimit(DownstreamConfig settings) {
        return Math.min(maxFrameLength, settings.maxIncompleteFrameBytes());
    }

    /** Bounds the WARN lines of connections closed for what their peers sent, gateway-wide. */
    LogRateLimiter peerCloseLog() {
        return peerCloseLog;
    }

    ConnectionLimits connections() {
        return connections;
    }

    /** Applies new edge settings to every later frame. */
    public void edge(EdgeSettings settings) {
        this.edge = settings;
    }

    /** Applies reloaded upstream settings to every later dial and request. */
    public void upstream(UpstreamSettings settings) {
        this.upstream = settings;
    }

    void register(RelaySession session) {
        sessions.add(session);
    }

    void unregister(RelaySession session) {
        sessions.remove(session);
    }

    /** Requests in flight across all sessions, as "N forwarded, M answered later by their handler" (a stop's log). */
    public String describeInFlight() {
        int forwarded = 0;
        int deferred = 0;
        for (RelaySession s : sessions) {
            forwarded += s.forwardedInFlight();
            deferred += s.inFlight() - s.forwardedInFlight();
        }
        return forwarded + " forwarded upstream, " + deferred + " to be answered later by their handler";
    }

    /** Requests in flight across all sessions. */
    public int inFlight() {
        int total = 0;
        for (RelaySession s : sessions) {
            total += s.inFlight();
        }
        return total;
    }

    /** Whether the gateway drains: new requests are answered SYSTEM_BUSY and never forwarded. */
    public boolean draining() {
        return draining;
    }

    /**
     * Starts the drain: from now on every session answers new requests SYSTEM_BUSY, and each one, on its own
     * event loop, answers what it read but did not forward yet (and long polls that may be cut short). Tasks
     * are queued to each session's loop; a task queued to every loop after this returns runs after them.
     */
    public void startDraining() {
        draining = true;
        for (RelaySession s : sessions) {
            s.channel().eventLoop().execute(s::drainStarted);
        }
    }

    /**
     * Bytes queued to client connections and not yet taken by their sockets: in total, and the most on one. A walk
     * over every session, so one walk serves every caller for {@link #QUEUED_BYTES_FRESH_NANOS} (a scrape reads two
     * gauges; a scraper polling every 100 ms over 10,000 connections spent a sixth of a core on it).
     */
    public QueuedBytes queuedBytes() {
        QueuedBytes last = lastQueued;
        long now = System.nanoTime();
        if (last != null && now - last.atNanos() < QUEUED_BYTES_FRESH_NANOS) {
            return last;
        }
        long total = 0;
        long largest = 0;
        for (RelaySession s : sessions) {
            long q = s.queuedBytes();
            total += q;
            largest = Math.max(largest, q);
        }
        QueuedBytes walked = new QueuedBytes(total, largest, now);
        lastQueued = walked;
        return walked;
    }

    /** What {@link #queuedBytes()} found, and when ({@code System.nanoTime()}). */
    public record QueuedBytes(long total, long largest, long atNanos) {
    }

    /** Closes every session (client and upstream side), each once what is queued to its client is written. */
    public void closeAll() {
        for (RelaySession s : sessions) {
            s.closeAfterWrites("gateway stopping");
        }
    }
}
