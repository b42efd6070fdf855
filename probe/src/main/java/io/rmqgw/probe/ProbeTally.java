package io.rmqgw.probe;

import io.rmqgw.tools.Histogram;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The probe's bookkeeping, independent of any broker: which sequence numbers were attempted, sent
 * (the send was acknowledged) or failed, and what the consumer received. Thread-safe: the sender,
 * the producer's callback threads and the consumer's threads all report here.
 *
 * <p>Definitions: <em>sent</em> = acknowledged sends; <em>send errors</em> = sends that failed or
 * got no result in time; <em>received</em> = distinct sequence numbers of this run delivered;
 * <em>lost</em> = sent but not delivered (by the time {@link #counts()} is taken); <em>duplicates</em>
 * = deliveries beyond the first of a sequence number; <em>foreign</em> = messages on the topic that
 * belong to another run (or to nobody), ignored. Latency is taken from the first delivery of each
 * sequence number.
 */
public final class ProbeTally {

    /** What a delivery was. */
    public enum Receipt { FIRST, DUPLICATE, FOREIGN, OWN_CONTROL }

    private static final byte UNTRIED = 0;
    private static final byte PENDING = 1;
    private static final byte SENT = 2;
    private static final byte FAILED = 3;
    private static final int ERROR_SAMPLES = 5;

    private final String runId;
    private final byte[] state;
    private final int[] deliveries;
    private final long[] latencyMillis;
    private final Map<String, Integer> errors = new LinkedHashMap<>();
    private int attempted;
    private int pending;
    private int sent;
    private int failed;
    private int received;
    private int sentUndelivered;
    private int duplicates;
    private int foreign;

    /**
     * @param runId    this run's id; deliveries carrying another are foreign
     * @param capacity how many sequence numbers (0 .. capacity-1) the run may send
     */
    public ProbeTally(String runId, int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative, was " + capacity);
        }
        this.runId = Objects.requireNonNull(runId);
        state = new byte[capacity];
        deliveries = new int[capacity];
        latencyMillis = new long[capacity];
    }

    public String runId() {
        return runId;
    }

    public int capacity() {
        return state.length;
    }

    /** The send of {@code seq} starts; its outcome follows with {@link #sent} or {@link #failed}. */
    public synchronized void attempted(int seq) {
        check(seq);
        if (state[seq] != UNTRIED) {
            throw new IllegalStateException("sequence " + seq + " attempted twice");
        }
        state[seq] = PENDING;
        attempted++;
        pending++;
    }

    /** The broker acknowledged {@code seq}. Ignored unless the send is pending (a late second outcome). */
    public synchronized void sent(int seq) {
        check(seq);
        if (state[seq] != PENDING) {
            return;
        }
        state[seq] = SENT;
        pending--;
        sent++;
        if (deliveries[seq] == 0) {
            sentUndelivered++;
        }
        notifyAll();
    }

    /** The send of {@code seq} failed; {@code error} is one line. Ignored unless the send is pending. */
    public synchronized void failed(int seq, String error) {
        check(seq);
        if (state[seq] != PENDING) {
            return;
        }
        state[seq] = FAILED;
        pending--;
        failed++;
        noteError(error);
        notifyAll();
    }

    /**
     * A delivery: {@code run} and {@code seq} as read from the message's properties (either may be
     * null or malformed), timestamps in epoch milliseconds on this host's clock.
     */
    public synchronized Receipt received(String run, String seq, long bornMillis, long receivedMillis) {
        if (!runId.equals(run) || seq == null) {
            foreign++;
            return Receipt.FOREIGN;
        }
        int n;
        try {
            n = Integer.parseInt(seq.trim());
        } catch (NumberFormatException e) {
            foreign++;
            return Receipt.FOREIGN;
        }
        if (n < 0) {
            return Receipt.OWN_CONTROL; // this run's topic warm-up message
        }
        if (n >= state.length) {
            foreign++;
            return Receipt.FOREIGN;
        }
        if (deliveries[n]++ > 0) {
            duplicates++;
            return Receipt.DUPLICATE;
        }
        received++;
        latencyMillis[n] = receivedMillis - bornMillis;
        if (state[n] == SENT) {
            sentUndelivered--;
            notifyAll();
        }
        return Receipt.FIRST;
    }

    /**
     * Waits until every attempted send has an outcome, or {@code deadlineNanos} ({@link System#nanoTime()})
     * passes; then every send still pending is counted as failed with {@code timeoutError}.
     *
     * @return whether every send had an outcome in time
     */
    public synchronized boolean awaitSendsSettled(long deadlineNanos, String timeoutError) throws InterruptedException {
        boolean settled = awaitUntil(deadlineNanos, () -> pending == 0);
        if (!settled) {
            for (int seq = 0; seq < state.length; seq++) {
                if (state[seq] == PENDING) {
                    failed(seq, timeoutError);
                }
            }
        }
        return settled;
    }

    /** Waits until every sent message was delivered at least once, or {@code deadlineNanos} passes. */
    public synchronized boolean awaitDelivered(long deadlineNanos) throws InterruptedException {
        return awaitUntil(deadlineNanos, () -> sentUndelivered == 0);
    }

    /** Every sent message delivered at least once so far. */
    public synchronized boolean allDelivered() {
        return sentUndelivered == 0;
    }

    private boolean awaitUntil(long deadlineNanos, java.util.function.BooleanSupplier done) throws InterruptedException {
        // each pass blocks in wait() until a report arrives or the deadline: no spinning
        while (!done.getAsBoolean()) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            long millis = Math.max(1, left / 1_000_000L);
            wait(millis);
        }
        return true;
    }

    /** The numbers as they stand now. */
    public synchronized Counts counts() {
        long[] latencies = new long[received];
        int i = 0;
        int receivedAfterSendError = 0;
        for (int seq = 0; seq < state.length; seq++) {
            if (deliveries[seq] > 0) {
                latencies[i++] = latencyMillis[seq];
                if (state[seq] == FAILED) {
                    receivedAfterSendError++;
                }
            }
        }
        List<String> samples = new ArrayList<>();
        errors.forEach((message, times) -> samples.add(times == 1 ? message : times + "x " + message));
        return new Counts(attempted, sent, failed, received, sentUndelivered, duplicates, foreign,
            receivedAfterSendError, Histogram.of(latencies), samples);
    }

    private void noteError(String error) {
        String e = error == null || error.isBlank() ? "unknown error" : error;
        Integer times = errors.get(e);
        if (times != null) {
            errors.put(e, times + 1);
        } else if (errors.size() < ERROR_SAMPLES) {
            errors.put(e, 1);
        }
    }

    private void check(int seq) {
        if (seq < 0 || seq >= state.length) {
            throw new IndexOutOfBoundsException("sequence " + seq + " outside 0.." + (state.length - 1));
        }
    }

    /**
     * A snapshot of the tally.
     *
     * @param attempted              sends started
     * @param sent                   sends acknowledged by a broker
     * @param sendErrors             sends that failed or got no result in time
     * @param received               distinct sequence numbers of this run delivered
     * @param lost                   sent but not delivered
     * @param duplicates             deliveries beyond the first
     * @param foreign                deliveries from other runs, ignored
     * @param receivedAfterSendError sends reported failed whose message arrived anyway (e.g. a timeout after storing)
     * @param latencies              one latency per received sequence number
     * @param errorSamples           up to five distinct send errors, each with its count when above one
     */
    public record Counts(int attempted, int sent, int sendErrors, int received, int lost, int duplicates, int foreign,
                         int receivedAfterSendError, Histogram latencies, List<String> errorSamples) {
        public Counts {
            errorSamples = List.copyOf(errorSamples);
        }
    }
}
