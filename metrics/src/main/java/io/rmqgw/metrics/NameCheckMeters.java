package io.rmqgw.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.rmqgw.codec.name.NameCheck;
import java.util.Arrays;

/** Topic and group names refused at the edge ({@code rmqgw.names.rejected{reason}}), by {@link NameCheck}. */
public final class NameCheckMeters {

    private final LabelledCounters rejected;

    NameCheckMeters(MeterRegistry registry) {
        rejected = new LabelledCounters(registry, "rmqgw.names.rejected",
            "Topic and group names refused by the gateway, by reason",
            Tags.empty(), "reason", Arrays.stream(NameCheck.values()).filter(c -> !c.isValid()).map(NameCheck::label).toList());
    }

    /**
     * A topic or group name refused at the edge ({@code rmqgw.names.rejected{reason}}).
     *
     * @throws IllegalArgumentException for {@link NameCheck#VALID}, which is no refusal
     */
    public void nameRejected(NameCheck check) {
        if (check.isValid()) {
            throw new IllegalArgumentException("a valid name is not rejected");
        }
        rejected.counter(check.label()).increment();
    }

    /**
     * A topic or group name refused at the edge; {@code reason} is a {@link NameCheck#label()} (those exist at 0
     * from the start; another value gets its own series on first use).
     */
    public void nameRejected(String reason) {
        rejected.counter(reason).increment();
    }
}
