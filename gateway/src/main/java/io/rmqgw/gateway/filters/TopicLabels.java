package io.rmqgw.gateway.filters;

import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.gateway.core.RequestFilter;
import java.util.function.Function;

/**
 * Requests counted by topic ({@code admin.topic-labels}): the typed header {@code H} is decoded for its topic only
 * while the labels are on (a reload turns them on or off), and the decode serves the rest of the chain.
 */
public final class TopicLabels {

    private TopicLabels() {
    }

    public static <H extends CommandHeader> RequestFilter of(Class<H> type, Function<H, String> topic) {
        return (exchange, request) -> {
            if (exchange.metrics().topicLabelsEnabled()) {
                H header = exchange.header(request, type);
                if (header != null) {
                    exchange.metrics().topicRequest(topic.apply(header), exchange.code());
                }
            }
            return request;
        };
    }
}
