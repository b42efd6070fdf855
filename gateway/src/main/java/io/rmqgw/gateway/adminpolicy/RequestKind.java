package io.rmqgw.gateway.adminpolicy;

/**
 * What a request code does, as the admin-request policy sees it ({@link RequestKinds} classifies every code
 * of rocketmq-remoting 5.4.0 and 4.9.7). The first four pass by default; the others are refused with
 * NO_PERMISSION unless {@code admin-requests} opts in.
 */
public enum RequestKind {

    /** What producers and consumers (Java 4.9.x and 5.x, Go) send in normal operation. */
    CLIENT(false, "client traffic"),
    /** A request name servers and brokers send to clients; a client sending one gets the upstream's own answer. */
    SERVER_TO_CLIENT(false, "a server-to-client request"),
    /** mqadmin's and dashboards' reads: routes, clusters, topics, groups, offsets, statistics, connections. */
    ADMIN_READ(false, "an admin read"),
    /** Creating and updating topics and groups, and admin actions that lose nothing. */
    ADMIN_WRITE(false, "an admin create or update"),
    /** Reading broker, name-server or controller configuration, ACL accounts and policies (may hold secrets). */
    CONFIG_READ(true, "reads server or ACL configuration"),
    /** Deleting or disabling: topics, groups, permissions, offsets, files, configuration, ACLs, KV config. */
    DESTRUCTIVE(true, "deletes, disables or reconfigures"),
    /** What brokers, name servers and controllers tell each other (registration, HA, elections). */
    CLUSTER_INTERNAL(true, "is cluster-internal"),
    /** A code neither rocketmq-remoting 5.4.0 nor 4.9.7 defines. */
    UNKNOWN(true, "is a code the gateway does not know");

    private final boolean refusedByDefault;
    private final String description;

    RequestKind(boolean refusedByDefault, String description) {
        this.refusedByDefault = refusedByDefault;
        this.description = description;
    }

    /** Whether the gateway refuses it unless {@code admin-requests} opts in. */
    public boolean refusedByDefault() {
        return refusedByDefault;
    }

    /** How a refusal's remark and log line say what it does. */
    public String description() {
        return description;
    }

    /** The {@code kind} label of {@code rmqgw_admin_requests_refused_total}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
