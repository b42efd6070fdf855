package io.rmqgw.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import io.rmqgw.gateway.config.LoggingConfig;
import io.rmqgw.gateway.runtime.LogLevels;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Applies {@code logging.levels} to logback, at start and on every reload. A logger left out of a later
 * configuration goes back to the level it had before rmqgw first set it (inherited, or what logback.xml
 * gave it). Does nothing, once with a warning, when SLF4J is not bound to logback.
 */
final class LogbackLevels implements LogLevels {

    private static final org.slf4j.Logger log = LoggerFactory.getLogger(LogbackLevels.class);

    /** Logger name to the level it had before rmqgw set one (null: inherited). */
    private final Map<String, Level> originals = new HashMap<>();
    private final Set<String> touched = new HashSet<>();
    private boolean warned;

    @Override
    public synchronized void apply(LoggingConfig config) {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (!(factory instanceof LoggerContext context)) {
            if (!config.levels().isEmpty() && !warned) {
                warned = true;
                log.warn("logging.levels ignored: SLF4J is bound to {}, not logback", factory.getClass().getName());
            }
            return;
        }
        Map<String, String> wanted = config.levelNames();
        for (String name : Set.copyOf(touched)) {
            if (!wanted.containsKey(name)) {
                Logger logger = logger(context, name);
                Level original = originals.remove(name);
                logger.setLevel(original);
                touched.remove(name);
                log.info("log level of {} back to {}", name, original == null ? "inherited (" + logger.getEffectiveLevel()
                    + ")" : original);
            }
        }
        for (Map.Entry<String, String> e : wanted.entrySet()) {
            Logger logger = logger(context, e.getKey());
            if (touched.add(e.getKey())) {
                originals.put(e.getKey(), logger.getLevel());
            }
            Level level = Level.toLevel(e.getValue(), null);
            if (level == null) {
                continue; // LoggingConfig only lets logback's level names through
            }
            if (!level.equals(logger.getLevel())) {
                logger.setLevel(level);
                log.info("log level of {} set to {}", e.getKey(), level);
            }
        }
    }

    private static Logger logger(LoggerContext context, String name) {
        return context.getLogger(LoggingConfig.ROOT.equals(name) ? org.slf4j.Logger.ROOT_LOGGER_NAME : name);
    }
}
