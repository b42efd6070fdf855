package io.rmqgw.gateway.admin;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;

/**
 * Who may use the admin port. A browser on this machine can reach a loopback port: a page may post to it
 * (the request is sent even when the page cannot read the answer) or, by DNS rebinding, read it under a
 * name of its own. Such requests are told apart by their headers: a {@code Host} that is not the admin
 * address, an {@code Origin} other than the admin's own, a {@code Sec-Fetch-Site} other than same-origin or
 * none. Tools (curl, Prometheus, {@code rmqgw reload}) send the admin address as Host and no Origin.
 *
 * <p>Accepted Host values: the bound host and port; for a loopback bind any loopback name
 * ({@code 127.0.0.1}, {@code localhost}, {@code [::1]}) with the port; for a wildcard bind ({@code 0.0.0.0},
 * {@code ::}) any IP literal or {@code localhost} with the port (a DNS name could be rebound). A request
 * without a Host header (HTTP/1.0) is accepted: browsers always send one.
 *
 * @param host                 the configured {@code admin.listen} host
 * @param port                 the bound port
 * @param token                the bearer token {@code /reload} needs; null: none
 * @param tokenProtectsMetrics whether {@code /metrics} needs it too
 */
record AdminAccess(String host, int port, String token, boolean tokenProtectsMetrics) {

    /** Why a request looks like a browser's cross-site request (answered 403), or null when it does not. */
    String browserRefusal(HttpHeaders headers) {
        String hostHeader = headers.get(HttpHeaderNames.HOST);
        if (hostHeader != null && !acceptedAuthority(hostHeader)) {
            return "Host " + hostHeader + " is not the admin address " + displayAddress();
        }
        String origin = headers.get(HttpHeaderNames.ORIGIN);
        if (origin != null && !(origin.regionMatches(true, 0, "http://", 0, 7) && acceptedAuthority(origin.substring(7)))) {
            return "cross-origin request (Origin " + origin + ") to the admin port";
        }
        String site = headers.get("Sec-Fetch-Site");
        if (site != null && !site.equalsIgnoreCase("same-origin") && !site.equalsIgnoreCase("none")) {
            return "cross-site request (Sec-Fetch-Site " + site + ") to the admin port";
        }
        return null;
    }

    /** Whether {@code authorization} carries the token (always, when none is configured). */
    boolean authorized(String authorization) {
        if (token == null) {
            return true;
        }
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        // constant time: the comparison tells nothing about how much of a guess was right
        return MessageDigest.isEqual(authorization.substring(7).strip().getBytes(StandardCharsets.UTF_8),
            token.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Why {@code POST /reload} is refused for its body (415), or null. A browser sends a cross-site form or
     * {@code text/plain} post without asking first; anything else (JSON) needs a CORS preflight the admin
     * port never grants. So: no body at all, or a JSON content type.
     */
    static String reloadBodyRefusal(String contentType, int bodyLength) {
        if (contentType == null) {
            return bodyLength == 0 ? null : "a reload request has no body (or a JSON one, Content-Type application/json)";
        }
        String type = contentType.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        return type.equals("application/json") ? null
            : "Content-Type " + contentType + " refused: POST /reload takes no body, or application/json";
    }

    private String displayAddress() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** Whether {@code authority} ({@code host:port}) names the admin address. */
    private boolean acceptedAuthority(String authority) {
        String name;
        String portText;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0 || close + 1 >= authority.length() || authority.charAt(close + 1) != ':') {
                return false;
            }
            name = authority.substring(1, close);
            portText = authority.substring(close + 2);
        } else {
            int colon = authority.lastIndexOf(':');
            if (colon < 0 || authority.indexOf(':') != colon) {
                return false; // no port (browsers omit only :80) or an unbracketed IPv6 address
            }
            name = authority.substring(0, colon);
            portText = authority.substring(colon + 1);
        }
        if (!portText.equals(Integer.toString(port))) {
            return false;
        }
        if (name.equalsIgnoreCase(host)) {
            return true;
        }
        boolean wildcard = host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
        if (wildcard) {
            return name.equalsIgnoreCase("localhost") || isIpLiteral(name);
        }
        return isLoopbackName(host) && isLoopbackName(name);
    }

    private static boolean isLoopbackName(String name) {
        if (name.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (!isIpLiteral(name)) {
            return false;
        }
        try {
            return InetAddress.getByName(name).isLoopbackAddress(); // a literal: no lookup
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** An IPv4 dotted quad or an IPv6 literal (no name, so no DNS lookup and nothing to rebind). */
    private static boolean isIpLiteral(String name) {
        if (name.indexOf(':') >= 0) {
            return name.chars().allMatch(c -> c == ':' || c == '.' || Character.digit(c, 16) >= 0);
        }
        String[] parts = name.split("\\.", -1);
        if (parts.length != 4) {
            return false;
        }
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit) || Integer.parseInt(p) > 255) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "AdminAccess[" + displayAddress() + ", token " + (token == null ? "none" : "set")
            + (tokenProtectsMetrics ? ", metrics protected" : "") + "]";
    }
}
