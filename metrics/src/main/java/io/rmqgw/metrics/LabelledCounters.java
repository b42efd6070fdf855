package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One counter family split by a single label (a reason or result), with fixed other tags. The known
 * values are registered at construction, so every series is exported at 0 before its first event and
 * {@code increase()} in an alert sees that first event. A value outside the known set still gets a
 * counter (created on first use) rather than being lost. Looking up an existing value allocates nothing.
 * Public for the features' own meters (in their packages of the gateway module).
 */
public final class LabelledCounters {

    private final MeterRegistry registry;
    private final String name;
    private final String description;
    private final Tags fixed;
    private final String label;
    private final Map<String, Counter> byValue = new ConcurrentHashMap<>();

    public LabelledCounters(MeterRegistry registry, String name, String description, Tags fixed, String label,
                     Collection<String> known) {
        this.registry = registry;
        this.name = name;
        this.description = description;
        this.fixed = fixed;
        this.label = label;
        for (String value : known) {
            counter(value);
        }
    }

    public Counter counter(String value) {
        Counter c = byValue.get(value);
        if (c == null) {
            c = byValue.computeIfAbsent(value, v -> Counter.builder(name)
                .description(description)
                .tags(fixed)
                .tag(label, v)
                .register(registry));
        }
        return c;
    }

    /** The counter of {@code value} if it exists, without creating it. */
    Counter existing(String value) {
        return byValue.get(value);
    }
}
