package io.rmqgw.gateway.core;

import io.rmqgw.metrics.GatewayMetrics;

/** What a listener's sessions stand for: a name server (the gateway's main port) or a broker (its broker ports). */
public enum Role {
    NAMESRV(GatewayMetrics.NAMESRV),
    BROKER(GatewayMetrics.BROKER);

    private final String label;

    Role(String label) {
        this.label = label;
    }

    /** The metric and log label: {@code namesrv} or {@code broker}. */
    public String label() {
        return label;
    }

    @Override
    public String toString() {
        return label;
    }
}
