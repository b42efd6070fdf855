package io.rmqgw.gateway.route;

import io.rmqgw.routing.RouteDialect;

/**
 * A last change to a topic's route before a client gets it (virtual queues answer some topics' routes with
 * the gateway's own broker). Called on a client connection's event loop; must be thread-safe.
 */
@FunctionalInterface
public interface RouteShaper {

    /** Every route as the address rewrite left it. */
    RouteShaper NONE = (topic, dialect, body, real) -> body;

    /**
     * @param topic   the topic asked for
     * @param dialect the JSON the client reads
     * @param body    the route as clients get it (broker addresses are the gateway's)
     * @param real    the route as the name server wrote it
     * @return the route to answer (may be {@code body} itself)
     * @throws io.rmqgw.routing.MalformedRouteBodyException when the body cannot be read
     */
    byte[] shape(String topic, RouteDialect dialect, byte[] body, byte[] real);
}
