package io.rmqgw.scenarios;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** {@code --name value} options; every option must be read, so a typo fails instead of being ignored. */
final class Args {

    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    private final Map<String, String> values = new HashMap<>();
    private final Set<String> used = new HashSet<>();

    Args(String[] argv, int from) {
        for (int i = from; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--")) {
                throw new UsageException("expected --option, got '" + a + "'");
            }
            String name = a.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else {
                if (i + 1 >= argv.length) {
                    throw new UsageException("option --" + name + " needs a value");
                }
                value = argv[++i];
            }
            if (values.put(name, value) != null) {
                throw new UsageException("option --" + name + " given twice");
            }
        }
    }

    String str(String name, String def) {
        used.add(name);
        String v = values.get(name);
        return v != null ? v : def;
    }

    String required(String name) {
        String v = str(name, null);
        if (v == null || v.isEmpty()) {
            throw new UsageException("option --" + name + " is required");
        }
        return v;
    }

    int integer(String name, int def) {
        String v = str(name, null);
        if (v == null) {
            return def;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("option --" + name + " must be an integer, was '" + v + "'");
        }
    }

    long longValue(String name, long def) {
        String v = str(name, null);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("option --" + name + " must be an integer, was '" + v + "'");
        }
    }

    /** {@code null} when absent, so callers can keep the client's own default. */
    Boolean bool(String name) {
        String v = str(name, null);
        if (v == null) {
            return null;
        }
        if ("true".equalsIgnoreCase(v) || "false".equalsIgnoreCase(v)) {
            return Boolean.parseBoolean(v);
        }
        throw new UsageException("option --" + name + " must be true or false, was '" + v + "'");
    }

    void checkAllUsed() {
        Set<String> unknown = new HashSet<>(values.keySet());
        unknown.removeAll(used);
        if (!unknown.isEmpty()) {
            throw new UsageException("unknown option(s) for this scenario: " + unknown);
        }
    }
}
