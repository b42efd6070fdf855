package io.rmqgw.gateway.config;

import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A topic that lives on several clusters ({@code logical-topics:}): clients get the union of the clusters' routes,
 * and sends are steered by the clusters' health, the first cluster preferred.
 *
 * @param topic    the topic, created on every listed cluster by its operators
 * @param clusters the clusters holding it, in order of preference: {@code default} or names under {@code clusters:}
 * @param ordered  producers pick queues themselves (per-queue order): sends are never redirected, only the route
 *                 a client gets leaves out a cluster that is down
 */
public record LogicalTopicConfig(String topic, List<String> clusters, Boolean ordered) {

    /** The cluster of {@code upstream.namesrv}. */
    public static final String DEFAULT_CLUSTER = "default";

    public LogicalTopicConfig {
        topic = topic == null ? "" : topic.trim();
        NameCheck check = NameValidator.DEFAULT.checkSendTopic(topic);
        if (!check.isValid()) {
            throw ConfigException.inEntry("topic", NameValidator.DEFAULT.topicRemark(check, topic));
        }
        Set<String> distinct = new LinkedHashSet<>();
        for (String c : clusters == null ? List.<String>of() : clusters) {
            String name = c == null ? "" : c.trim();
            if (name.isEmpty()) {
                throw ConfigException.inEntry("clusters", "a cluster name must not be empty");
            }
            if (!distinct.add(name)) {
                throw ConfigException.inEntry("clusters", "cluster " + name + " is listed twice");
            }
        }
        if (distinct.size() < 2) {
            throw ConfigException.inEntry("clusters", "a logical topic needs at least two clusters, was " + distinct);
        }
        clusters = List.copyOf(distinct);
        ordered = ordered != null && ordered;
    }

    /** Whether sends may be redirected to another cluster. */
    public boolean redirectable() {
        return !ordered;
    }
}
