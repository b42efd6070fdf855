package io.rmqgw.codec.message;

/**
 * Maps the IPv4 address a broker stamps into messages (its store host) to the address clients
 * should see instead, typically the gateway's own listener for that broker. Called once per message
 * on hot paths: implementations must not allocate or block.
 *
 * <p>Addresses are passed and returned as RocketMQ stores them: {@code ip} is the four address bytes
 * as a big-endian int (so 10.0.0.1 is {@code 0x0A000001}), {@code port} the port as an int.
 */
@FunctionalInterface
public interface StoreHostMapper {

    /** What {@link #map} returns for an address it does not know: the address is kept. */
    long UNKNOWN = -1L;

    /** Knows no address: nothing is rewritten. */
    StoreHostMapper NONE = (ip, port) -> UNKNOWN;

    /**
     * The replacement for {@code ip:port} as {@link #pack packed} address, or {@link #UNKNOWN} to keep
     * it. Only {@code -1} means unknown: packed addresses with the top bit of the ip set are negative too.
     */
    long map(int ip, int port);

    /** {@code ip} in the high 32 bits, {@code port} in the low 32 bits. */
    static long pack(int ip, int port) {
        return ((long) ip << 32) | (port & 0xFFFFFFFFL);
    }

    /** The ip of a {@link #pack packed} address. */
    static int ip(long packed) {
        return (int) (packed >>> 32);
    }

    /** The port of a {@link #pack packed} address. */
    static int port(long packed) {
        return (int) packed;
    }

    /** {@code a.b.c.d} as RocketMQ stores it: the four bytes as a big-endian int. */
    static int ipv4(int a, int b, int c, int d) {
        return (a & 0xFF) << 24 | (b & 0xFF) << 16 | (c & 0xFF) << 8 | (d & 0xFF);
    }
}
