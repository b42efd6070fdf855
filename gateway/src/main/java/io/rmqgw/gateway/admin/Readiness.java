package io.rmqgw.gateway.admin;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * Whether the gateway should receive traffic, as {@code /health/ready} reports it: ready once the
 * listeners are bound and an upstream name server answered, not ready again once draining starts.
 * Each step is a latch set from whichever thread notices it; reads and writes are lock-free and
 * {@link #namesrvAnswered()} is cheap enough to call on every name-server answer. Ready also takes every
 * {@linkplain #check check} passing now (memory to serve with, event loops that run): those come and go.
 */
public final class Readiness {

    private volatile boolean listenersBound;
    private volatile boolean namesrvAnswered;
    private volatile boolean draining;
    private final List<Supplier<String>> checks = new CopyOnWriteArrayList<>();

    /** A condition of serving, asked at each readiness probe: why the gateway cannot serve now, or null when it can. */
    public void check(Supplier<String> whyNot) {
        checks.add(whyNot);
    }

    /** The name-server listener and the broker listeners known at start are bound. */
    public void listenersBound() {
        listenersBound = true;
    }

    /** An upstream name server answered a request (once is enough; later calls cost a volatile read). */
    public void namesrvAnswered() {
        if (!namesrvAnswered) {
            namesrvAnswered = true;
        }
    }

    /** The gateway stops accepting: not ready from now on. */
    public void draining() {
        draining = true;
    }

    public boolean isReady() {
        return notReadyReason() == null;
    }

    /** Whether an upstream name server has answered since start. */
    public boolean namesrvHasAnswered() {
        return namesrvAnswered;
    }

    public boolean isDraining() {
        return draining;
    }

    /** Why the gateway is not ready, in a few words, or {@code null} when it is ready. */
    public String notReadyReason() {
        if (draining) {
            return "draining";
        }
        if (!listenersBound) {
            return "listeners not bound yet";
        }
        if (!namesrvAnswered) {
            return "no upstream name server answered yet";
        }
        for (Supplier<String> check : checks) {
            String why = check.get();
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        String reason = notReadyReason();
        return reason == null ? "ready" : "not ready: " + reason;
    }
}
