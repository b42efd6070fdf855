package io.rmqgw.gateway.runtime;

import io.rmqgw.gateway.config.LoggingConfig;

/**
 * Applies {@code logging.levels} to the logging backend, at start and on every reload. The gateway logs through
 * SLF4J only; the backend (logback in the {@code rmqgw} command) implements this at the edge.
 */
@FunctionalInterface
public interface LogLevels {

    /** Leaves levels alone: for runs without a backend that can change them. */
    LogLevels UNSUPPORTED = config -> {
    };

    void apply(LoggingConfig config);
}
