package io.rmqgw.gateway.runtime;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP triggers a reload (the JVM would otherwise treat it as a request to stop). Uses
 * {@code sun.misc.Signal}, which JDKs on Unix provide; elsewhere, with {@code -Xrs}, or when the process
 * was started with SIGHUP ignored (nohup), nothing is installed and the other reload triggers remain.
 */
public final class Sighup implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Sighup.class);

    private final sun.misc.Signal signal;
    private final sun.misc.SignalHandler previous;

    private Sighup(sun.misc.Signal signal, sun.misc.SignalHandler previous) {
        this.signal = signal;
        this.previous = previous;
    }

    /** Installs {@code action} (run on the JVM's signal thread: keep it short); null when SIGHUP cannot be handled. */
    public static Sighup install(Runnable action) {
        try {
            sun.misc.Signal hup = new sun.misc.Signal("HUP");
            sun.misc.SignalHandler previous = sun.misc.Signal.handle(hup, s -> {
                try {
                    action.run();
                } catch (RuntimeException e) {
                    log.warn("SIGHUP handling failed", e);
                }
            });
            if (previous == sun.misc.SignalHandler.SIG_IGN) {
                // the JVM leaves a signal its parent ignored (nohup does) ignored, whatever handler it is given
                log.info("SIGHUP is ignored by this process (started under nohup?) and cannot trigger reloads; "
                    + "use POST /reload or 'rmqgw reload'");
                return null;
            }
            return new Sighup(hup, previous);
        } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError | SecurityException e) {
            log.info("SIGHUP cannot trigger reloads here ({}); use POST /reload or 'rmqgw reload'", e.toString());
            return null;
        }
    }

    /** Sends SIGHUP to this process (tests). */
    public void raise() {
        sun.misc.Signal.raise(signal);
    }

    /** Puts the previous handler back. */
    @Override
    public void close() {
        try {
            sun.misc.Signal.handle(signal, previous);
        } catch (IllegalArgumentException e) {
            // nothing to restore
        }
    }
}
