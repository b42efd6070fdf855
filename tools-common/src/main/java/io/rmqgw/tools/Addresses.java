package io.rmqgw.tools;

import java.util.ArrayList;
import java.util.List;

/** Name-server lists as RocketMQ writes them: {@code host:port}, several separated by {@code ;}. */
public final class Addresses {

    private Addresses() {
    }

    /**
     * Parses {@code text} ({@code " a:1 ; b:2 "}; blank entries are ignored) and returns it normalized
     * ({@code "a:1;b:2"}); throws IllegalArgumentException, starting with {@code what}, when an entry is not
     * {@code host:port} ({@link HostPort}), or when there is none.
     */
    public static String parse(String what, String text) {
        List<String> entries = new ArrayList<>();
        for (String part : (text == null ? "" : text).split(";")) {
            String a = part.trim();
            if (a.isEmpty()) {
                continue;
            }
            try {
                entries.add(HostPort.parse("", a).toString());
            } catch (InvalidValueException e) {
                throw new InvalidValueException(what, "expected host:port[;host:port...], was '" + text + "': "
                    + e.reason());
            }
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException(what + ": needs at least one host:port");
        }
        return String.join(";", entries);
    }
}
