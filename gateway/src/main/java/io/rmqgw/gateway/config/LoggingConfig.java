package io.rmqgw.gateway.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Log levels by logger, applied at start and on every reload ({@code logging.levels}). The gateway
 * only carries them: the process that owns the logging backend applies them (the {@code rmqgw}
 * command does, through logback).
 *
 * @param levels logger name ({@code io.rmqgw}, {@code io.rmqgw.gateway.relay}, {@code ROOT}) to level, one of
 *               {@code TRACE}, {@code DEBUG}, {@code INFO}, {@code WARN}, {@code ERROR}, {@code OFF}; a logger
 *               left out of a reloaded file goes back to the level it had before rmqgw set it
 */
public record LoggingConfig(Map<String, Object> levels) {

    /** The levels accepted, as logback spells them. */
    public static final Set<String> LEVELS = Set.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");
    /** The name that means the root logger. */
    public static final String ROOT = "ROOT";

    public static final LoggingConfig DEFAULT = new LoggingConfig(null);

    public LoggingConfig {
        Map<String, Object> normalized = new LinkedHashMap<>();
        if (levels != null) {
            for (Map.Entry<String, Object> e : levels.entrySet()) {
                String logger = e.getKey() == null ? "" : e.getKey().trim();
                String path = "logging.levels." + logger;
                if (logger.isEmpty() || logger.chars().anyMatch(Character::isWhitespace)) {
                    throw new ConfigException("logging.levels", "a logger name must be a dotted name such as io.rmqgw"
                        + " (or ROOT), was '" + e.getKey() + "'");
                }
                normalized.put(ROOT.equalsIgnoreCase(logger) ? ROOT : logger, level(path, e.getValue()));
            }
        }
        levels = Collections.unmodifiableMap(normalized);
    }

    /** The levels as logger name to upper-case level name. */
    public Map<String, String> levelNames() {
        Map<String, String> out = new LinkedHashMap<>();
        levels.forEach((k, v) -> out.put(k, (String) v));
        return Collections.unmodifiableMap(out);
    }

    private static String level(String path, Object value) {
        if (Boolean.FALSE.equals(value)) {
            return "OFF"; // YAML reads a bare 'off' as the boolean false
        }
        if (value instanceof String s) {
            String level = s.trim().toUpperCase(Locale.ROOT);
            if (LEVELS.contains(level)) {
                return level;
            }
        }
        String shown = value instanceof String s ? "'" + s + "'" : value instanceof Map ? "a mapping of keys"
            : String.valueOf(value);
        throw new ConfigException(path, "must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, was " + shown);
    }
}
