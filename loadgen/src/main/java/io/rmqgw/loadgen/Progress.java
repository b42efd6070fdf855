package io.rmqgw.loadgen;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** One progress line per second while a run goes: phase, rate and errors over the last second, totals. */
final class Progress implements AutoCloseable {

    private final PrintWriter out;
    private final String what;
    private final Tally tally;
    private final LongSupplier inFlight;
    private final long start;
    private final ScheduledExecutorService timer;
    private long lastOk;
    private long lastErrors;
    private long lastNanos;

    /**
     * @param what     what is counted ("sent", "received")
     * @param inFlight operations in flight, or null when that means nothing
     */
    Progress(PrintWriter out, String what, Tally tally, long startNanos, LongSupplier inFlight) {
        this.out = out;
        this.what = what;
        this.tally = tally;
        this.inFlight = inFlight;
        this.start = startNanos;
        this.lastNanos = startNanos;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-progress");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleAtFixedRate(this::tick, 1, 1, TimeUnit.SECONDS);
    }

    private void tick() {
        long now = System.nanoTime();
        long ok = tally.okSoFar();
        long errors = tally.errorsSoFar();
        double seconds = Math.max(1e-3, (now - lastNanos) / 1e9);
        String phase = switch (tally.phaseAt(now)) {
            case WARMUP -> "warm-up";
            case MEASURE -> "measure";
            case DONE -> "finish ";
        };
        StringBuilder line = new StringBuilder(120);
        line.append(String.format(Locale.ROOT, "[%5.1fs] %s %,9.0f msg/s %s  errors %,d/s  total %,d %s, %,d errors",
            (now - start) / 1e9, phase, (ok - lastOk) / seconds, what, Math.round((errors - lastErrors) / seconds), ok,
            what, errors));
        if (inFlight != null) {
            line.append(String.format(Locale.ROOT, "  in flight %,d", inFlight.getAsLong()));
        }
        out.println(line);
        out.flush();
        lastOk = ok;
        lastErrors = errors;
        lastNanos = now;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
