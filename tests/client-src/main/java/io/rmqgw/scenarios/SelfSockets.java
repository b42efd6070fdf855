package io.rmqgw.scenarios;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * This process's TCP connections (Linux /proc), reported in the summary: the runner also samples
 * them from outside, but a connection that lives for a few milliseconds between two samples
 * would otherwise go unseen. Empty where /proc is unavailable.
 */
final class SelfSockets {

    private SelfSockets() {
    }

    static List<Json.Obj> connections() {
        List<Json.Obj> result = new ArrayList<>();
        try {
            Set<String> inodes = new HashSet<>();
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(Paths.get("/proc/self/fd"))) {
                for (Path fd : fds) {
                    try {
                        String target = Files.readSymbolicLink(fd).toString();
                        if (target.startsWith("socket:[")) {
                            inodes.add(target.substring(8, target.length() - 1));
                        }
                    } catch (IOException e) {
                        // closed meanwhile
                    }
                }
            }
            for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
                Path p = Paths.get(table);
                if (!Files.exists(p)) {
                    continue;
                }
                List<String> lines = Files.readAllLines(p);
                for (int i = 1; i < lines.size(); i++) {
                    String[] f = lines.get(i).trim().split("\\s+");
                    if (f.length < 10 || !inodes.contains(f[9]) || "0A".equalsIgnoreCase(f[3])) {
                        continue;
                    }
                    result.add(Json.obj().put("local", endpoint(f[1])).put("remote", endpoint(f[2])).put("st", f[3]));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc not readable: nothing to report
        }
        return result;
    }

    /** {@code HEXADDR:HEXPORT}, addresses as 32-bit words in host (little-endian) order. */
    private static String endpoint(String hex) throws IOException {
        String[] parts = hex.split(":");
        String a = parts[0];
        byte[] bytes = new byte[a.length() / 2];
        for (int word = 0; word < a.length() / 8; word++) {
            for (int b = 0; b < 4; b++) {
                int from = word * 8 + (3 - b) * 2;
                bytes[word * 4 + b] = (byte) Integer.parseInt(a.substring(from, from + 2), 16);
            }
        }
        if (bytes.length == 16 && isV4Mapped(bytes)) {
            bytes = new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]};
        }
        return InetAddress.getByAddress(bytes).getHostAddress() + ":" + Integer.parseInt(parts[1], 16);
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
