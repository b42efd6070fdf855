package io.rmqgw.tools;

/**
 * The one {@code host:port} syntax of rmqgw, as RocketMQ writes addresses: a host name, an IPv4 address, or an
 * IPv6 address in brackets ({@code [::1]:9876}) or bare (RocketMQ splits at the last colon, so {@code ::1:9876}
 * works too), then a port from 1 to 65535. No lookup. {@link #host()} is the host as written (brackets kept);
 * {@link #toString()} gives the text back.
 */
public record HostPort(String host, int port) {

    private static final String EXPECTED = "must be host:port, e.g. 127.0.0.1:9876";

    /**
     * Parses {@code text}; throws an {@link InvalidValueException} naming {@code what} (the setting or option; may
     * be empty) when it is not {@code host:port}.
     */
    public static HostPort parse(String what, String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidValueException(what, EXPECTED);
        }
        String s = text.trim();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new InvalidValueException(what, EXPECTED + ", was '" + text + "'");
        }
        String portText = s.substring(colon + 1);
        if (!portText.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new InvalidValueException(what, "port is not a number in '" + text + "'");
        }
        int port = portText.length() > 5 ? Integer.MAX_VALUE : Integer.parseInt(portText);
        if (port < 1 || port > 65535) {
            throw new InvalidValueException(what, "port must be between 1 and 65535, was " + portText + " in '"
                + text + "'");
        }
        String host = s.substring(0, colon);
        String why = hostProblem(host);
        if (why != null) {
            throw new InvalidValueException(what, "host " + why + " in '" + text + "'");
        }
        return new HostPort(host, port);
    }

    /** The host without the brackets of an IPv6 address ({@code ::1} for {@code [::1]}). */
    public String bareHost() {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /** Null when {@code host} is a host as {@link #parse} takes it; else why not. */
    public static String hostProblem(String host) {
        if (host == null || host.isBlank()) {
            return "must not be empty";
        }
        if (host.chars().anyMatch(c -> Character.isWhitespace(c) || c == ',' || c == ';' || c == '/')) {
            return "must be a host name or address, was '" + host + "'";
        }
        boolean bracketed = host.startsWith("[") && host.endsWith("]");
        String inner = bracketed ? host.substring(1, host.length() - 1) : host;
        if (inner.indexOf('[') >= 0 || inner.indexOf(']') >= 0) {
            return "must be a host name or address, was '" + host + "'";
        }
        long colons = inner.chars().filter(c -> c == ':').count();
        // IPv6 literals have at least two colons; one colon means a stray port
        if (colons == 1 || (bracketed && colons == 0)) {
            return "must be a host name or address, was '" + host + "'";
        }
        return null;
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
