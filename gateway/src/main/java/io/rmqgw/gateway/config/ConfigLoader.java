package io.rmqgw.gateway.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.Deserializers;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.jsontype.TypeDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.CollectionType;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Reads the gateway's YAML configuration into {@link GatewayConfig}.
 *
 * <p>Keys are kebab-case ({@code advertise-host}, {@code upstream.request-timeout}); durations are written
 * {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} (decimals such as {@code 1.5s} and ISO-8601 {@code PT30S}
 * work too); addresses {@code host:port}; {@code broker-ports} as {@code FROM-TO}; {@code upstream.namesrv}
 * either a YAML list or RocketMQ's own {@code "a:9876;b:9876"} string. A missing or empty key takes its
 * default.
 *
 * <p>Validation lives in the records' constructors; this class only binds, and turns every Jackson or
 * YAML error into a {@link ConfigException} that names the key's full path (for example
 * {@code upstream.namesrv[1]}) and the reason, in words meant for users.
 */
public final class ConfigLoader {

    private static final ObjectMapper MAPPER = newMapper();

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
        JsonNode tree;
        try {
            tree = MAPPER.readTree(content);
        } catch (IOException e) {
            throw parseError(e);
        }
        return bind(tree, overrides);
    }

    /**
     * The {@code admin.listen} written in {@code file}, read leniently: the rest of the file may be invalid
     * (a reload is then refused, but {@code rmqgw reload} still has to find the admin port to say so).
     *
     * @return the address; {@link AdminConfig#DEFAULT_LISTEN} when the file does not set it
     * @throws ConfigException when the file cannot be read, is not YAML, or admin.listen itself is invalid
     */
    public static HostPort adminListen(Path file) {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException("", "no such file: " + file);
        } catch (IOException e) {
            throw new ConfigException("", "cannot read " + file + ": " + e.getMessage());
        }
        JsonNode tree;
        try {
            tree = MAPPER.readTree(content);
        } catch (IOException e) {
            throw parseError(e);
        }
        JsonNode listen = tree == null ? null : tree.at("/admin/listen");
        if (listen == null || listen.isMissingNode() || listen.isNull()
            || (listen.isTextual() && listen.asText().isBlank())) {
            return AdminConfig.DEFAULT_LISTEN;
        }
        if (!listen.isTextual()) {
            throw new ConfigException("admin.listen", "expected host:port, was " + describeNode(listen));
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
        JsonNode tree;
        try {
            tree = MAPPER.readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new ConfigException("", "cannot read " + file + ": " + e.getMessage());
        }
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
            tree = MAPPER.readTree(yaml);
        } catch (IOException e) {
            throw parseError(e);
        }
        return bind(tree, overrides);
    }

    /** The configuration with every default, plus {@code overrides}. */
    public static GatewayConfig defaults(Map<String, ?> overrides) {
        return parse("", overrides);
    }

    private static GatewayConfig bind(JsonNode parsed, Map<String, ?> overrides) {
        ObjectNode root;
        if (parsed == null || parsed.isMissingNode() || parsed.isNull()) {
            root = JsonNodeFactory.instance.objectNode();
        } else if (parsed instanceof ObjectNode object) {
            root = object;
        } else {
            throw new ConfigException("", "the file must be a mapping of keys (such as 'listen: 127.0.0.1:9876'), was "
                + describeNode(parsed));
        }
        overrides.forEach((key, value) -> override(root, key, value));
        try {
            return MAPPER.treeToValue(root, GatewayConfig.class);
        } catch (JacksonException e) {
            throw bindError(e, root);
        } catch (IllegalArgumentException e) {
            ConfigException c = find(e, ConfigException.class);
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
        node.set(parts[parts.length - 1], MAPPER.valueToTree(value));
    }

    // ---------------------------------------------------------------- values

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)");

    /**
     * Parses a duration: a number and a unit ({@code ms}, {@code s}, {@code m}, {@code h}, {@code d}), e.g.
     * {@code 500ms}, {@code 30s}, {@code 1.5s}, {@code 2m}; ISO-8601 ({@code PT30S}) is accepted too.
     */
    public static Duration parseDuration(String path, String text) {
        String s = text == null ? "" : text.trim();
        if (s.isEmpty()) {
            throw new ConfigException(path, "expected a duration such as 30s, 500ms or 2m");
        }
        if (s.startsWith("P") || s.startsWith("p")) {
            try {
                Duration d = Duration.parse(s);
                if (d.isNegative()) {
                    throw new ConfigException(path, "must not be negative, was '" + text + "'");
                }
                return d;
            } catch (java.time.format.DateTimeParseException e) {
                throw new ConfigException(path, "expected a duration such as 30s, 500ms or 2m, was '" + text + "'");
            }
        }
        Matcher m = DURATION.matcher(s.toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            if (s.chars().allMatch(Character::isDigit)) {
                throw new ConfigException(path, "needs a unit: " + s + "s, " + s + "ms or " + s + "m, was '" + text + "'");
            }
            throw new ConfigException(path, "expected a duration such as 30s, 500ms or 2m, was '" + text + "'");
        }
        long unitMillis = switch (m.group(2)) {
            case "ms" -> 1L;
            case "s" -> 1_000L;
            case "m" -> 60_000L;
            case "h" -> 3_600_000L;
            default -> 86_400_000L;
        };
        BigDecimal millis = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitMillis));
        try {
            return Duration.ofMillis(millis.longValueExact());
        } catch (ArithmeticException e) {
            if (millis.stripTrailingZeros().scale() > 0) {
                throw new ConfigException(path, "must be a whole number of milliseconds, was '" + text + "'");
            }
            throw new ConfigException(path, "is too large, was '" + text + "'");
        }
    }

    /** A rate and its burst, or nothing when that kind is not limited. */
    private static void putRate(ObjectNode entry, String rateKey, Integer rate, String burstKey, Integer burst) {
        if (rate != null) {
            entry.put(rateKey, rate).put(burstKey, burst);
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

    /**
     * The configuration as YAML with every default filled in; {@link #parse} reads it back to an equal config,
     * less the secrets, which are never written: {@code admin.token} and {@code upstream.acl}.
     */
    public static String toYaml(GatewayConfig config) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("listen", config.listen().toString());
        root.put("advertise-host", config.advertiseHost());
        root.put("broker-ports", config.brokerPorts().toString());
        ObjectNode upstream = root.putObject("upstream");
        ArrayNode namesrv = upstream.putArray("namesrv");
        config.upstream().namesrv().forEach(a -> namesrv.add(a.toString()));
        upstream.put("connect-timeout", formatDuration(config.upstream().connectTimeout()));
        upstream.put("request-timeout", formatDuration(config.upstream().requestTimeout()));
        upstream.put("long-poll-timeout", formatDuration(config.upstream().longPollTimeout()));
        upstream.put("header-encoding", config.upstream().headerEncoding().label());
        if (config.upstream().namesrvAddressUrl() != null) {
            upstream.put("namesrv-address-url", config.upstream().namesrvAddressUrl());
        }
        upstream.put("namesrv-address-poll-interval", formatDuration(config.upstream().namesrvAddressPollInterval()));
        upstream.put("namesrv-address-timeout", formatDuration(config.upstream().namesrvAddressTimeout()));
        ObjectNode upstreamTls = upstream.putObject("tls");
        upstreamTls.put("enabled", config.upstream().tls().enabled());
        if (config.upstream().tls().trustCert() != null) {
            upstreamTls.put("trust-cert", config.upstream().tls().trustCert());
        }
        if (config.upstream().tls().certFile() != null) {
            upstreamTls.put("cert-file", config.upstream().tls().certFile());
            upstreamTls.put("key-file", config.upstream().tls().keyFile());
        }
        if (config.upstream().tls().keyPassword() != null) {
            upstreamTls.put("key-password", config.upstream().tls().keyPassword());
        }
        // upstream.acl is never written out (check-config and the start summary print this): it holds a secret
        ObjectNode downstream = root.putObject("downstream");
        downstream.put("response-encoding", config.downstream().responseEncoding().label());
        downstream.put("idle-timeout", formatDuration(config.downstream().idleTimeout()));
        downstream.put("frame-timeout", formatDuration(config.downstream().frameTimeout()));
        downstream.put("max-connections", config.downstream().maxConnections());
        downstream.put("max-connections-per-address", config.downstream().maxConnectionsPerAddress());
        downstream.put("max-pending-write-bytes", config.downstream().maxPendingWriteBytes());
        downstream.put("max-pending-writes", config.downstream().maxPendingWrites());
        downstream.put("unwritable-timeout", formatDuration(config.downstream().unwritableTimeout()));
        ObjectNode names = root.putObject("names");
        names.put("check", config.names().check());
        names.put("topic-max-length", config.names().topicMaxLength());
        names.put("group-max-length", config.names().groupMaxLength());
        names.put("legacy-brokers", config.names().legacyBrokers());
        root.putObject("routes").put("ttl", formatDuration(config.routes().ttl()));
        root.put("max-frame-length", config.maxFrameLength());
        root.put("drain-timeout", formatDuration(config.drainTimeout()));
        ObjectNode embedded = root.putObject("embedded");
        embedded.put("enabled", config.embedded().enabled());
        embedded.put("store-dir", config.embedded().storeDir());
        embedded.put("namesrv-port", config.embedded().namesrvPort());
        embedded.put("broker-port", config.embedded().brokerPort());
        ObjectNode admin = root.putObject("admin");
        admin.put("enabled", config.admin().enabled());
        admin.put("listen", config.admin().listen().toString());
        admin.put("topic-labels", config.admin().topicLabels());
        admin.put("topic-label-limit", config.admin().topicLabelLimit());
        // admin.token is never written out (check-config prints this); a token file is named
        if (config.admin().tokenFile() != null) {
            admin.put("token-file", config.admin().tokenFile());
        }
        admin.put("token-protects-metrics", config.admin().tokenProtectsMetrics());
        ObjectNode fanout = root.putObject("fanout");
        fanout.put("enabled", config.fanout().enabled());
        fanout.put("topic", config.fanout().topic());
        fanout.put("destination-property", config.fanout().destinationProperty());
        fanout.put("sharding-key-property", config.fanout().shardingKeyProperty());
        fanout.put("max-retries", config.fanout().maxRetries());
        fanout.put("queues", config.fanout().queues());
        ObjectNode levels = root.putObject("logging").putObject("levels");
        config.logging().levelNames().forEach(levels::put);
        ArrayNode virtualQueues = root.putArray("virtual-queues");
        for (VirtualQueueConfig v : config.virtualQueues()) {
            ObjectNode entry = virtualQueues.addObject();
            entry.put("group", v.group());
            entry.put("topic", v.topic());
            entry.put("per-real-queue", v.perRealQueue());
            entry.put("window-size", v.windowSize());
            entry.put("window-bytes", v.windowBytes());
            entry.put("max-leases-per-queue", v.maxLeasesPerQueue());
            entry.put("lease-timeout", formatDuration(v.leaseTimeout()));
            entry.put("lease-deadline", formatDuration(v.leaseDeadline()));
            entry.put("max-deliveries", v.maxDeliveries());
        }
        ObjectNode tls = root.putObject("tls");
        tls.put("enabled", config.tls().enabled());
        if (config.tls().certFile() != null) {
            tls.put("cert-file", config.tls().certFile());
        }
        if (config.tls().keyFile() != null) {
            tls.put("key-file", config.tls().keyFile());
        }
        if (config.tls().keyPassword() != null) {
            tls.put("key-password", config.tls().keyPassword());
        }
        tls.put("mode", config.tls().mode().label());
        tls.put("file-check-interval", formatDuration(config.tls().fileCheckInterval()));
        ObjectNode rateLimits = root.putObject("rate-limits");
        ArrayNode perTopic = rateLimits.putArray("per-topic");
        for (RateLimitConfig.TopicLimit l : config.rateLimits().perTopic()) {
            ObjectNode entry = perTopic.addObject().put("topic", l.topic());
            putRate(entry, "sends-per-second", l.sendsPerSecond(), "burst", l.burst());
            putRate(entry, "pulls-per-second", l.pullsPerSecond(), "pull-burst", l.pullBurst());
        }
        ArrayNode perClient = rateLimits.putArray("per-client");
        for (RateLimitConfig.ClientLimit l : config.rateLimits().perClient()) {
            ObjectNode entry = perClient.addObject().put("client-id", l.clientId());
            putRate(entry, "sends-per-second", l.sendsPerSecond(), "burst", l.burst());
            putRate(entry, "requests-per-second", l.requestsPerSecond(), "request-burst", l.requestBurst());
        }
        ArrayNode perAddress = rateLimits.putArray("per-address");
        for (RateLimitConfig.AddressLimit l : config.rateLimits().perAddress()) {
            ObjectNode entry = perAddress.addObject().put("address", l.address());
            putRate(entry, "sends-per-second", l.sendsPerSecond(), "burst", l.burst());
            putRate(entry, "requests-per-second", l.requestsPerSecond(), "request-burst", l.requestBurst());
        }
        rateLimits.put("refusal-delay", formatDuration(config.rateLimits().refusalDelay()));
        ObjectNode coalescing = root.putObject("coalescing");
        ArrayNode coalescedTopics = coalescing.putArray("topics");
        config.coalescing().topics().forEach(coalescedTopics::add);
        coalescing.put("max-messages", config.coalescing().maxMessages());
        coalescing.put("max-bytes", config.coalescing().maxBytes());
        coalescing.put("max-delay", formatDuration(config.coalescing().maxDelay()));
        coalescing.put("max-in-flight", config.coalescing().maxInFlight());
        ObjectNode adminRequests = root.putObject("admin-requests");
        adminRequests.put("allow-all", config.adminRequests().allowAll());
        config.adminRequests().allowFrom().forEach(adminRequests.putArray("allow-from")::add);
        adminRequests.put("allow-unknown-codes", config.adminRequests().allowUnknownCodes());
        try {
            return MAPPER.writeValueAsString(root);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- Jackson set-up

    private static ObjectMapper newMapper() {
        YAMLFactory yaml = YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .build();
        YAMLMapper mapper = YAMLMapper.builder(yaml)
            .propertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .build();
        // 'enabled: 1' is a mistake, not a boolean
        mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.EmptyString, CoercionAction.AsNull);
        // 'advertise-host: on' is YAML for true, not a host name
        mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        SimpleModule module = new SimpleModule("rmqgw-config") {
            @Override
            public void setupModule(SetupContext context) {
                super.setupModule(context);
                context.addDeserializers(new AddressListDeserializers());
            }
        };
        module.addDeserializer(Duration.class, new ValueDeserializer<>(Duration.class, "a duration such as 30s",
            text -> parseDuration("", text)));
        module.addDeserializer(HostPort.class, new ValueDeserializer<>(HostPort.class, "host:port, e.g. 127.0.0.1:9876",
            text -> HostPort.parse("", text)));
        module.addDeserializer(PortRange.class, new ValueDeserializer<>(PortRange.class, "FROM-TO, e.g. 20900-20999",
            text -> PortRange.parse("", text)));
        mapper.registerModule(module);
        return mapper;
    }

    /** A value written as one YAML scalar; a ConfigException with an empty path gets the key's path later. */
    private static final class ValueDeserializer<T> extends StdDeserializer<T> {

        private final String expected;
        private final java.util.function.Function<String, T> parser;

        ValueDeserializer(Class<T> type, String expected, java.util.function.Function<String, T> parser) {
            super(type);
            this.expected = expected;
            this.parser = parser;
        }

        @Override
        public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            JsonToken token = p.currentToken();
            if (token == JsonToken.VALUE_STRING) {
                String text = p.getText();
                return text.isBlank() ? null : parser.apply(text);
            }
            if (token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT) {
                // a bare number: let the parser explain what is missing (a unit, a host, a range)
                return parser.apply(p.getText());
            }
            throw new ConfigException("", "expected " + expected + ", was " + describeToken(p));
        }
    }

    /** {@code List<HostPort>}: a YAML list of host:port, or RocketMQ's "a:9876;b:9876" string. */
    private static final class AddressListDeserializers extends Deserializers.Base {
        @Override
        public JsonDeserializer<?> findCollectionDeserializer(CollectionType type, DeserializationConfig config,
                                                              BeanDescription beanDesc, TypeDeserializer elementTypeDeserializer,
                                                              JsonDeserializer<?> elementDeserializer) {
            return type.getContentType().hasRawClass(HostPort.class) ? new AddressListDeserializer() : null;
        }
    }

    private static final class AddressListDeserializer extends StdDeserializer<List<HostPort>> {

        AddressListDeserializer() {
            super(List.class);
        }

        @Override
        public List<HostPort> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            JsonToken token = p.currentToken();
            if (token == JsonToken.VALUE_STRING) {
                return parseAddressList("", p.getText());
            }
            if (token != JsonToken.START_ARRAY) {
                throw new ConfigException("", "expected a list of host:port, or \"host:port;host:port\", was "
                    + describeToken(p));
            }
            List<HostPort> result = new ArrayList<>();
            int index = 0;
            for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken(), index++) {
                try {
                    if (t != JsonToken.VALUE_STRING) {
                        throw new ConfigException("", "expected host:port, was " + describeToken(p));
                    }
                    result.add(HostPort.parse("", p.getText()));
                } catch (ConfigException e) {
                    throw JsonMappingException.wrapWithPath(e, result, index);
                }
            }
            return result;
        }
    }

    // ---------------------------------------------------------------- errors

    /** The file is not YAML, or not one mapping. */
    private static ConfigException parseError(IOException e) {
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
    private static ConfigException bindError(JacksonException e, JsonNode root) {
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

    private static String describeNode(JsonNode node) {
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

    private static String describeToken(JsonParser p) throws IOException {
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

    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
