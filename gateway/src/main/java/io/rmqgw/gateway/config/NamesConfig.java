package io.rmqgw.gateway.config;

import java.util.Objects;

/**
 * Topic and group names checked at the edge, before anything reaches a broker.
 *
 * @param check           check names at all
 * @param topicMaxLength  longest topic accepted (brokers: 127)
 * @param groupMaxLength  longest group accepted (brokers: 255; 120 after RocketMQ 5.3.3)
 * @param legacyBrokers   the brokers are older than 5.3.2: answer a bad name with SYSTEM_ERROR (1) as they do,
 *                        instead of INVALID_PARAMETER (29)
 */
public record NamesConfig(Boolean check, Integer topicMaxLength, Integer groupMaxLength, Boolean legacyBrokers) {

    public static final NamesConfig DEFAULT = new NamesConfig(null, null, null, null);

    public NamesConfig {
        check = Objects.requireNonNullElse(check, Boolean.TRUE);
        topicMaxLength = Objects.requireNonNullElse(topicMaxLength, 127);
        groupMaxLength = Objects.requireNonNullElse(groupMaxLength, 255);
        legacyBrokers = Objects.requireNonNullElse(legacyBrokers, Boolean.FALSE);
        if (topicMaxLength < 1 || topicMaxLength > 32767) {
            throw new ConfigException("names.topic-max-length", "must be between 1 and 32767, was " + topicMaxLength);
        }
        if (groupMaxLength < 1 || groupMaxLength > 32767) {
            throw new ConfigException("names.group-max-length", "must be between 1 and 32767, was " + groupMaxLength);
        }
    }
}
