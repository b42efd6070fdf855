package io.rmqgw.gateway.relay;

import io.netty.channel.Channel;
import io.netty.channel.WriteBufferWaterMark;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** What every session shares: transport, limits, metrics, and the registry used to drain on stop. */
public final class RelayContext {

    /** Per-connection write buffer bounds: past high, the peer feeding it stops being read. */
    public static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(256 * 1024, 1024 * 1024);

    private final Transport transport;
    private final GatewayMetrics metrics;
    private final int maxFrameLength;
    private volatile UpstreamSettings upstream;
    private volatile EdgeSettings edge = EdgeSettings.passThrough();
    private final Set<RelaySession> sessions = ConcurrentHashMap.newKeySet();
    private final Set<String> upstreamLocalAddresses = ConcurrentHashMap.newKeySet();

    public RelayContext(Transport transport, GatewayMetrics metrics, int maxFrameLength, UpstreamSettings upstream) {
        this.transport = transport;
        this.metrics = metrics;
        this.maxFrameLength = maxFrameLength;
        this.upstream = upstream;
    }

    public Transport transport() {
        return transport;
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

    void upstreamOpened(Channel upstream) {
        upstreamLocalAddresses.add(upstream.localAddress().toString());
    }

    /** Local addresses of every upstream connection opened so far, as {@code /ip:port}. */
    public Set<String> upstreamLocalAddresses() {
        return Set.copyOf(upstreamLocalAddresses);
    }

    /** Requests in flight across all sessions. */
    public int inFlight() {
        int total = 0;
        for (RelaySession s : sessions) {
            total += s.inFlight();
        }
        return total;
    }

    /** Closes every session (client and upstream side). */
    public void closeAll() {
        for (RelaySession s : sessions) {
            s.close("gateway stopping");
        }
    }
}
