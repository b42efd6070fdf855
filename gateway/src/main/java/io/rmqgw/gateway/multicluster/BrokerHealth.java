package io.rmqgw.gateway.multicluster;

import java.util.concurrent.TimeUnit;

/**
 * One upstream broker's health as this gateway sees it: a weight in [0, 1] lowered on errors and lost connections,
 * raised on answers; how long its answers take; what waits on it now. Soft state, per gateway: nothing here is shared
 * with other gateways or kept over a restart. Thread-safe (sends of every event loop report to it); pure otherwise,
 * times are passed in.
 */
final class BrokerHealth {

    /** How a broker is doing, for metrics and for leaving it out of routes. */
    enum State { UP, DEGRADED, DOWN }

    /** What went wrong with a request to it. */
    enum Failure {
        /** SYSTEM_BUSY, flow control ([TIMEOUT_CLEAN_QUEUE], [PCBUSY_CLEAN_QUEUE]), SYSTEM_ERROR: it answered, badly. */
        REFUSED,
        /** No answer within the request's time. */
        TIMEOUT,
        /** Not reachable, or the connection closed under the request. */
        UNREACHABLE
    }

    /** A weight at or above this is UP; under it DEGRADED (DOWN is unreachable, or weight 0). */
    static final double UP_WEIGHT = 0.7;
    /** What each answer adds to the weight: about 20 answers from half to whole. */
    static final double RAISE = 0.025;
    /** The weight a broker that was DOWN restarts at when a probe reaches it again. */
    static final double REACHED_AGAIN = 0.3;
    /** No answer for this long while requests wait on it: it is stalled (stopped, or its disk hangs). */
    static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** Slower than the fastest broker by this factor (and {@link #SLOW_SLACK_NANOS}) lowers its share. */
    static final double SLOW_FACTOR = 3;
    static final long SLOW_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** How much one answer moves the latency average. */
    private static final double EWMA_ALPHA = 0.1;

    final String cluster;
    final String address;
    private double weight = 1;
    private boolean unreachable;
    private double latencyNanos = -1;
    private int inFlight;
    private long lastAnswerNanos;

    BrokerHealth(String cluster, String address, long now) {
        this.cluster = cluster;
        this.address = address;
        this.lastAnswerNanos = now;
    }

    synchronized void sent(long now) {
        if (inFlight == 0) {
            // nothing waited on it: its silence until now was no stall
            lastAnswerNanos = now;
        }
        inFlight++;
    }

    /** An answer that stored the message (or a probe's answer), {@code latency} after it was sent. */
    synchronized void answered(long latency, long now, boolean wasSent) {
        if (wasSent) {
            inFlight = Math.max(0, inFlight - 1);
        }
        lastAnswerNanos = now;
        latencyNanos = latencyNanos < 0 ? latency : latencyNanos + EWMA_ALPHA * (latency - latencyNanos);
        if (unreachable) {
            unreachable = false;
            weight = REACHED_AGAIN;
        } else {
            weight = Math.min(1, weight + RAISE);
        }
    }

    /** {@code failure} null: the request ended without telling anything of the broker. */
    synchronized void failed(Failure failure, long now, boolean wasSent) {
        if (wasSent) {
            inFlight = Math.max(0, inFlight - 1);
        }
        if (failure == null) {
            return; // not the broker's doing (the gateway's own limits, or it is stopping)
        }
        switch (failure) {
            case REFUSED -> {
                lastAnswerNanos = now;
                weight = weight / 2;
            }
            case TIMEOUT -> weight = weight / 2;
            case UNREACHABLE -> {
                unreachable = true;
                weight = 0;
            }
        }
    }

    /**
     * The share of the sends it should take now, in [0, 1]: its weight, lowered while it is slower than
     * {@code fastestLatency} (the fastest broker's average; negative: none known) or stalled.
     */
    synchronized double share(long fastestLatency, long now) {
        double share = unreachable ? 0 : weight;
        if (share > 0 && fastestLatency >= 0 && latencyNanos > 0) {
            double slow = Math.max(fastestLatency * SLOW_FACTOR, fastestLatency + SLOW_SLACK_NANOS);
            if (latencyNanos > slow) {
                share *= slow / latencyNanos;
            }
        }
        long silent = now - lastAnswerNanos;
        if (share > 0 && inFlight > 0 && silent > STALL_NANOS) {
            share *= (double) STALL_NANOS / silent / 4;
        }
        return share;
    }

    synchronized State state(long fastestLatency, long now) {
        if (unreachable) {
            return State.DOWN;
        }
        double share = share(fastestLatency, now);
        return share >= UP_WEIGHT ? State.UP : share <= 0.01 ? State.DOWN : State.DEGRADED;
    }

    /** Whether its latency counts toward the fastest: it is reachable and not plainly failing. */
    synchronized boolean weightedReachable() {
        return !unreachable && weight >= UP_WEIGHT;
    }

    /** The average answer time in nanoseconds, negative while none came. */
    synchronized long latencyNanos() {
        return (long) latencyNanos;
    }

    synchronized int inFlight() {
        return inFlight;
    }

    /** Whether a probe should ask it now: it is not plainly well, or nothing was heard from it for {@code idle}. */
    synchronized boolean wantsProbe(long now, long idle, long fastestLatency) {
        return unreachable || weight < 1 || now - lastAnswerNanos > idle
            || share(fastestLatency, now) < UP_WEIGHT;
    }
}
