package io.rmqgw.gateway.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rmqgw.tools.Durations;
import io.rmqgw.tools.InvalidValueException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Reads the gateway's YAML configuration into {@link GatewayConfig}, and writes it back ({@link #toYaml}).
 *
 * <p>Keys are kebab-case ({@code advertise-host}, {@code upstream.request-timeout}); durations are written
 * {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} (decimals such as {@code 1.5s} and ISO-8601 {@code PT30S}
 * work too); addresses {@code host:port}; {@code broker-ports} as {@code FROM-TO}; {@code upstream.namesrv}
 * either a YAML list or RocketMQ's own {@code "a:9876;b:9876"} string. A missing or empty key takes its
 * default.
 *
 * <p>Validation lives in the records' constructors; this class only binds, through {@link ConfigMapper}, and
 * {@link ConfigErrors} turns every Jackson or YAML error into a {@link ConfigException} that names the key's
 * full path (for example {@code upstream.namesrv[1]}) and the reason, in words meant for users.
 */
public final class ConfigLoader {

    private ConfigLoader() {
    }

    /** Loads {@code file}. */
    public static GatewayConfig load(Path file) {
        return load(file, Map.of());
    }

    /**
     * Loads {@code file}, then sets {@code overrides} over it before binding, as if they had been written
     * in the file. Keys are dotted YAML paths ({@code "upstream.namesrv"}, {@code "embedded.enabled"});
     * values are what YAML would hold (strings, booleans, numbers, lists).
     */
    public static GatewayConfig load(Path file, Map<String, ?> overrides) {
        return bind(readTree(file), overrides);
    }

    /**
     * The {@code admin.listen} written in {@code file}, read leniently: the rest of the file may be invalid
     * (a reload is then refused, but {@code rmqgw reload} still has to find the admin port to say so).
     *
     * @return the address; {@link AdminConfig#DEFAULT_LISTEN} when the file does not set it
     * @throws ConfigException when the file cannot be read, is not YAML, or admin.listen itself is invalid
     */
    public static HostPort adminListen(Path file) {
        JsonNode tree = readTree(file);
        JsonNode listen = tree == null ? null : tree.at("/admin/listen");
        if (listen == null || listen.isMissingNode() || listen.isNull()
            || (listen.isTextual() && listen.asText().isBlank())) {
            return AdminConfig.DEFAULT_LISTEN;
        }
        if (!listen.isTextual()) {
            throw new ConfigException("admin.listen", "expected host:port, was " + ConfigErrors.describeNode(listen));
        }
        return HostPort.parse("admin.listen", listen.asText());
    }

    /**
     * The admin bearer token {@code file} configures ({@code admin.token}, or the first line of
     * {@code admin.token-file}), read leniently like {@link #adminListen}; null when it sets none.
     *
     * @throws ConfigException when the file cannot be read or is not YAML, or the token file cannot be read
     */
    public static String adminToken(Path file) {
        JsonNode tree = readTree(file);
        JsonNode token = tree == null ? null : tree.at("/admin/token");
        if (token != null && token.isTextual() && !token.asText().isBlank()) {
            return token.asText().strip();
        }
        JsonNode tokenFile = tree == null ? null : tree.at("/admin/token-file");
        if (tokenFile != null && tokenFile.isTextual() && !tokenFile.asText().isBlank()) {
            return new AdminConfig(null, null, null, null, null, tokenFile.asText(), null).bearerToken();
        }
        return null;
    }

    /** Parses YAML text. */
    public static GatewayConfig parse(String yaml) {
        return parse(yaml, Map.of());
    }

    /** Parses YAML text, with {@code overrides} as in {@link #load(Path, Map)}. */
    public static GatewayConfig parse(String yaml, Map<String, ?> overrides) {
        JsonNode tree;
        try {
            tree = ConfigMapper.MAPPER.readTree(yaml);
        } catch (IOException e) {
            throw ConfigErrors.parseError(e);
        }
        return bind(tree, overrides);
    }

    /** The configuration with every default, plus {@code overrides}. */
    public static GatewayConfig defaults(Map<String, ?> overrides) {
        return parse("", overrides);
    }

    /**
     * The configuration as YAML with every default filled in, written through the records it was read into:
     * {@link #parse} reads it back to an equal config, less the secrets (the record components marked
     * {@link Secret}: {@code admin.token}, {@code upstream.acl}, {@code tls.key-password},
     * {@code upstream.tls.key-password}), which are never written. Unset keys (no address server, no
     * certificate) are left out.
     */
    public static String toYaml(GatewayConfig config) {
        try {
            return ConfigMapper.MAPPER.writeValueAsString(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode readTree(Path file) {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException("", "no such file: " + file);
        } catch (AccessDeniedException e) {
            throw new ConfigException("", "cannot read " + file + ": permission denied");
        } catch (IOException e) {
            throw new ConfigException("", "cannot read " + file + ": " + e.getMessage());
        }
        try {
            return ConfigMapper.MAPPER.readTree(content);
        } catch (IOException e) {
            throw ConfigErrors.parseError(e);
        }
    }

    private static GatewayConfig bind(JsonNode parsed, Map<String, ?> overrides) {
        ObjectNode root;
        if (parsed == null || parsed.isMissingNode() || parsed.isNull()) {
            root = JsonNodeFactory.instance.objectNode();
        } else if (parsed instanceof ObjectNode object) {
            root = object;
        } else {
            throw new ConfigException("", "the file must be a mapping of keys (such as 'listen: 127.0.0.1:9876'), was "
                + ConfigErrors.describeNode(parsed));
        }
        overrides.forEach((key, value) -> override(root, key, value));
        try {
            return ConfigMapper.MAPPER.treeToValue(root, GatewayConfig.class);
        } catch (JacksonException e) {
            throw ConfigErrors.bindError(e, root);
        } catch (IllegalArgumentException e) {
            ConfigException c = ConfigErrors.find(e, ConfigException.class);
            if (c != null) {
                throw c;
            }
            throw new ConfigException("", String.valueOf(e.getMessage()));
        }
    }

    private static void override(ObjectNode root, String dottedKey, Object value) {
        String[] parts = dottedKey.split("\\.");
        ObjectNode node = root;
        for (int i = 0; i < parts.length - 1; i++) {
            JsonNode child = node.get(parts[i]);
            if (child == null || child.isNull()) {
                node = node.putObject(parts[i]);
            } else if (child instanceof ObjectNode object) {
                node = object;
            } else {
                return; // the file is wrong there; binding reports it
            }
        }
        node.set(parts[parts.length - 1], ConfigMapper.MAPPER.valueToTree(value));
    }

    // ---------------------------------------------------------------- values

    /**
     * Parses a duration in the one syntax of rmqgw ({@link Durations}): a number and a unit ({@code ms}, {@code s},
     * {@code m}, {@code h}, {@code d}), e.g. {@code 500ms}, {@code 30s}, {@code 1.5s}, {@code 2m}; ISO-8601
     * ({@code PT30S}) is accepted too; a bare number is refused.
     */
    public static Duration parseDuration(String path, String text) {
        try {
            return Durations.parse(path, text);
        } catch (InvalidValueException e) {
            throw new ConfigException(path, e.reason());
        }
    }

    /** Writes a duration the way the configuration does: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}. */
    public static String formatDuration(Duration d) {
        long ms;
        try {
            ms = d.toMillis();
        } catch (ArithmeticException e) {
            return d.toString();
        }
        if (d.isNegative() || d.getNano() % 1_000_000 != 0) {
            return d.toString();
        }
        if (ms >= 3_600_000L && ms % 3_600_000L == 0) {
            return ms / 3_600_000L + "h";
        }
        if (ms >= 120_000L && ms % 60_000L == 0) {
            return ms / 60_000L + "m";
        }
        if (ms % 1_000L == 0) {
            return ms / 1_000L + "s";
        }
        return ms + "ms";
    }

    /**
     * Parses a name-server list in RocketMQ's form, {@code "a:9876;b:9876"} (blank entries are skipped).
     */
    public static List<HostPort> parseAddressList(String path, String text) {
        List<HostPort> result = new ArrayList<>();
        if (text == null) {
            return result;
        }
        for (String part : text.split(";")) {
            if (!part.isBlank()) {
                result.add(HostPort.parse(path, part));
            }
        }
        return result;
    }

    /** {@code a:9876;b:9876}, as RocketMQ writes a name-server list. */
    public static String formatAddressList(Collection<HostPort> addresses) {
        return addresses.stream().map(HostPort::toString).collect(Collectors.joining(";"));
    }

}
