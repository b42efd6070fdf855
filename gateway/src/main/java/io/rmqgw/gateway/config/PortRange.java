package io.rmqgw.gateway.config;

/** An inclusive port range for the per-broker listeners (three ports per broker: VIP, spare, main). */
public record PortRange(int from, int to) {

    public PortRange {
        if (from < 1 || to > 65535 || from > to) {
            throw new ConfigException("broker-ports", "must be FROM-TO within 1-65535, was " + from + "-" + to);
        }
        if (to - from + 1 < 3) {
            throw new ConfigException("broker-ports", "needs at least 3 ports (one broker), was " + from + "-" + to);
        }
    }

    /** Parses {@code FROM-TO}, e.g. {@code 20900-20999}; {@code path} names the setting in the error. */
    public static PortRange parse(String path, String text) {
        String s = text == null ? "" : text.trim();
        int dash = s.indexOf('-');
        if (dash <= 0 || dash == s.length() - 1) {
            throw new ConfigException(path, "must be FROM-TO, e.g. 20900-20999, was '" + text + "'");
        }
        String a = s.substring(0, dash).trim();
        String b = s.substring(dash + 1).trim();
        if (!isPortNumber(a) || !isPortNumber(b)) {
            throw new ConfigException(path, "must be FROM-TO with port numbers, e.g. 20900-20999, was '" + text + "'");
        }
        try {
            return new PortRange(Integer.parseInt(a), Integer.parseInt(b));
        } catch (ConfigException e) {
            throw new ConfigException(path, e.reason());
        }
    }

    private static boolean isPortNumber(String s) {
        return !s.isEmpty() && s.length() <= 5 && s.chars().allMatch(Character::isDigit);
    }

    public boolean contains(int port) {
        return port >= from && port <= to;
    }

    @Override
    public String toString() {
        return from + "-" + to;
    }
}
