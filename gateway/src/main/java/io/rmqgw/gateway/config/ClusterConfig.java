package io.rmqgw.gateway.config;

import java.util.List;

/**
 * A further upstream cluster ({@code clusters.NAME}), which logical topics may span besides {@code default} (the
 * cluster of {@code upstream.namesrv}). Its name servers are asked for the routes of its logical topics; its brokers
 * get listeners as {@code default}'s do, and take the upstream timeouts, credentials and TLS of {@code upstream}.
 *
 * @param namesrv its name servers, tried in order ("a:9876;b:9876" or a list)
 */
public record ClusterConfig(List<HostPort> namesrv) {

    public ClusterConfig {
        namesrv = namesrv == null ? List.of() : List.copyOf(namesrv);
    }

    /** Refuses a cluster without a name server; {@code path} is its YAML key. */
    void check(String path) {
        if (namesrv.isEmpty()) {
            throw new ConfigException(path + ".namesrv", "at least one name server is required");
        }
    }
}
