package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * What a virtual group subscribes to on its topic, as its clients' heartbeats say: the gateway fetches the
 * real queues with the same filter, so the brokers filter as they would for the clients themselves.
 *
 * @param expression the subscription expression ({@code *}, {@code TagA || TagB}, or SQL92)
 * @param type       {@code TAG} or {@code SQL92}
 * @param version    the subscription version the clients sent (brokers refresh a changed filter by it)
 */
public record Subscription(String expression, String type, long version) {

    /** Everything, until a client says otherwise. */
    public static final Subscription ALL = new Subscription("*", "TAG", 0);

    public Subscription {
        expression = expression == null || expression.isBlank() ? "*" : expression.trim();
        type = type == null || type.isBlank() ? "TAG" : type;
    }

    /** The subscription to {@code topic} in a client's ConsumerData, or null when it has none. */
    static Subscription fromConsumerData(JsonNode consumerData, String topic) {
        JsonNode subs = consumerData.path("subscriptionDataSet");
        for (JsonNode s : subs) {
            if (topic.equals(s.path("topic").asText(null))) {
                return new Subscription(s.path("subString").asText("*"), s.path("expressionType").asText("TAG"),
                    s.path("subVersion").asLong(0));
            }
        }
        return null;
    }

    /** Writes this as a SubscriptionData of {@code topic}. */
    void writeTo(ObjectNode out, String topic) {
        out.put("topic", topic);
        out.put("subString", expression);
        ArrayNode tags = out.putArray("tagsSet");
        ArrayNode codes = out.putArray("codeSet");
        for (String tag : tags()) {
            tags.add(tag);
            codes.add(tag.hashCode());
        }
        out.put("subVersion", version);
        out.put("expressionType", type);
        out.put("classFilterMode", false);
    }

    /** The tags of a TAG expression (empty for {@code *} and for SQL92). */
    List<String> tags() {
        List<String> out = new ArrayList<>();
        if (!"TAG".equals(type) || "*".equals(expression)) {
            return out;
        }
        for (String t : expression.split("\\|\\|")) {
            String tag = t.trim();
            if (!tag.isEmpty()) {
                out.add(tag);
            }
        }
        return out;
    }
}
