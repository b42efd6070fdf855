package io.rmqgw.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;

/** Requests the admin-request policy refused ({@code rmqgw.admin.requests.refused{kind}}), by what their code does. */
public final class AdminPolicyMeters {

    /** The {@code kind} values of {@code rmqgw.admin.requests.refused}: what a refused request code does. */
    public static final List<String> REFUSED_KINDS = List.of("destructive", "config_read", "cluster_internal",
        "unknown");

    private final LabelledCounters refused;

    AdminPolicyMeters(MeterRegistry registry) {
        refused = new LabelledCounters(registry, "rmqgw.admin.requests.refused",
            "Requests refused by the admin-request policy (admin-requests), by what the code does: destructive,"
                + " config_read, cluster_internal, unknown (oneways dropped included)", Tags.empty(), "kind",
            REFUSED_KINDS);
    }

    /** A request refused by the admin-request policy; {@code kind} is one of {@link #REFUSED_KINDS}. */
    public void refused(String kind) {
        refused.counter(kind).increment();
    }
}
