package io.rmqgw.gateway.pool;

import io.netty.util.concurrent.Future;
import io.rmqgw.gateway.core.RelayContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * The gateway's own upstream connections, one per gateway: one multiplexed {@link UpstreamConnection}
 * per broker address and one to the name servers (tried in failover order). They carry requests the
 * gateway itself originates, apart from the per-client relay connections. Connections are made on
 * first use; each is pinned to one worker event loop, picked round-robin when it is created.
 */
public final class UpstreamPool implements AutoCloseable {

    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Requests one connection accepts at a time unless told otherwise. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 1024;

    private final RelayContext context;
    private final int maxInFlight;
    private final ConcurrentMap<String, UpstreamConnection> brokers = new ConcurrentHashMap<>();
    private final UpstreamConnection namesrv;
    private volatile PooledRequestHandler requestHandler = PooledRequestHandler.UNSUPPORTED;
    private volatile boolean closed;

    public UpstreamPool(RelayContext context) {
        this(context, DEFAULT_MAX_IN_FLIGHT);
    }

    /** @param maxInFlight requests one connection accepts at a time; past it a request fails at once (BUSY) */
    public UpstreamPool(RelayContext context, int maxInFlight) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be at least 1, got " + maxInFlight);
        }
        this.context = context;
        this.maxInFlight = maxInFlight;
        this.namesrv = new UpstreamConnection(context, this, UpstreamConnection.Kind.NAMESRV, null,
            context.transport().workers().next(), maxInFlight);
    }

    /** The connection to the broker at {@code address} ({@code ip:port}, as routes name it). */
    public UpstreamConnection broker(String address) {
        Objects.requireNonNull(address, "address");
        UpstreamConnection c = brokers.get(address);
        if (c == null) {
            c = brokers.computeIfAbsent(address, a -> new UpstreamConnection(context, this,
                UpstreamConnection.Kind.BROKER, a, context.transport().workers().next(), maxInFlight));
            if (closed) {
                c.close(); // created while closing: its requests fail CLOSED like everyone else's
            }
        }
        return c;
    }

    /**
     * The connection to the name servers: dialed to the preferred one of the current list, the next on
     * failure. It stays with the one it reached until it is lost, even when a reload changes the list.
     */
    public UpstreamConnection namesrv() {
        return namesrv;
    }

    /** Where requests that upstreams send on pooled connections go (default {@link PooledRequestHandler#UNSUPPORTED}). */
    public void requestHandler(PooledRequestHandler handler) {
        this.requestHandler = Objects.requireNonNull(handler, "handler");
    }

    PooledRequestHandler requestHandler() {
        return requestHandler;
    }

    /** Requests in flight on every connection of the pool (a stop's drain waits for them). */
    public int inFlight() {
        int total = namesrv.inFlight();
        for (UpstreamConnection c : brokers.values()) {
            total += c.inFlight();
        }
        return total;
    }

    /**
     * Fails every request in flight with CLOSED and closes the connections; call before the event loops stop. Waits
     * (a second at most) until each connection has done so on its loop: a held request failed after its caller's
     * loop ended could not be told (Netty logs the rejected notification as an ERROR).
     */
    @Override
    public void close() {
        closed = true;
        List<Future<?>> closing = new ArrayList<>();
        closing.add(namesrv.close());
        brokers.values().forEach(c -> closing.add(c.close()));
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        for (Future<?> f : closing) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !f.awaitUninterruptibly(left, TimeUnit.NANOSECONDS)) {
                return;
            }
        }
    }
}
