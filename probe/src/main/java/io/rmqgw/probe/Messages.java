package io.rmqgw.probe;

import java.util.ArrayList;
import java.util.List;

/** One-line error text from exceptions, without RocketMQ's "See ... FAQ" trailers and stack traces. */
final class Messages {

    private Messages() {
    }

    static String oneLine(Throwable t) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        for (Throwable c = t; c != null && depth < 10; c = c.getCause() == c ? null : c.getCause(), depth++) {
            String m = c.getMessage();
            if (m == null || m.isBlank()) {
                if (parts.isEmpty() && c.getCause() == null) {
                    parts.add(c.getClass().getSimpleName());
                }
                continue;
            }
            String line = firstLine(m);
            if (line.isEmpty() || parts.stream().anyMatch(p -> p.contains(line))) {
                continue;
            }
            parts.add(line);
        }
        String joined = String.join(": ", parts);
        return joined.length() > 300 ? joined.substring(0, 297) + "..." : joined;
    }

    private static String firstLine(String message) {
        String m = message.strip();
        int nl = m.indexOf('\n');
        if (nl >= 0) {
            m = m.substring(0, nl).strip();
        }
        int faq = m.indexOf(", See http");
        if (faq < 0) {
            faq = m.indexOf(" See http");
        }
        return faq >= 0 ? m.substring(0, faq).strip() : m;
    }
}
