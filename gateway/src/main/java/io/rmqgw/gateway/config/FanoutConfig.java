package io.rmqgw.gateway.config;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.util.Objects;

/**
 * Multi-topic fan-out: a topic the gateway serves itself, whose messages each name their destination
 * topics in a property; the gateway writes them there. Every key applies at once on a reload.
 *
 * @param enabled             answer the fan-out topic's route and serve its sends
 * @param topic               the fan-out topic clients send to
 * @param destinationProperty the user property naming a message's destination topic(s), comma-separated;
 *                            removed before the message is stored
 * @param shardingKeyProperty the user property whose value picks the destination queue (kept in the message)
 * @param maxRetries          how often a failed part is tried again on another writable queue of its topic
 * @param queues              write queues the fan-out topic's route announces (clients spread sends over them)
 */
public record FanoutConfig(Boolean enabled, String topic, String destinationProperty, String shardingKeyProperty,
                           Integer maxRetries, Integer queues) {

    public static final String DEFAULT_TOPIC = "RMQGW_FANOUT";
    public static final String DEFAULT_DESTINATION_PROPERTY = "RMQGW_DESTINATIONS";
    public static final String DEFAULT_SHARDING_KEY_PROPERTY = "RMQGW_SHARDING_KEY";
    public static final int DEFAULT_MAX_RETRIES = 2;
    public static final int MAX_RETRIES = 16;
    public static final int DEFAULT_QUEUES = 4;

    public static final FanoutConfig DEFAULT = new FanoutConfig(null, null, null, null, null, null);

    public FanoutConfig {
        enabled = Objects.requireNonNullElse(enabled, Boolean.FALSE);
        topic = Objects.requireNonNullElse(topic, DEFAULT_TOPIC).trim();
        NameCheck check = NameValidator.DEFAULT.checkSendTopic(topic);
        if (!check.isValid()) {
            throw new ConfigException("fanout.topic", NameValidator.DEFAULT.topicRemark(check, topic));
        }
        if (topic.startsWith(NameValidator.RETRY_PREFIX) || topic.startsWith(NameValidator.DLQ_PREFIX)) {
            throw new ConfigException("fanout.topic", "must not be a retry or dead-letter topic, was '" + topic + "'");
        }
        destinationProperty = property("fanout.destination-property", destinationProperty, DEFAULT_DESTINATION_PROPERTY);
        shardingKeyProperty = property("fanout.sharding-key-property", shardingKeyProperty, DEFAULT_SHARDING_KEY_PROPERTY);
        if (destinationProperty.equals(shardingKeyProperty)) {
            throw new ConfigException("fanout.sharding-key-property", "must differ from fanout.destination-property ('"
                + destinationProperty + "')");
        }
        maxRetries = Objects.requireNonNullElse(maxRetries, DEFAULT_MAX_RETRIES);
        if (maxRetries < 0 || maxRetries > MAX_RETRIES) {
            throw new ConfigException("fanout.max-retries", "must be between 0 and " + MAX_RETRIES + ", was " + maxRetries);
        }
        queues = Objects.requireNonNullElse(queues, DEFAULT_QUEUES);
        if (queues < 1 || queues > 256) {
            throw new ConfigException("fanout.queues", "must be between 1 and 256, was " + queues);
        }
    }

    /** A property name: non-empty, without the separators of the properties string (0x01, 0x02) or blanks. */
    private static String property(String path, String value, String fallback) {
        String name = value == null || value.isBlank() ? fallback : value.trim();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || Character.isWhitespace(c)) {
                throw new ConfigException(path, "must be a property name without blanks or control characters, was '"
                    + value + "'");
            }
        }
        return name;
    }
}
