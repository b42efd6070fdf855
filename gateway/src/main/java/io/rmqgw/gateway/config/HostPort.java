package io.rmqgw.gateway.config;

/** A {@code host:port} pair as RocketMQ writes addresses. */
public record HostPort(String host, int port) {

    public HostPort {
        if (host == null || host.isBlank()) {
            throw new ConfigException("host", "must not be empty");
        }
        if (port < 1 || port > 65535) {
            throw new ConfigException("port", "must be between 1 and 65535, was " + port);
        }
    }

    /** Parses {@code host:port}; {@code path} names the setting in the error. */
    public static HostPort parse(String path, String text) {
        if (text == null) {
            throw new ConfigException(path, "must be host:port");
        }
        String s = text.trim();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new ConfigException(path, "must be host:port, was '" + text + "'");
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException(path, "port is not a number in '" + text + "'");
        }
        try {
            return new HostPort(s.substring(0, colon), port);
        } catch (ConfigException e) {
            throw new ConfigException(path, e.reason() + " in '" + text + "'");
        }
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
