package io.rmqgw.gateway;

import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.metrics.GatewayMetrics;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * A running gateway: the name-server listener, one listener pair per upstream broker, and the
 * upstream connections behind them. {@link #start} returns once the listen port is bound.
 */
public final class Gateway implements AutoCloseable {

    private Gateway() {
    }

    /** Binds the listen port, asks the name servers for the cluster, and binds a listener per broker found. */
    public static Gateway start(GatewayConfig config, GatewayMetrics metrics) throws InterruptedException {
        throw new UnsupportedOperationException("not yet wired");
    }

    /** Where clients point {@code namesrvAddr}. */
    public InetSocketAddress listenAddress() {
        throw new UnsupportedOperationException();
    }

    /** Real broker address to the gateway address advertised for it, for every broker seen so far. */
    public Map<String, String> brokerListeners() {
        throw new UnsupportedOperationException();
    }

    /** Local addresses of every upstream connection the gateway opened (tests check brokers saw nothing else). */
    public Set<String> upstreamLocalAddresses() {
        throw new UnsupportedOperationException();
    }

    /** Stops accepting, lets in-flight requests finish for at most {@code drain}, then closes everything. */
    public void close(Duration drain) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(10));
    }
}
