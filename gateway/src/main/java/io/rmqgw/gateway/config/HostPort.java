package io.rmqgw.gateway.config;

import io.rmqgw.tools.InvalidValueException;

/** A {@code host:port} pair as RocketMQ writes addresses, in a configuration (its errors name the key). */
public record HostPort(String host, int port) {

    public HostPort {
        String why = io.rmqgw.tools.HostPort.hostProblem(host);
        if (why != null) {
            throw new ConfigException("host", why);
        }
        if (port < 1 || port > 65535) {
            throw new ConfigException("port", "must be between 1 and 65535, was " + port);
        }
    }

    /**
     * Parses {@code host:port} in the one syntax of rmqgw ({@link io.rmqgw.tools.HostPort}); {@code path} names the
     * setting in the error.
     */
    public static HostPort parse(String path, String text) {
        try {
            io.rmqgw.tools.HostPort parsed = io.rmqgw.tools.HostPort.parse(path, text);
            return new HostPort(parsed.host(), parsed.port());
        } catch (InvalidValueException e) {
            throw new ConfigException(path, e.reason());
        }
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
