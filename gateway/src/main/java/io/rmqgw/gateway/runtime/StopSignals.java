package io.rmqgw.gateway.runtime;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGTERM and SIGINT (Ctrl-C) ask the process to stop; the stop then runs on the main thread, which exits 0
 * when it completes. Left to the JVM, these signals run the shutdown hooks and the process exits 143 (130)
 * however cleanly it stopped, which service managers report as a failure. A second signal while stopping
 * ends the process at once. Where the handlers cannot be installed ({@code -Xrs}, a JDK without
 * {@code sun.misc.Signal}) the shutdown hook still stops everything, with the JVM's exit code.
 */
final class StopSignals implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StopSignals.class);

    private final List<sun.misc.Signal> signals = new ArrayList<>();
    private final List<sun.misc.SignalHandler> previous = new ArrayList<>();

    private StopSignals() {
    }

    /**
     * Installs handlers for TERM and INT that run {@code stop} on the JVM's signal thread (keep it short), then,
     * on a second signal, halt the process with 128 + the signal number.
     */
    static StopSignals install(Runnable stop) {
        StopSignals s = new StopSignals();
        boolean[] requested = new boolean[1];
        for (String name : List.of("TERM", "INT")) {
            try {
                sun.misc.Signal signal = new sun.misc.Signal(name);
                sun.misc.SignalHandler before = sun.misc.Signal.handle(signal, received -> {
                    synchronized (requested) {
                        if (requested[0]) {
                            System.err.println("rmqgw: SIG" + received.getName() + " again: stopping now");
                            Runtime.getRuntime().halt(128 + received.getNumber());
                        }
                        requested[0] = true;
                    }
                    stop.run();
                });
                if (before == sun.misc.SignalHandler.SIG_IGN) {
                    sun.misc.Signal.handle(signal, before); // the parent meant it ignored (nohup does for HUP)
                    continue;
                }
                s.signals.add(signal);
                s.previous.add(before);
            } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError | SecurityException e) {
                log.debug("SIG{} left to the JVM ({}): a stop then exits with its exit code", name, e.toString());
            }
        }
        return s;
    }

    /** Puts the previous handlers back. */
    @Override
    public void close() {
        for (int i = 0; i < signals.size(); i++) {
            try {
                sun.misc.Signal.handle(signals.get(i), previous.get(i));
            } catch (IllegalArgumentException e) {
                // nothing to restore
            }
        }
    }
}
