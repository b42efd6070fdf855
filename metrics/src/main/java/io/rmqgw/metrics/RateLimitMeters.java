package io.rmqgw.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;

/** Requests the rate limits refused ({@code rmqgw.rate.limited{limit}}), by the limit that refused them. */
public final class RateLimitMeters {

    /** The {@code limit} values of {@code rmqgw.rate.limited}: which limit refused a send. */
    public static final List<String> LIMITS = List.of("topic", "client", "topic_pull", "client_request");

    private final LabelledCounters limited;

    RateLimitMeters(MeterRegistry registry) {
        limited = new LabelledCounters(registry, "rmqgw.rate.limited",
            "Requests answered SYSTEM_BUSY by the gateway's rate limits, by the limit that refused them: sends by"
                + " topic or client, pulls by topic (topic_pull), any request by client (client_request)",
            Tags.empty(), "limit", LIMITS);
    }

    /** A request refused by a rate limit; {@code limit} is one of {@link #LIMITS} (another gets its own series). */
    public void limited(String limit) {
        limited.counter(limit).increment();
    }
}
