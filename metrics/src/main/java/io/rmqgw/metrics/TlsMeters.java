package io.rmqgw.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;

/** TLS files read again after a change ({@code rmqgw.tls.reloads{result}}). */
public final class TlsMeters {

    /** The {@code result} values of {@code rmqgw.tls.reloads}. */
    public static final List<String> RELOAD_RESULTS = List.of("applied", "failed");

    private final LabelledCounters reloads;

    TlsMeters(MeterRegistry registry) {
        reloads = new LabelledCounters(registry, "rmqgw.tls.reloads",
            "TLS certificate and key files read again after a change: applied, or failed (the previous ones stay)",
            Tags.empty(), "result", RELOAD_RESULTS);
    }

    /** The TLS files were read again: {@code result} is one of {@link #RELOAD_RESULTS}. */
    public void reload(String result) {
        reloads.counter(result).increment();
    }
}
