package io.rmqgw.gateway.config;

import java.util.Objects;

/**
 * The admin HTTP port: Prometheus metrics at {@code /metrics}, {@code /health/live} and
 * {@code /health/ready}.
 *
 * @param enabled         whether the admin port is opened
 * @param listen          where it listens; keep it on loopback or a management network (no authentication)
 * @param topicLabels     whether request metrics also get a {@code topic} label (off: topics are unbounded)
 * @param topicLabelLimit how many distinct topics get their own label when {@code topicLabels} is on; later
 *                        topics are counted together under {@code topic="(other)"}
 */
public record AdminConfig(Boolean enabled, HostPort listen, Boolean topicLabels, Integer topicLabelLimit) {

    public static final HostPort DEFAULT_LISTEN = new HostPort("127.0.0.1", 9877);
    public static final int DEFAULT_TOPIC_LABEL_LIMIT = 100;
    public static final int MAX_TOPIC_LABEL_LIMIT = 10_000;

    /** The defaults: enabled on 127.0.0.1:9877, no per-topic labels. */
    public static final AdminConfig DEFAULT = new AdminConfig(null, null, null, null);
    /** No admin port (what hand-built configurations get, see {@link GatewayConfig}). */
    public static final AdminConfig DISABLED = new AdminConfig(false, null, null, null);

    public AdminConfig {
        enabled = Objects.requireNonNullElse(enabled, Boolean.TRUE);
        listen = Objects.requireNonNullElse(listen, DEFAULT_LISTEN);
        topicLabels = Objects.requireNonNullElse(topicLabels, Boolean.FALSE);
        topicLabelLimit = Objects.requireNonNullElse(topicLabelLimit, DEFAULT_TOPIC_LABEL_LIMIT);
        if (topicLabelLimit < 1 || topicLabelLimit > MAX_TOPIC_LABEL_LIMIT) {
            throw new ConfigException("admin.topic-label-limit", "must be between 1 and " + MAX_TOPIC_LABEL_LIMIT
                + " (each topic adds series per request code), was " + topicLabelLimit);
        }
    }
}
