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
     * {@code host:port} with a port from 1 to 65535, or when there is none.
     */
    public static String parse(String what, String text) {
        List<String> entries = new ArrayList<>();
        for (String part : (text == null ? "" : text).split(";")) {
            String a = part.trim();
            if (a.isEmpty()) {
                continue;
            }
            int colon = a.lastIndexOf(':');
            if (colon <= 0 || colon == a.length() - 1 || !port(a.substring(colon + 1))) {
                throw new IllegalArgumentException(what + ": expected host:port[;host:port...], was '" + text + "'");
            }
            entries.add(a);
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException(what + ": needs at least one host:port");
        }
        return String.join(";", entries);
    }

    private static boolean port(String text) {
        if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(Character::isDigit)) {
            return false;
        }
        int port = Integer.parseInt(text);
        return port > 0 && port < 65536;
    }
}
