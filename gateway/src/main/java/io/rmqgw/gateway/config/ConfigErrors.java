package io.rmqgw.gateway.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Turns every Jackson or YAML error met while reading the configuration into a {@link ConfigException} that
 * names the key's full path (for example {@code upstream.namesrv[1]}) and the reason, in words meant for users.
 */
final class ConfigErrors {

    private ConfigErrors() {
    }

    /** The file is not YAML, or not one mapping. */
    static ConfigException parseError(IOException e) {
        MarkedYAMLException yaml = find(e, MarkedYAMLException.class);
        if (yaml != null && yaml.getProblemMark() != null) {
            return new ConfigException("", "YAML syntax error at line " + (yaml.getProblemMark().getLine() + 1)
                + ", column " + (yaml.getProblemMark().getColumn() + 1) + ": " + yaml.getProblem());
        }
        if (e instanceof JacksonException j) {
            String message = String.valueOf(j.getOriginalMessage());
            String path = "";
            if (j.getProcessor() instanceof JsonParser parser) {
                path = pathOf(parser.getParsingContext());
            }
            if (message.startsWith("Duplicate field")) {
                return new ConfigException(path, "is written twice");
            }
            if (message.startsWith("Trailing token")) {
                return new ConfigException("", "the file must hold one YAML document (remove the second '---')");
            }
            String where = j.getLocation() == null ? "" : " at line " + j.getLocation().getLineNr();
            return new ConfigException(path, "cannot read YAML" + where + ": " + message);
        }
        return new ConfigException("", "cannot read YAML: " + e.getMessage());
    }

    /** Binding failed: name the key and say what was wrong with it. */
    static ConfigException bindError(JacksonException e, JsonNode root) {
        String path = e instanceof JsonMappingException m ? pathOf(m.getPath()) : "";
        ConfigException c = find(e, ConfigException.class);
        if (c != null) {
            // records know their own path; values parsed by the loader learn it from Jackson, list entries their index
            if (c.isRelative()) {
                return new ConfigException(path.isEmpty() ? c.path() : path + "." + c.path(), c.reason());
            }
            return c.path().isEmpty() ? new ConfigException(path, c.reason()) : c;
        }
        if (e instanceof UnrecognizedPropertyException u) {
            return new ConfigException(path, unknownKey(String.valueOf(u.getPropertyName()), u.getKnownPropertyIds()));
        }
        JsonNode found = root.at(pointerOf(path));
        InputCoercionException range = find(e, InputCoercionException.class);
        if (range != null) {
            return new ConfigException(path, "expected " + describeType(range.getTargetType()) + " of at most "
                + describeMax(range.getTargetType()) + ", was " + describeNode(found));
        }
        if (e instanceof MismatchedInputException m
            && m.getTargetType() == String.class && found.isBoolean()) {
            return new ConfigException(path, "expected a text value, was the YAML boolean " + found.asText()
                + " (yes/no/on/off/y/n are booleans in YAML: quote the value)");
        }
        if (e instanceof InvalidFormatException f) {
            return new ConfigException(path, "expected " + describeType(f.getTargetType()) + ", was "
                + (found.isMissingNode() ? "'" + f.getValue() + "'" : describeNode(found)));
        }
        if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
            return new ConfigException(path, "expected " + describeType(m.getTargetType()) + ", was " + describeNode(found));
        }
        return new ConfigException(path, String.valueOf(e.getOriginalMessage()));
    }

    private static String unknownKey(String key, Collection<Object> known) {
        List<String> names = known == null ? List.of()
            : known.stream().map(String::valueOf).sorted().toList();
        String closest = names.stream()
            .min(Comparator.comparingInt(n -> editDistance(n, key)))
            .filter(n -> editDistance(n, key) <= Math.max(2, key.length() / 3))
            .orElse(null);
        StringBuilder sb = new StringBuilder("unknown key");
        if (closest != null) {
            sb.append(" (did you mean '").append(closest).append("'?)");
        }
        if (!names.isEmpty()) {
            sb.append("; valid keys here: ").append(String.join(", ", names));
        }
        return sb.toString();
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    static String pathOf(List<JsonMappingException.Reference> references) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference r : references) {
            if (r.getFieldName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    private static String pathOf(JsonStreamContext context) {
        List<String> parts = new ArrayList<>();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inObject() && c.getCurrentName() != null) {
                parts.add(0, c.getCurrentName());
            } else if (c.inArray()) {
                parts.add(0, "[" + Math.max(0, c.getCurrentIndex()) + "]");
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String part : parts) {
            if (!sb.isEmpty() && !part.startsWith("[")) {
                sb.append('.');
            }
            sb.append(part);
        }
        return sb.toString();
    }

    private static JsonPointer pointerOf(String path) {
        if (path.isEmpty()) {
            return JsonPointer.empty();
        }
        StringBuilder sb = new StringBuilder();
        for (String part : path.replace("[", ".").replace("]", "").split("\\.")) {
            sb.append('/').append(part.replace("~", "~0").replace("/", "~1"));
        }
        return JsonPointer.compile(sb.toString());
    }

    private static String describeType(Class<?> type) {
        if (type == null) {
            return "another value";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class
            || type == Short.class || type == short.class) {
            return "a whole number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a text value";
        }
        if (type == Duration.class) {
            return "a duration such as 30s";
        }
        if (type == HostPort.class) {
            return "host:port";
        }
        if (type == PortRange.class) {
            return "FROM-TO";
        }
        if (Collection.class.isAssignableFrom(type)) {
            return "a list";
        }
        return "a mapping of keys";
    }

    private static String describeMax(Class<?> type) {
        if (type == Long.class || type == long.class) {
            return String.valueOf(Long.MAX_VALUE);
        }
        if (type == Short.class || type == short.class) {
            return String.valueOf(Short.MAX_VALUE);
        }
        return String.valueOf(Integer.MAX_VALUE);
    }

    static String describeNode(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "nothing";
        }
        if (node.isObject()) {
            return "a mapping of keys";
        }
        if (node.isArray()) {
            return "a list";
        }
        if (node.isNull()) {
            return "empty";
        }
        if (node.isTextual()) {
            return "'" + node.asText() + "'";
        }
        return node.asText();
    }

    static String describeToken(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_OBJECT) {
            return "a mapping of keys";
        }
        if (t == JsonToken.START_ARRAY) {
            return "a list";
        }
        if (t == JsonToken.VALUE_STRING) {
            return "'" + p.getText() + "'";
        }
        return p.getText();
    }

    static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
