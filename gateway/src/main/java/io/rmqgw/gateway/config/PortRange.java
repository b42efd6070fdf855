package io.rmqgw.gateway.config;

/** An inclusive port range for the per-broker listeners (three ports per broker: VIP, spare, main). */
public record PortRange(int from, int to) {

    public PortRange {
        if (from < 1 || to > 65535 || from > to) {
            throw new ConfigException("broker-ports", "must be FROM-TO within 1-65535, was " + from + "-" + to);
        }
        if (to - from + 1 < 3) {
            throw new ConfigException("broker-ports", "needs at least 3 ports (one broker), was " + from + "-" + to);
        }
    }

    public boolean contains(int port) {
        return port >= from && port <= to;
    }

    @Override
    public String toString() {
        return from + "-" + to;
    }
}
