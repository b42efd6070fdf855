package io.rmqgw.gateway.config;

/**
 * The credentials the gateway signs its own broker requests with (fan-out parts, coalesced batches,
 * virtual-queue fetches, route queries), as RocketMQ's {@code AclClientRPCHook} signs a client's.
 *
 * @param accessKey the broker user's access key (ACL 2.0: the user name)
 * @param secretKey its secret key (ACL 2.0: the password); never logged nor written back out
 */
public record UpstreamAclConfig(String accessKey, @Secret String secretKey) {

    public UpstreamAclConfig {
        accessKey = required("upstream.acl.access-key", accessKey);
        secretKey = required("upstream.acl.secret-key", secretKey);
    }

    private static String required(String path, String value) {
        if (value == null || value.isBlank()) {
            throw new ConfigException(path, "is required when upstream.acl is set (both access-key and secret-key)");
        }
        if (!value.equals(value.strip())) {
            throw new ConfigException(path, "must not start or end with spaces");
        }
        return value;
    }

    /** Names the access key only: the secret never reaches a log line. */
    @Override
    public String toString() {
        return "UpstreamAclConfig[accessKey=" + accessKey + ", secretKey=(hidden)]";
    }
}
