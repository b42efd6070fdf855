package io.rmqgw.routing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * Upstream name servers in RocketMQ's own list syntax ({@code host:port;host:port}), in order,
 * with a shared failover cursor: every request starts at the preferred one, a failure there moves
 * the cursor to the next, and a success sticks wherever it happened.
 *
 * <p>It also remembers, per name server, what its dials did lately, so that one dial's wait is not paid
 * again by the next: a name server whose connect failed less than {@link #FAILED_BACKOFF} ago, or whose
 * dial has been under way for {@link #SLOW_DIAL} or more without an outcome, is put after the others in
 * {@link #failoverOrder} (still tried, last, so a list of nothing but such ones is still dialed in order).
 */
public final class NamesrvAddresses {

    /** How long a name server whose connect failed is tried after the others (a success ends it sooner). */
    public static final Duration FAILED_BACKOFF = Duration.ofSeconds(30);
    /** How long a dial may be under way before new dials try the other name servers first. */
    public static final Duration SLOW_DIAL = Duration.ofMillis(500);
    /**
     * A dial under way longer than this is no longer believed (its outcome was never reported, e.g. its connection
     * was abandoned): past every sensible connect timeout.
     */
    static final Duration FORGOTTEN_DIAL = Duration.ofMinutes(5);

    /** One name server; {@code host} is a name, an IPv4 address or an IPv6 literal (bracketed or bare). */
    public record Address(String host, int port) {

        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    private final List<Address> addresses;
    private final AtomicInteger preferred = new AtomicInteger();
    /** Per address, what its dials did lately; guarded by {@code this} (touched once per dial, never per request). */
    private final Health[] health;
    private LongSupplier clock = System::nanoTime;

    /** One name server's recent dials. */
    private static final class Health {
        /** When the last connect failed; meaningful while {@code failed}. */
        long failedAt;
        boolean failed;
        /** Dials started and not reported yet, and when the oldest of them (or the last report) happened. */
        int dialing;
        long dialingSince;
    }

    private NamesrvAddresses(List<Address> addresses) {
        this.addresses = List.copyOf(addresses);
        this.health = new Health[addresses.size()];
        for (int i = 0; i < health.length; i++) {
            health[i] = new Health();
        }
    }

    /** Tests: the nanosecond clock the back-off and slow dials are measured with. */
    synchronized void useClock(LongSupplier nanoClock) {
        this.clock = nanoClock;
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

    /**
     * Indexes to try for one request: the preferred one first, then the rest in list order, wrapping; those that
     * failed to connect lately or whose dial is slow (see the class) after the others, the one whose failure is
     * oldest first (a slow dial counts as failing now).
     */
    public synchronized List<Integer> failoverOrder() {
        long now = clock.getAsLong();
        int start = preferred.get();
        List<Integer> order = new ArrayList<>(addresses.size());
        List<Integer> later = new ArrayList<>(0);
        for (int n = 0; n < addresses.size(); n++) {
            int index = (start + n) % addresses.size();
            (suspect(health[index], now) ? later : order).add(index);
        }
        // stable: equal times keep the cursor's order
        later.sort(Comparator.comparingLong(index -> suspectSince(health[index], now) - now));
        order.addAll(later);
        return order;
    }

    private static boolean suspect(Health h, long now) {
        return recentlyFailed(h, now) || slowDial(h, now);
    }

    /** When a suspect one went bad: its failure, or now for a dial that is slow now. */
    private static long suspectSince(Health h, long now) {
        return slowDial(h, now) ? now : h.failedAt;
    }

    private static boolean recentlyFailed(Health h, long now) {
        return h.failed && now - h.failedAt < FAILED_BACKOFF.toNanos();
    }

    private static boolean slowDial(Health h, long now) {
        long waited = now - h.dialingSince;
        return h.dialing > 0 && waited >= SLOW_DIAL.toNanos() && waited < FORGOTTEN_DIAL.toNanos();
    }

    /** A dial to {@code index} starts; its outcome is to be reported with {@link #markGood} or {@link #markFailed}. */
    public synchronized void dialing(int index) {
        Objects.checkIndex(index, addresses.size());
        Health h = health[index];
        long now = clock.getAsLong();
        if (h.dialing == 0 || now - h.dialingSince >= FORGOTTEN_DIAL.toNanos()) {
            h.dialing = 0;
            h.dialingSince = now;
        }
        h.dialing++;
    }

    /**
     * Moves the cursor past {@code index} if it is still the preferred one; concurrent reports of the
     * same failure move it once. {@code index} is tried after the others for {@link #FAILED_BACKOFF}.
     */
    public synchronized void markFailed(int index) {
        Objects.checkIndex(index, addresses.size());
        preferred.compareAndSet(index, (index + 1) % addresses.size());
        Health h = health[index];
        h.failed = true;
        h.failedAt = clock.getAsLong();
        settled(h);
    }

    /** Makes {@code index} the preferred name server: it answered (or connected); ends its back-off. */
    public synchronized void markGood(int index) {
        Objects.checkIndex(index, addresses.size());
        preferred.set(index);
        Health h = health[index];
        h.failed = false;
        settled(h);
    }

    /** One dial reported: the ones still under way are timed from now. */
    private void settled(Health h) {
        h.dialing = Math.max(0, h.dialing - 1);
        h.dialingSince = clock.getAsLong();
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
