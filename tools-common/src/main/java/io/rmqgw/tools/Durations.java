package io.rmqgw.tools;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one duration syntax of rmqgw, in its configuration file and on every command line ({@code rmqgw bench},
 * {@code rmqgw probe}, {@code rmqgw reload}): a number, decimals allowed, and a unit, which is required:
 * {@code ms}, {@code s}, {@code m}, {@code h} or {@code d} ({@code 500ms}, {@code 1.5s}, {@code 2m}, {@code 1h});
 * ISO-8601 ({@code PT30S}) is read too. Whole milliseconds; never negative. A bare number is refused (is
 * {@code 30} seconds or milliseconds?), naming the ways to write it.
 */
public final class Durations {

    /** What every tool's help says about durations. */
    public static final String SYNTAX = "a number and a unit (ms, s, m, h), e.g. 500ms, 1.5s, 2m";

    /** The longest duration the tools take (a run, a timeout): a week. */
    public static final Duration TOOL_MAX = Duration.ofDays(7);

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)");

    private Durations() {
    }

    /**
     * Parses {@code text}; throws an {@link InvalidValueException} naming {@code what} when it is not a duration.
     */
    public static Duration parse(String what, String text) {
        String s = text == null ? "" : text.trim();
        if (s.isEmpty()) {
            throw new InvalidValueException(what, "expected a duration such as 30s, 500ms or 2m");
        }
        if (s.startsWith("P") || s.startsWith("p")) {
            try {
                Duration d = Duration.parse(s);
                if (d.isNegative()) {
                    throw new InvalidValueException(what, "must not be negative, was '" + text + "'");
                }
                return d;
            } catch (DateTimeParseException e) {
                throw new InvalidValueException(what, "expected a duration such as 30s, 500ms or 2m, was '" + text + "'");
            }
        }
        Matcher m = DURATION.matcher(s.toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            if (s.chars().allMatch(c -> Character.isDigit(c) || c == '.') && s.chars().anyMatch(Character::isDigit)) {
                throw new InvalidValueException(what, "needs a unit: " + s + "s, " + s + "ms or " + s + "m, was '"
                    + text + "'");
            }
            throw new InvalidValueException(what, "expected a duration such as 30s, 500ms or 2m, was '" + text + "'");
        }
        long unitMillis = switch (m.group(2)) {
            case "ms" -> 1L;
            case "s" -> 1_000L;
            case "m" -> 60_000L;
            case "h" -> 3_600_000L;
            default -> 86_400_000L;
        };
        BigDecimal millis = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitMillis));
        try {
            return Duration.ofMillis(millis.longValueExact());
        } catch (ArithmeticException e) {
            if (millis.stripTrailingZeros().scale() > 0) {
                throw new InvalidValueException(what, "must be a whole number of milliseconds, was '" + text + "'");
            }
            throw new InvalidValueException(what, "is too large, was '" + text + "'");
        }
    }

    /** {@link #parse(String, String)}, refusing more than {@code max}. */
    public static Duration parse(String what, String text, Duration max) {
        Duration d = parse(what, text);
        if (d.compareTo(max) > 0) {
            throw new InvalidValueException(what, "at most " + (max.equals(TOOL_MAX) ? "a week" : format(max)) + ", was '" + text + "'");
        }
        return d;
    }

    /** {@code d} as a short text that {@link #parse} reads back: 1.5s, 250ms, 2m. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 60_000 == 0 && ms >= 60_000) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        if (ms >= 1000) {
            return (ms / 1000.0) + "s";
        }
        return ms + "ms";
    }
}
