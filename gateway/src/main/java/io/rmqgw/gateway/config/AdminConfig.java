package io.rmqgw.gateway.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The admin HTTP port: Prometheus metrics at {@code /metrics}, {@code /health/live} and
 * {@code /health/ready}.
 *
 * @param enabled              whether the admin port is opened
 * @param listen               where it listens; keep it on loopback or a management network
 * @param topicLabels          whether request metrics also get a {@code topic} label (off: topics are unbounded)
 * @param topicLabelLimit      how many distinct topics get their own label when {@code topicLabels} is on; later
 *                             topics are counted together under {@code topic="(other)"}
 * @param token                a bearer token {@code POST /reload} must carry ({@code Authorization: Bearer ...});
 *                             null: none. At least 16 characters, no white space
 * @param tokenFile            a file holding the token instead (first line, trimmed); not both
 * @param tokenProtectsMetrics whether {@code /metrics} needs the token too
 */
public record AdminConfig(Boolean enabled, HostPort listen, Boolean topicLabels, Integer topicLabelLimit,
                          @Secret String token, String tokenFile, Boolean tokenProtectsMetrics) {

    public static final HostPort DEFAULT_LISTEN = new HostPort("127.0.0.1", 9877);
    public static final int DEFAULT_TOPIC_LABEL_LIMIT = 100;
    public static final int MAX_TOPIC_LABEL_LIMIT = 10_000;
    public static final int MIN_TOKEN_LENGTH = 16;

    /** The defaults: enabled on 127.0.0.1:9877, no per-topic labels. */
    public static final AdminConfig DEFAULT = new AdminConfig(null, null, null, null);
    /** No admin port (what hand-built configurations get, see {@link GatewayConfig}). */
    public static final AdminConfig DISABLED = new AdminConfig(false, null, null, null);

    /** Without a token. */
    public AdminConfig(Boolean enabled, HostPort listen, Boolean topicLabels, Integer topicLabelLimit) {
        this(enabled, listen, topicLabels, topicLabelLimit, null, null, null);
    }

    public AdminConfig {
        enabled = Objects.requireNonNullElse(enabled, Boolean.TRUE);
        listen = Objects.requireNonNullElse(listen, DEFAULT_LISTEN);
        topicLabels = Objects.requireNonNullElse(topicLabels, Boolean.FALSE);
        topicLabelLimit = Objects.requireNonNullElse(topicLabelLimit, DEFAULT_TOPIC_LABEL_LIMIT);
        if (topicLabelLimit < 1 || topicLabelLimit > MAX_TOPIC_LABEL_LIMIT) {
            throw new ConfigException("admin.topic-label-limit", "must be between 1 and " + MAX_TOPIC_LABEL_LIMIT
                + " (each topic adds series per request code), was " + topicLabelLimit);
        }
        tokenProtectsMetrics = Objects.requireNonNullElse(tokenProtectsMetrics, Boolean.FALSE);
        if (token != null && tokenFile != null) {
            throw new ConfigException("admin.token-file", "set admin.token or admin.token-file, not both");
        }
        if (token != null) {
            checkToken("admin.token", token);
        }
        if (tokenFile != null) {
            checkToken("admin.token-file", readTokenFile(tokenFile));
        }
        if (tokenProtectsMetrics && token == null && tokenFile == null) {
            throw new ConfigException("admin.token-protects-metrics", "needs admin.token or admin.token-file");
        }
    }

    /** The bearer token in force (read from {@code token-file} when set), or null when none is configured. */
    public String bearerToken() {
        return tokenFile != null ? readTokenFile(tokenFile) : token;
    }

    private static String readTokenFile(String file) {
        try {
            String content = Files.readString(Path.of(file), StandardCharsets.UTF_8);
            int end = content.indexOf('\n');
            return (end < 0 ? content : content.substring(0, end)).strip();
        } catch (IOException | RuntimeException e) {
            throw new ConfigException("admin.token-file", "cannot read " + file + ": " + e.getMessage());
        }
    }

    private static void checkToken(String path, String token) {
        if (token.length() < MIN_TOKEN_LENGTH) {
            throw new ConfigException(path, "the token must have at least " + MIN_TOKEN_LENGTH + " characters, has "
                + token.length());
        }
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c <= ' ' || c >= 0x7f) {
                throw new ConfigException(path, "the token must be printable ASCII without white space");
            }
        }
    }

    /** The token is never shown (toString reaches logs and {@code check-config}). */
    @Override
    public String toString() {
        return "AdminConfig[enabled=" + enabled + ", listen=" + listen + ", topicLabels=" + topicLabels
            + ", topicLabelLimit=" + topicLabelLimit + ", token=" + (token == null ? "none" : "(set)")
            + ", tokenFile=" + tokenFile + ", tokenProtectsMetrics=" + tokenProtectsMetrics + "]";
    }
}
