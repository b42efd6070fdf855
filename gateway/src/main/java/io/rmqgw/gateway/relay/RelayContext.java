package io.rmqgw.gateway.relay;

import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
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
    private volatile boolean draining;

    public RelayContext(Transport transport, Dialer dialer, GatewayMetrics metrics, int maxFrameLength,
                        UpstreamSettings upstream) {
        this.transport = transport;
        this.dialer = dialer;
        this.metrics = metrics;
        this.maxFrameLength = maxFrameLength;
        this.upstream = upstream;
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
            s.client().eventLoop().execute(s::drainStarted);
        }
    }

    /** Bytes queued to client connections and not yet taken by their sockets: in total, and the most on one. */
    public QueuedBytes queuedBytes() {
        long total = 0;
        long largest = 0;
        for (RelaySession s : sessions) {
            long q = s.queuedBytes();
            total += q;
            largest = Math.max(largest, q);
        }
        return new QueuedBytes(total, largest);
    }

    /** What {@link #queuedBytes()} found. */
    public record QueuedBytes(long total, long largest) {
    }

    /** Closes every session (client and upstream side), each once what is queued to its client is written. */
    public void closeAll() {
        for (RelaySession s : sessions) {
            s.closeAfterWrites("gateway stopping");
        }
    }
}
