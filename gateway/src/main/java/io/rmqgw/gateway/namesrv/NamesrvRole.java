package io.rmqgw.gateway.namesrv;

import io.rmqgw.gateway.admin.Readiness;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.UpstreamRole;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.NamesrvAddresses;
import java.util.ArrayList;
import java.util.List;

/**
 * The name-server role on the gateway's main port: each client connection relays to a name
 * server, dialed in failover order (the last good one first, those that failed lately or dial slowly last).
 */
public final class NamesrvRole implements UpstreamRole {

    private final RelayContext context;
    private volatile HandlerTable handlers;
    private final GatewayMetrics metrics;
    private final Readiness readiness;

    /** @param handlers the name-server port's handler table (where the gateway registers codes) */
    public NamesrvRole(RelayContext context, HandlerTable handlers, Readiness readiness) {
        this.context = context;
        this.metrics = context.metrics();
        this.handlers = handlers;
        this.readiness = readiness;
    }

    @Override
    public HandlerTable handlers() {
        return handlers;
    }

    /** Every later request is dispatched by {@code rebuilt} (a reload changed which features are configured). */
    public void handlers(HandlerTable rebuilt) {
        this.handlers = rebuilt;
    }

    @Override
    public List<String> upstreamTargets() {
        NamesrvAddresses namesrv = context.upstream().namesrv();
        if (namesrv == null) {
            return List.of();
        }
        List<Integer> order = namesrv.failoverOrder();
        List<String> targets = new ArrayList<>(order.size());
        for (int index : order) {
            targets.add(namesrv.get(index).toString());
        }
        return targets;
    }

    @Override
    public void upstreamDialing(String target) {
        NamesrvAddresses namesrv = context.upstream().namesrv();
        int index = indexOf(namesrv, target);
        if (index >= 0) {
            namesrv.dialing(index);
        }
    }

    @Override
    public void upstreamResult(String target, boolean connected) {
        metrics.namesrvUp(target, connected);
        NamesrvAddresses namesrv = context.upstream().namesrv();
        int index = indexOf(namesrv, target);
        if (index < 0) {
            return; // the list changed since the dial
        }
        if (connected) {
            namesrv.markGood(index);
        } else {
            namesrv.markFailed(index);
        }
    }

    private static int indexOf(NamesrvAddresses namesrv, String target) {
        for (int i = 0; namesrv != null && i < namesrv.size(); i++) {
            if (namesrv.get(i).toString().equals(target)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public void upstreamAnswered() {
        readiness.namesrvAnswered();
    }

    @Override
    public String describe(String target) {
        return "name server " + target;
    }
}
