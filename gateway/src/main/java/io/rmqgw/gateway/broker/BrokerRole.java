package io.rmqgw.gateway.broker;

import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.UpstreamRole;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.List;

/** The broker role: a client connection on a broker's gateway ports relays to that broker. */
final class BrokerRole implements UpstreamRole {

    private final String brokerAddress;
    private final List<String> targets;
    private final HandlerTable handlers;
    private final GatewayMetrics metrics;

    BrokerRole(String brokerAddress, HandlerTable handlers, RelayContext context) {
        this.brokerAddress = brokerAddress;
        this.targets = List.of(brokerAddress);
        this.handlers = handlers;
        this.metrics = context.metrics();
    }

    @Override
    public HandlerTable handlers() {
        return handlers;
    }

    @Override
    public List<String> upstreamTargets() {
        return targets;
    }

    @Override
    public void upstreamResult(String target, boolean connected) {
        metrics.brokerUp(target, connected);
    }

    @Override
    public String describe(String target) {
        return "broker " + target;
    }

    @Override
    public String toString() {
        return "broker " + brokerAddress;
    }
}
