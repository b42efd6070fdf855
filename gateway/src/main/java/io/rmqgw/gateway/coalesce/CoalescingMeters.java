package io.rmqgw.gateway.coalesce;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.rmqgw.metrics.LabelledCounters;
import io.rmqgw.metrics.RequestMeters;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The coalescing topics' meters: single sends taken into batches or refused, sends that went on their own (by
 * reason), the batches sent (by result, and their size), and how long a coalesced send waited. One per gateway,
 * made by {@link Coalescing} on the gateway's registry whether coalescing is on or off, so every series is exported
 * at 0 from the start.
 */
public final class CoalescingMeters {

    /** How a send to a coalescing topic was taken: coalesced, or refused because its queue's wait was full. */
    public static final List<String> RESULTS = List.of("coalesced", "busy");
    /** Why a single send to a coalescing topic went to its broker on its own (as without coalescing). */
    public static final List<String> PASS_REASONS = List.of("oneway", "batch", "delayed", "transactional",
        "retry_topic", "reconsume", "sys_flag", "no_wait_store", "no_unique_key", "no_queue", "too_large", "signed");
    /** How a coalesced batch ended: stored, refused by the broker (an error answer), failed (no answer). */
    public static final List<String> BATCH_RESULTS = List.of("stored", "refused", "failed");
    /** Buckets of the messages in one coalesced batch. */
    static final double[] BATCH_BUCKETS = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

    private final LabelledCounters sends;
    private final LabelledCounters passedThrough;
    private final LabelledCounters batches;
    private final DistributionSummary batchMessages;
    private final Timer delay;

    public CoalescingMeters(MeterRegistry registry) {
        sends = new LabelledCounters(registry, "rmqgw.coalesce.sends",
            "Single sends to coalescing topics taken into batches (coalesced), or answered SYSTEM_BUSY because their"
                + " queue already had the most sends waiting (busy)", Tags.empty(), "result", RESULTS);
        passedThrough = new LabelledCounters(registry, "rmqgw.coalesce.passed.through",
            "Sends to coalescing topics that went to their broker on their own, by the reason they could not be"
                + " coalesced", Tags.empty(), "reason", PASS_REASONS);
        batches = new LabelledCounters(registry, "rmqgw.coalesce.batches",
            "Coalesced batches sent, by result: stored, refused by the broker, failed (connection lost, timeout)",
            Tags.empty(), "result", BATCH_RESULTS);
        batchMessages = DistributionSummary.builder("rmqgw.coalesce.batch")
            .description("Messages in one coalesced batch sent to a broker")
            .baseUnit("messages")
            .serviceLevelObjectives(BATCH_BUCKETS)
            .publishPercentileHistogram(false)
            .register(registry);
        delay = Timer.builder("rmqgw.coalesce.delay")
            .description("Time a coalesced send waited in the gateway, from read to its batch written upstream")
            .serviceLevelObjectives(RequestMeters.gatewayBuckets())
            .publishPercentileHistogram(false)
            .register(registry);
    }

    /** A send to a coalescing topic taken by the coalescer: {@code coalesced} or {@code busy}. */
    public void send(String result) {
        sends.counter(result).increment();
    }

    /** A send to a coalescing topic that went on its own, with the reason (one of {@link #PASS_REASONS}). */
    public void passedThrough(String reason) {
        passedThrough.counter(reason).increment();
    }

    /** A coalesced batch answered ({@code result} one of {@link #BATCH_RESULTS}) with its message count. */
    public void batch(String result, int messages) {
        batches.counter(result).increment();
        batchMessages.record(messages);
    }

    /** How long one coalesced send waited between being read and its batch written upstream. */
    public void delay(long nanos) {
        delay.record(nanos, TimeUnit.NANOSECONDS);
    }
}
