package io.rmqgw.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;

/** Polls of the name-server address URL ({@code rmqgw.namesrv.discovery{result}}). */
public final class NamesrvDiscoveryMeters {

    /**
     * The {@code result} values of {@code rmqgw.namesrv.discovery}: the two successes, then why a poll of the
     * address URL failed. Registered at 0 from the start; a value outside this list still counts.
     */
    public static final List<String> RESULTS =
        List.of("changed", "unchanged", "http_error", "timeout", "empty", "malformed", "unreachable");

    private final LabelledCounters polls;

    NamesrvDiscoveryMeters(MeterRegistry registry) {
        polls = new LabelledCounters(registry, "rmqgw.namesrv.discovery",
            "Polls of the name-server address URL, by result (errors keep the last good list)",
            Tags.empty(), "result", RESULTS);
    }

    /** One poll of the name-server address URL ended with {@code result}, one of {@link #RESULTS}. */
    public void poll(String result) {
        polls.counter(result).increment();
    }
}
