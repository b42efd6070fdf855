package io.rmqgw.it.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Which TCP sockets a process holds, from the outside (Linux only): the socket inodes behind
 * {@code /proc/<pid>/fd/*} ("socket:[inode]") joined with {@code /proc/net/tcp} and
 * {@code /proc/net/tcp6}. Works for any process this user may inspect (our own children).
 */
public final class ProcSockets {

    private static final Map<String, String> STATES = Map.ofEntries(
        Map.entry("01", "ESTABLISHED"), Map.entry("02", "SYN_SENT"), Map.entry("03", "SYN_RECV"),
        Map.entry("04", "FIN_WAIT1"), Map.entry("05", "FIN_WAIT2"), Map.entry("06", "TIME_WAIT"),
        Map.entry("07", "CLOSE"), Map.entry("08", "CLOSE_WAIT"), Map.entry("09", "LAST_ACK"),
        Map.entry("0A", "LISTEN"), Map.entry("0B", "CLOSING"), Map.entry("0C", "NEW_SYN_RECV"));

    private ProcSockets() {
    }

    /**
     * One TCP socket. Addresses are textual IPs; IPv4-mapped IPv6 ({@code ::ffff:127.0.0.1}, what
     * Java's dual-stack sockets show in tcp6) is reported as plain IPv4.
     */
    public record TcpConnection(String localAddress, int localPort, String remoteAddress, int remotePort,
                                String state, long inode) {
        public String local() {
            return localAddress + ":" + localPort;
        }

        public String remote() {
            return remoteAddress + ":" + remotePort;
        }

        public boolean listening() {
            return "LISTEN".equals(state);
        }

        /** Same endpoints, without the state (a connection seen as SYN_SENT then ESTABLISHED counts once). */
        public String endpoints() {
            return local() + "->" + remote();
        }

        @Override
        public String toString() {
            return local() + " -> " + remote() + " " + state;
        }
    }

    /** The name of a /proc/net/tcp state code ("01" is ESTABLISHED). */
    static String stateName(String hex) {
        return STATES.getOrDefault(hex.toUpperCase(), hex);
    }

    /** Inodes of the sockets among {@code pid}'s open file descriptors (empty once it exited). */
    public static Set<Long> socketInodes(long pid) throws IOException {
        Set<Long> inodes = new HashSet<>();
        Path fdDir = Paths.get("/proc", Long.toString(pid), "fd");
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(fdDir)) {
            for (Path fd : fds) {
                String target;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                } catch (NoSuchFileException e) {
                    continue; // closed while we listed
                } catch (IOException e) {
                    continue;
                }
                if (target.startsWith("socket:[") && target.endsWith("]")) {
                    inodes.add(Long.parseLong(target.substring(8, target.length() - 1)));
                }
            }
        } catch (NoSuchFileException e) {
            return inodes; // exited
        }
        return inodes;
    }

    /** Every TCP socket of this network namespace (IPv4 and IPv6 tables). */
    public static List<TcpConnection> tcpTable() throws IOException {
        List<TcpConnection> all = new ArrayList<>();
        parse(Paths.get("/proc/net/tcp"), all);
        parse(Paths.get("/proc/net/tcp6"), all);
        return all;
    }

    /** {@code pid}'s TCP sockets, listeners included. */
    public static Set<TcpConnection> socketsOf(long pid) throws IOException {
        Set<Long> inodes = socketInodes(pid);
        if (inodes.isEmpty()) {
            return Set.of();
        }
        Set<TcpConnection> result = new LinkedHashSet<>();
        for (TcpConnection c : tcpTable()) {
            if (c.inode() != 0 && inodes.contains(c.inode())) {
                result.add(c);
            }
        }
        return result;
    }

    /** {@code pid}'s connections (every state but LISTEN). */
    public static Set<TcpConnection> connectionsOf(long pid) throws IOException {
        return socketsOf(pid).stream().filter(c -> !c.listening()).collect(Collectors.toCollection(LinkedHashSet::new));
    }

    /** {@code pid}'s listening sockets. */
    public static Set<TcpConnection> listenersOf(long pid) throws IOException {
        return socketsOf(pid).stream().filter(TcpConnection::listening)
            .collect(Collectors.toCollection(LinkedHashSet::new));
    }

    /** Remote ports {@code pid} is connected (or connecting) to. */
    public static Set<Integer> remotePortsOf(long pid) throws IOException {
        return connectionsOf(pid).stream().map(TcpConnection::remotePort).collect(Collectors.toCollection(TreeSet::new));
    }

    static void parse(Path table, List<TcpConnection> into) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(table);
        } catch (NoSuchFileException e) {
            return; // no IPv6
        }
        for (int i = 1; i < lines.size(); i++) {
            TcpConnection c = parseLine(lines.get(i));
            if (c != null) {
                into.add(c);
            }
        }
    }

    /** Parses one data line of /proc/net/tcp or tcp6; {@code null} for a line it does not understand. */
    static TcpConnection parseLine(String line) {
        String[] f = line.trim().split("\\s+");
        if (f.length < 10 || !f[0].endsWith(":")) {
            return null;
        }
        String[] local = f[1].split(":");
        String[] remote = f[2].split(":");
        if (local.length != 2 || remote.length != 2) {
            return null;
        }
        try {
            return new TcpConnection(address(local[0]), Integer.parseInt(local[1], 16), address(remote[0]),
                Integer.parseInt(remote[1], 16), stateName(f[3]), Long.parseLong(f[9]));
        } catch (RuntimeException | UnknownHostException e) {
            return null;
        }
    }

    /**
     * The kernel prints addresses as 32-bit words in host byte order (little-endian on x86 and
     * arm64): 8 hex digits for IPv4, 4 such words for IPv6.
     */
    static String address(String hex) throws UnknownHostException {
        if (hex.length() != 8 && hex.length() != 32) {
            throw new IllegalArgumentException("address " + hex);
        }
        byte[] bytes = new byte[hex.length() / 2];
        for (int word = 0; word < hex.length() / 8; word++) {
            for (int b = 0; b < 4; b++) {
                int from = word * 8 + (3 - b) * 2;
                bytes[word * 4 + b] = (byte) Integer.parseInt(hex.substring(from, from + 2), 16);
            }
        }
        if (bytes.length == 16 && isV4Mapped(bytes)) {
            bytes = new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]};
        }
        return InetAddress.getByAddress(bytes).getHostAddress();
    }

    private static boolean isV4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return b[10] == (byte) 0xFF && b[11] == (byte) 0xFF;
    }
}
