package io.rmqgw.gateway;

import java.util.List;

/**
 * What a reload changed. {@code applied}: settings now in force for every later request, with
 * connections kept. {@code needsRestart}: settings that differ in the new file but only take
 * effect on the next start (listen address, port range, ...).
 */
public record ReloadResult(List<String> applied, List<String> needsRestart) {

    public ReloadResult {
        applied = List.copyOf(applied);
        needsRestart = List.copyOf(needsRestart);
    }

    public boolean changedAnything() {
        return !applied.isEmpty() || !needsRestart.isEmpty();
    }
}
