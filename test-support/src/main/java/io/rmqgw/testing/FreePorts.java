package io.rmqgw.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports below the kernel's ephemeral range (32768+ on Linux), so that outgoing
 * connections never take a port a test wants to (re)bind, e.g. a restarted broker's. Ports handed
 * out once are not handed out again by this JVM.
 */
public final class FreePorts {

    private static final int FROM = 20_000;
    private static final int TO = 32_000;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private FreePorts() {
    }

    /** One free port. */
    public static int port() {
        return block(0, 0);
    }

    /**
     * A broker port P such that P-2 (the VIP/"fast" port) and P+1 (the HA port of stock brokers,
     * kept free so a stock broker could take the same ports) are free too.
     */
    public static int brokerPort() {
        return block(2, 1);
    }

    /** The first of {@code count} consecutive free ports. */
    public static int range(int count) {
        return block(0, count - 1);
    }

    private static int block(int below, int above) {
        for (int attempt = 0; attempt < 500; attempt++) {
            int p = ThreadLocalRandom.current().nextInt(FROM + below, TO - above);
            boolean free = true;
            for (int q = p - below; q <= p + above && free; q++) {
                free = !HANDED_OUT.contains(q) && isFree(q);
            }
            if (free) {
                boolean claimed = true;
                for (int q = p - below; q <= p + above; q++) {
                    claimed &= HANDED_OUT.add(q);
                }
                if (claimed) {
                    return p;
                }
            }
        }
        throw new IllegalStateException("no free loopback port block found in " + FROM + "-" + TO);
    }

    /** Whether 127.0.0.1:{@code port} can be bound right now. */
    public static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
