package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;

/** Configuration reloads ({@code rmqgw.config.reloads{result}}). */
public final class ConfigReloadMeters {

    /** The {@code result} values of {@code rmqgw.config.reloads}. */
    public static final List<String> RESULTS = List.of("applied", "refused", "unchanged");

    private final LabelledCounters reloads;

    ConfigReloadMeters(MeterRegistry registry) {
        reloads = new LabelledCounters(registry, "rmqgw.config.reloads",
            "Configuration reloads, by result: applied, refused (invalid; the old one stays), unchanged",
            Tags.empty(), "result", RESULTS);
    }

    /** A configuration reload ended with {@code result}: one of {@link #RESULTS}. */
    public void reload(String result) {
        Counter c = reloads.existing(result);
        if (c == null) {
            throw new IllegalArgumentException("reload result must be one of " + RESULTS + ", was " + result);
        }
        c.increment();
    }
}
