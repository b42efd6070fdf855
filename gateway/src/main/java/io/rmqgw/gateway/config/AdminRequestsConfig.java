package io.rmqgw.gateway.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Which admin requests the gateway relays (docs/ADMIN-REQUESTS.md classifies every request code). Client traffic,
 * admin reads and topic/group creation and updates always pass; codes that delete, disable or reconfigure, read
 * server or ACL configuration, or are cluster-internal, and codes the gateway does not know, are answered
 * NO_PERMISSION (16) and never reach a name server or broker, unless allowed here. Applied at once on a reload.
 *
 * @param allowAll          every code passes, from every address (the gateway as an open admin port, as before)
 * @param allowFrom         source addresses (an IP, or a CIDR such as {@code 10.1.0.0/16}) from which every code
 *                          passes; literal addresses only, never looked up
 * @param allowUnknownCodes codes neither rocketmq-remoting 5.4.0 nor 4.9.7 defines pass from every address (a newer
 *                          RocketMQ's client codes, say); the classified refused codes stay refused
 */
public record AdminRequestsConfig(Boolean allowAll, List<String> allowFrom, Boolean allowUnknownCodes) {

    /** The default: refused codes refused from everywhere. */
    public static final AdminRequestsConfig DEFAULT = new AdminRequestsConfig(null, null, null);

    public AdminRequestsConfig {
        allowAll = Objects.requireNonNullElse(allowAll, Boolean.FALSE);
        allowUnknownCodes = Objects.requireNonNullElse(allowUnknownCodes, Boolean.FALSE);
        List<String> entries = new ArrayList<>();
        List<String> given = allowFrom == null ? List.of() : allowFrom;
        for (int i = 0; i < given.size(); i++) {
            String path = "admin-requests.allow-from[" + i + "]";
            if (given.get(i) == null || given.get(i).isBlank()) {
                throw new ConfigException(path, "must be an IP address or a CIDR such as 10.1.0.0/16");
            }
            String entry = given.get(i).trim();
            range(path, entry);
            entries.add(entry);
        }
        allowFrom = List.copyOf(entries);
    }

    /** The parsed {@link #allowFrom} entries. */
    public List<AddressRange> allowFromRanges() {
        return allowFrom.stream().map(e -> range("admin-requests.allow-from", e)).toList();
    }

    private static AddressRange range(String path, String entry) {
        try {
            return AddressRange.parse(entry);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(path, e.getMessage());
        }
    }
}
