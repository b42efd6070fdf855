package io.rmqgw.routing;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Upstream name servers in RocketMQ's own list syntax ({@code host:port;host:port}), in order,
 * with a shared failover cursor: every request starts at the preferred one, a failure there moves
 * the cursor to the next, and a success sticks wherever it happened.
 */
public final class NamesrvAddresses {

    /** One name server; {@code host} is a name, an IPv4 address or an IPv6 literal (bracketed or bare). */
    public record Address(String host, int port) {

        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    private final List<Address> addresses;
    private final AtomicInteger preferred = new AtomicInteger();

    private NamesrvAddresses(List<Address> addresses) {
        this.addresses = List.copyOf(addresses);
    }

    /**
     * Parses {@code host:port;host:port}, ignoring spaces around entries and empty entries (a trailing ';').
     *
     * @throws IllegalArgumentException naming the first bad entry, a duplicate, or an empty list
     */
    public static NamesrvAddresses parse(String list) {
        if (list == null || list.isBlank()) {
            throw new IllegalArgumentException("name server list is empty; expected host:port;host:port");
        }
        List<String> entries = new ArrayList<>();
        for (String raw : list.split(";", -1)) {
            if (!raw.isBlank()) {
                entries.add(raw.strip());
            }
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("name server list '" + list + "' has no address; expected host:port;host:port");
        }
        return of(entries);
    }

    /** The same rules as {@link #parse}, one {@code host:port} per element. */
    public static NamesrvAddresses of(List<String> entries) {
        Objects.requireNonNull(entries, "entries");
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("name server list is empty; expected host:port;host:port");
        }
        List<Address> parsed = new ArrayList<>(entries.size());
        Set<String> seen = new HashSet<>();
        for (String entry : entries) {
            Address address = parseEntry(entry == null ? "" : entry.strip());
            if (!seen.add(address.toString())) {
                throw new IllegalArgumentException("name server address '" + entry + "' is listed twice");
            }
            parsed.add(address);
        }
        return new NamesrvAddresses(parsed);
    }

    public List<Address> all() {
        return addresses;
    }

    public int size() {
        return addresses.size();
    }

    public Address get(int index) {
        return addresses.get(Objects.checkIndex(index, addresses.size()));
    }

    public int preferredIndex() {
        return preferred.get();
    }

    public Address preferred() {
        return addresses.get(preferred.get());
    }

    /** Indexes to try for one request: the preferred one first, then the rest in list order, wrapping. */
    public List<Integer> failoverOrder() {
        int start = preferred.get();
        List<Integer> order = new ArrayList<>(addresses.size());
        for (int n = 0; n < addresses.size(); n++) {
            order.add((start + n) % addresses.size());
        }
        return order;
    }

    /**
     * Moves the cursor past {@code index} if it is still the preferred one; concurrent reports of the
     * same failure move it once.
     */
    public void markFailed(int index) {
        Objects.checkIndex(index, addresses.size());
        preferred.compareAndSet(index, (index + 1) % addresses.size());
    }

    /** Makes {@code index} the preferred name server: it answered. */
    public void markGood(int index) {
        Objects.checkIndex(index, addresses.size());
        preferred.set(index);
    }

    /** RocketMQ's list syntax, as a client's namesrvAddr would spell it. */
    @Override
    public String toString() {
        return addresses.stream().map(Address::toString).collect(Collectors.joining(";"));
    }

    private static Address parseEntry(String entry) {
        int colon = entry.lastIndexOf(':');
        if (entry.isEmpty() || colon < 0) {
            throw bad(entry, "expected host:port");
        }
        String host = entry.substring(0, colon);
        String portText = entry.substring(colon + 1);
        if (host.isEmpty()) {
            throw bad(entry, "host is missing");
        }
        if (portText.isEmpty() || portText.length() > 5 || !portText.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw bad(entry, "port '" + portText + "' is not a number");
        }
        int port = Integer.parseInt(portText);
        if (port < 1 || port > 65535) {
            throw bad(entry, "port " + port + " is outside 1-65535");
        }
        if (!validHost(host)) {
            throw bad(entry, "host '" + host + "' is not a host name, IPv4 or IPv6 address");
        }
        return new Address(host, port);
    }

    private static boolean validHost(String host) {
        if (host.startsWith("[") || host.endsWith("]")) {
            return host.length() > 2 && host.startsWith("[") && host.endsWith("]")
                && validIpv6(host.substring(1, host.length() - 1));
        }
        if (host.indexOf(':') >= 0) {
            // RocketMQ splits at the last ':' (NetworkUtil.string2SocketAddress), so bare IPv6 works there too.
            return validIpv6(host);
        }
        if (host.startsWith(".") || host.endsWith(".") || host.contains("..") || host.startsWith("-")) {
            return false;
        }
        return host.chars().allMatch(c -> c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
            || c == '.' || c == '-' || c == '_');
    }

    private static boolean validIpv6(String s) {
        int zone = s.indexOf('%');
        String address = zone >= 0 ? s.substring(0, zone) : s;
        return address.indexOf(':') >= 0 && (zone < 0 || zone < s.length() - 1)
            && address.chars().allMatch(c -> c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
            || c == ':' || c == '.');
    }

    private static IllegalArgumentException bad(String entry, String why) {
        return new IllegalArgumentException("bad name server address '" + entry + "': " + why
            + " (expected host:port;host:port)");
    }
}
