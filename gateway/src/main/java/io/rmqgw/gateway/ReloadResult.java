package io.rmqgw.gateway;

import java.util.List;

/**
 * What a reload changed. {@code applied}: settings now in force for every later request, with connections kept.
 * {@code needsRestart}: settings bound at start (listen address, port range, ...) whose value in the new
 * configuration is new since the last reload: reported once. {@code pendingRestart}: every such setting whose
 * configured value still differs from the running one, reported this time or before; they take effect on the
 * next start.
 */
public record ReloadResult(List<String> applied, List<String> needsRestart, List<String> pendingRestart) {

    public ReloadResult {
        applied = List.copyOf(applied);
        needsRestart = List.copyOf(needsRestart);
        pendingRestart = List.copyOf(pendingRestart);
    }

    /** Whether this reload applied something or met a setting that newly needs a restart. */
    public boolean changedAnything() {
        return !applied.isEmpty() || !needsRestart.isEmpty();
    }
}
