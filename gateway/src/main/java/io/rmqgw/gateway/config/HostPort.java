package io.rmqgw.gateway.config;

/** A {@code host:port} pair as RocketMQ writes addresses. */
public record HostPort(String host, int port) {

    public HostPort {
        if (host == null || host.isBlank()) {
            throw new ConfigException("host", "must not be empty");
        }
        if (host.chars().anyMatch(c -> Character.isWhitespace(c) || c == ',' || c == ';' || c == '/')) {
            throw new ConfigException("host", "must be a host name or address, was '" + host + "'");
        }
        int colons = (int) host.chars().filter(c -> c == ':').count();
        if (colons == 1) {
            // IPv6 literals have at least two colons; one colon means a stray port
            throw new ConfigException("host", "must be a host name or address, was '" + host + "'");
        }
        if (port < 1 || port > 65535) {
            throw new ConfigException("port", "must be between 1 and 65535, was " + port);
        }
    }

    /** Parses {@code host:port}; {@code path} names the setting in the error. */
    public static HostPort parse(String path, String text) {
        if (text == null || text.isBlank()) {
            throw new ConfigException(path, "must be host:port, e.g. 127.0.0.1:9876");
        }
        String s = text.trim();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new ConfigException(path, "must be host:port, e.g. 127.0.0.1:9876, was '" + text + "'");
        }
        String portText = s.substring(colon + 1);
        int port;
        try {
            port = portText.chars().allMatch(Character::isDigit) ? Integer.parseInt(portText) : -1;
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0) {
            throw new ConfigException(path, "port is not a number in '" + text + "'");
        }
        try {
            return new HostPort(s.substring(0, colon), port);
        } catch (ConfigException e) {
            throw new ConfigException(path, e.path() + " " + e.reason() + " in '" + text + "'");
        }
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
