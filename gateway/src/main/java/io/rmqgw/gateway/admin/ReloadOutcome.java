package io.rmqgw.gateway.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * How a configuration reload ended, as {@code POST /reload} answers it:
 * {@code {"result":"applied"|"refused"|"unchanged","applied":[...],"needsRestart":[...],"pendingRestart":[...],
 * "error":"path: reason"}}
 * ({@code error} only when refused).
 *
 * @param result       what happened
 * @param applied      settings now in force, connections kept
 * @param needsRestart   settings bound at start whose new value this reload met first (reported once)
 * @param pendingRestart every setting bound at start whose configured value still differs from the running one
 * @param error        why the file was refused ({@code path: reason}), or null
 */
public record ReloadOutcome(Result result, List<String> applied, List<String> needsRestart, List<String> pendingRestart,
                            String error) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public enum Result {
        /** Settings were applied (some may also need a restart). */
        APPLIED,
        /** The new configuration is invalid; the running one stays in force. */
        REFUSED,
        /** Nothing was applied: the configuration is the one running, apart from settings that need a restart. */
        UNCHANGED;

        /** {@code applied}, {@code refused}, {@code unchanged}: the JSON value and the metric label. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Result of(String label) {
            return valueOf(label.toUpperCase(Locale.ROOT));
        }
    }

    public ReloadOutcome {
        Objects.requireNonNull(result);
        applied = List.copyOf(applied);
        needsRestart = List.copyOf(needsRestart);
        pendingRestart = List.copyOf(pendingRestart);
    }

    public static ReloadOutcome refused(String error) {
        return new ReloadOutcome(Result.REFUSED, List.of(), List.of(), List.of(), error);
    }

    public String toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("result", result.label());
        ArrayNode a = root.putArray("applied");
        applied.forEach(a::add);
        ArrayNode n = root.putArray("needsRestart");
        needsRestart.forEach(n::add);
        ArrayNode p = root.putArray("pendingRestart");
        pendingRestart.forEach(p::add);
        if (error != null) {
            root.put("error", error);
        }
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Reads {@link #toJson()}'s form back.
     *
     * @throws IllegalArgumentException when {@code json} is not such an answer
     */
    public static ReloadOutcome fromJson(String json) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject() || !root.path("result").isTextual()) {
            throw new IllegalArgumentException("no \"result\" in " + json);
        }
        Result result;
        try {
            result = Result.of(root.get("result").asText());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown result '" + root.get("result").asText() + "'");
        }
        JsonNode error = root.get("error");
        return new ReloadOutcome(result, strings(root.get("applied")), strings(root.get("needsRestart")),
            strings(root.get("pendingRestart")), error == null || error.isNull() ? null : error.asText());
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        if (array != null && array.isArray()) {
            array.forEach(n -> out.add(n.asText()));
        }
        return out;
    }
}
