package io.rmqgw.gateway.runtime;

import java.util.ArrayList;
import java.util.List;

/** Turns exceptions into one line for users: the messages along the cause chain, without stack traces. */
public final class Errors {

    private Errors() {
    }

    public static String oneLine(Throwable t) {
        List<String> parts = new ArrayList<>();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String m = c.getMessage();
            if (m != null && c.getCause() != null && m.equals(c.getCause().toString())) {
                continue; // new RuntimeException(cause): says nothing of its own
            }
            if (m == null || m.isBlank()) {
                if (parts.isEmpty() && c.getCause() == null) {
                    parts.add(c.getClass().getSimpleName());
                }
                continue;
            }
            m = m.replaceAll("\\s*\\R\\s*", " ").trim();
            String last = parts.isEmpty() ? null : parts.get(parts.size() - 1);
            if (last != null && last.contains(m)) {
                continue;
            }
            if (last != null && m.contains(last)) {
                parts.set(parts.size() - 1, m);
                continue;
            }
            parts.add(m);
        }
        String line = String.join(": ", parts);
        return line.length() > 400 ? line.substring(0, 397) + "..." : line;
    }
}
