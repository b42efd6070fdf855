package io.rmqgw.gateway.broker;

import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.UpstreamRole;
import io.rmqgw.metrics.GatewayMetrics;
import java.util.List;

/** The broker role: a client connection on a broker's gateway ports relays to that broker. */
final class BrokerRole implements UpstreamRole {

    private final String brokerAddress;
    /** The store-host mapping its table was built with, for a rebuilt one. */
    private final StoreHostMapper storeHosts;
    private final List<String> targets;
    private volatile HandlerTable handlers;
    private final GatewayMetrics metrics;

    BrokerRole(String brokerAddress, StoreHostMapper storeHosts, HandlerTable handlers, RelayContext context) {
        this.brokerAddress = brokerAddress;
        this.storeHosts = storeHosts;
        this.targets = List.of(brokerAddress);
        this.handlers = handlers;
        this.metrics = context.metrics();
    }

    @Override
    public HandlerTable handlers() {
        return handlers;
    }

    /** Every later request is dispatched by {@code rebuilt} (a reload changed which features are configured). */
    void handlers(HandlerTable rebuilt) {
        this.handlers = rebuilt;
    }

    String brokerAddress() {
        return brokerAddress;
    }

    StoreHostMapper storeHosts() {
        return storeHosts;
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
