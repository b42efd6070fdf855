package io.rmqgw.cli.bench;

import java.time.Duration;

/** Durations as the rest of rmqgw writes them: {@code 500ms}, {@code 20s}, {@code 2m}, {@code 1h}; a bare number is seconds. */
public final class Durations {

    private Durations() {
    }

    /** Parses {@code text}; throws IllegalArgumentException naming {@code what} when it is not a duration. */
    public static Duration parse(String what, String text) {
        String s = text == null ? "" : text.trim().toLowerCase(java.util.Locale.ROOT);
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException(what + ": expected a duration such as 500ms, 20s, 2m or 1h, was '" + text + "'");
        }
        double number;
        try {
            number = Double.parseDouble(s.substring(0, i));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": expected a duration such as 500ms, 20s, 2m or 1h, was '" + text + "'");
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
        if (nanos > 7 * 24 * 3600e9) {
            throw new IllegalArgumentException(what + ": at most a week, was '" + text + "'");
        }
        return Duration.ofNanos(Math.round(nanos));
    }

    /** {@code d} as a short text: 1.5s, 250ms, 2m. */
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
