package io.rmqgw.routing;

import io.rmqgw.codec.frame.RemotingHeader;
import java.util.Map;

/**
 * Which JSON a name server writes for a GET_ROUTEINFO_BY_TOPIC request, and so which body a client
 * can parse. Namesrv (ClientRequestProcessor) answers STANDARD JSON, fastjson's BrowserCompatible
 * form with quoted integer keys, when the request's version is at least V4_9_4 (ordinal 401) or its
 * {@code acceptStandardJsonOnly} header field parses as true; otherwise fastjson's default output
 * with unquoted integer map keys ({@code {0:"ip:port"}}).
 */
public enum RouteDialect {
    STANDARD,
    FASTJSON;

    /** {@code MQVersion.Version.V4_9_4.ordinal()}. */
    public static final int STANDARD_JSON_MIN_VERSION = 401;
    /** The GetRouteInfoRequestHeader field. */
    public static final String ACCEPT_STANDARD_JSON_ONLY = "acceptStandardJsonOnly";

    /** @param extFields the request's header fields; may be null */
    public static RouteDialect forRequest(int version, Map<String, String> extFields) {
        if (version >= STANDARD_JSON_MIN_VERSION) {
            return STANDARD;
        }
        // Namesrv decodes Boolean header fields with Boolean.parseBoolean: case-insensitive "true", nothing else.
        String accept = extFields == null ? null : extFields.get(ACCEPT_STANDARD_JSON_ONLY);
        return Boolean.parseBoolean(accept) ? STANDARD : FASTJSON;
    }

    public static RouteDialect forRequest(RemotingHeader request) {
        return forRequest(request.version(), request.extFields());
    }
}
