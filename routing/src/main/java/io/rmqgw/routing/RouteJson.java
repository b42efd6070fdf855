package io.rmqgw.routing;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.json.JsonReadFeature;

/** The one JSON reader configuration for name-server bodies, shared by every reader of them. */
final class RouteJson {

    /**
     * Unquoted field names cover fastjson's integer map keys ({@code {0:"ip:port"}}), which name
     * servers write for clients that did not ask for standard JSON; Jackson takes [0-9]+ there.
     */
    static final JsonFactory FACTORY = JsonFactory.builder()
        .enable(JsonReadFeature.ALLOW_UNQUOTED_FIELD_NAMES)
        .build();

    private RouteJson() {
    }
}
