package io.rmqgw.gateway.core;

import io.rmqgw.gateway.config.GatewayConfig;

/**
 * What a feature (fan-out, coalescing, virtual queues, and the ones to come) gives the gateway, the one way it plugs
 * in: its filters and handlers, added to each role's {@link HandlerTable} as the assembly builds it, and its part of
 * a reload. A feature's own listeners, connections and meters are its business; the core never names a feature.
 */
public interface Feature {

    /** The configuration key it is set under, e.g. {@code coalescing}: what a reload reports as applied. */
    String name();

    /**
     * Adds its filters (after the role's own: names and limits come first) to the table of {@code role} being built,
     * only while it is configured: a feature that is off is not on the request path at all. {@code upstream} is the
     * broker's address on a broker role, null on the name-server role. Called once per table, and again for the
     * rebuilt tables after a reload that changed some feature.
     */
    void register(Role role, String upstream, HandlerTable.Builder table);

    /**
     * Applies its part of {@code next} to every later request; whether it changed anything (the tables are then
     * rebuilt). Its filters keep checking its settings too: a request may pass the old table just after a reload.
     */
    boolean reload(GatewayConfig next);

    /** Stops its own work (timers, threads, clients) at the gateway's stop, while the upstream pool still runs. */
    default void close() {
    }
}
