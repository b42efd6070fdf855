package io.rmqgw.tools;

import java.time.Duration;
import java.util.Locale;

/**
 * The one duration syntax of rmqgw's tools ({@code rmqgw bench}, {@code rmqgw probe}): a number, decimals
 * allowed, and a unit: {@code 500ms}, {@code 1.5s}, {@code 2m}, {@code 1h}; a bare number is seconds
 * ({@code 30} is {@code 30s}). At most a week; never negative.
 */
public final class Durations {

    /** What every tool's help says about durations. */
    public static final String SYNTAX = "a number and a unit (ms, s, m, h), e.g. 500ms, 1.5s, 2m; a bare number is seconds";

    private static final Duration MAX = Duration.ofDays(7);

    private Durations() {
    }

    /** Parses {@code text}; throws IllegalArgumentException, starting with {@code what}, when it is not a duration. */
    public static Duration parse(String what, String text) {
        String s = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        double number;
        try {
            number = i == 0 ? Double.NaN : Double.parseDouble(s.substring(0, i));
        } catch (NumberFormatException e) {
            number = Double.NaN;
        }
        if (Double.isNaN(number)) {
            throw new IllegalArgumentException(what + ": expected a duration such as 500ms, 20s, 2m or 1h (a bare number"
                + " is seconds), was '" + text + "'");
        }
        String unit = s.substring(i).trim();
        double nanosPerUnit = switch (unit) {
            case "ms" -> 1e6;
            case "", "s" -> 1e9;
            case "m" -> 60e9;
            case "h" -> 3600e9;
            default -> throw new IllegalArgumentException(what + ": unknown unit '" + unit + "' in '" + text
                + "' (use ms, s, m or h)");
        };
        double nanos = number * nanosPerUnit;
        if (nanos > MAX.toNanos()) {
            throw new IllegalArgumentException(what + ": at most a week, was '" + text + "'");
        }
        return Duration.ofNanos(Math.round(nanos));
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
