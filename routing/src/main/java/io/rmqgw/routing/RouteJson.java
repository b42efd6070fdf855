package io.rmqgw.routing;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import java.io.IOException;

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

    /**
     * A parser that reads {@code body} as UTF-8, as name servers write it. jackson-core detects UTF-16
     * and UTF-32 from a byte order mark or zero bytes among the first four; such a body would be read in
     * another encoding, without the byte offsets the rewriter splices by, so it is refused here.
     *
     * @throws MalformedRouteBodyException when the body opens like UTF-16 or UTF-32
     */
    static JsonParser utf8Parser(byte[] body, String what) throws IOException {
        int first = body.length > 0 ? body[0] & 0xFF : 0;
        boolean wide = first == 0xFE || first == 0xFF;
        for (int i = 0; i < Math.min(4, body.length); i++) {
            wide |= body[i] == 0;
        }
        if (wide) {
            throw new MalformedRouteBodyException(what + " body is not UTF-8 (it opens like UTF-16 or UTF-32)");
        }
        return FACTORY.createParser(body);
    }
}
