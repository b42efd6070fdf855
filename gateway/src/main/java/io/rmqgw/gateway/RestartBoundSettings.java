package io.rmqgw.gateway;

import io.rmqgw.gateway.config.AdminConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The settings a reload cannot apply, bound at start (listen address, broker ports, frame limit, routes, the admin
 * port, embedded cluster): which of them a new configuration changes, reported once, and the configuration in force
 * after a reload (the new values where applied, the running ones where a restart is needed).
 */
final class RestartBoundSettings {

    /** Settings bound at start to the value the last reload asked for, while it differs from the running one. */
    private final Map<String, Object> requested = new HashMap<>();

    /**
     * Adds to {@code pendingRestart} every start-bound setting whose configured value differs from the running one,
     * and to {@code needsRestart} those whose value is new since the previous reload.
     */
    void compare(GatewayConfig current, GatewayConfig next, List<String> needsRestart, List<String> pendingRestart) {
        changed(needsRestart, pendingRestart, "listen", current.listen(), next.listen());
        changed(needsRestart, pendingRestart, "advertise-host", current.advertiseHost(), next.advertiseHost());
        changed(needsRestart, pendingRestart, "broker-ports", current.brokerPorts(), next.brokerPorts());
        changed(needsRestart, pendingRestart, "max-frame-length", current.maxFrameLength(), next.maxFrameLength());
        changed(needsRestart, pendingRestart, "routes", current.routes(), next.routes());
        changed(needsRestart, pendingRestart, "admin.listen", current.admin().listen(), next.admin().listen());
        changed(needsRestart, pendingRestart, "admin.enabled", current.admin().enabled(), next.admin().enabled());
        changed(needsRestart, pendingRestart, "embedded", current.embedded(), next.embedded());
        changed(needsRestart, pendingRestart, "admin.token", adminAccess(current), adminAccess(next));
    }

    /** What is in force after a reload of {@code next} over {@code current}. */
    static GatewayConfig inForce(GatewayConfig current, GatewayConfig next) {
        return new GatewayConfig(current.listen(), current.advertiseHost(), current.brokerPorts(), next.upstream(),
            current.routes(), current.maxFrameLength(), next.drainTimeout(), current.embedded(),
            new AdminConfig(current.admin().enabled(), current.admin().listen(), next.admin().topicLabels(),
                next.admin().topicLabelLimit(), current.admin().token(), current.admin().tokenFile(),
                current.admin().tokenProtectsMetrics()), next.downstream(), next.names(), current.logging(),
            next.fanout(), next.virtualQueues(), next.tls(), next.rateLimits(), next.coalescing(), next.adminRequests(),
            next.clusters(), next.logicalTopics());
    }

    /** The admin port's access settings, compared by reload (the token itself is never logged). */
    private static List<Object> adminAccess(GatewayConfig c) {
        return Arrays.asList(c.admin().token(), c.admin().tokenFile(), c.admin().tokenProtectsMetrics());
    }

    /**
     * A setting bound at start: pending a restart while the configured value differs from the running one, and
     * newly so (reported once) when that value differs from the one the previous reload saw.
     */
    private void changed(List<String> needsRestart, List<String> pendingRestart, String path, Object current,
                         Object next) {
        if (Objects.equals(current, next)) {
            requested.remove(path);
            return;
        }
        pendingRestart.add(path);
        if (!requested.containsKey(path) || !Objects.equals(requested.get(path), next)) {
            needsRestart.add(path);
        }
        requested.put(path, next);
    }
}
