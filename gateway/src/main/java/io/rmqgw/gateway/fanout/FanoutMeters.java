package io.rmqgw.gateway.fanout;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.rmqgw.metrics.LabelledCounters;
import java.util.List;

/**
 * The fan-out topic's meters: sends to it by result, the parts each was split into, partial failures, retries. One
 * per gateway, made by {@link Fanout} on the gateway's registry whether fan-out is on or off, so every series is
 * exported at 0 from the start.
 */
public final class FanoutMeters {

    /** How a fan-out request ended: every part stored; refused before anything was sent; a part failed for good. */
    public static final List<String> RESULTS = List.of("success", "refused", "failed");
    /** Buckets of the parts (destination queues) one fan-out request is split into. */
    static final double[] PARTS_BUCKETS = {1, 2, 4, 8, 16, 32, 64};

    private final LabelledCounters requests;
    private final DistributionSummary parts;
    private final Counter partialFailures;
    private final Counter retries;

    public FanoutMeters(MeterRegistry registry) {
        requests = new LabelledCounters(registry, "rmqgw.fanout.requests",
            "Sends to the fan-out topic, by result: success, refused (nothing sent), failed (a part failed for good)",
            Tags.empty(), "result", RESULTS);
        parts = DistributionSummary.builder("rmqgw.fanout.request")
            .description("Parts (one batch per destination queue) a fan-out request was split into")
            .baseUnit("parts")
            .serviceLevelObjectives(PARTS_BUCKETS)
            .publishPercentileHistogram(false)
            .register(registry);
        partialFailures = Counter.builder("rmqgw.fanout.partial.failures")
            .description("Fan-out requests answered with an error after some destinations had stored their messages")
            .register(registry);
        retries = Counter.builder("rmqgw.fanout.part.retries")
            .description("Fan-out parts sent again to another queue of their topic after a failure")
            .register(registry);
    }

    /** A fan-out request ended with {@code result} (one of {@link #RESULTS}) after {@code parts} parts (0: refused). */
    public void request(String result, int parts) {
        requests.counter(result).increment();
        if (parts > 0) {
            this.parts.record(parts);
        }
    }

    /** A fan-out request failed after some of its destinations stored their messages. */
    public void partialFailure() {
        partialFailures.increment();
    }

    /** A fan-out part is sent again. */
    public void retry() {
        retries.increment();
    }
}
