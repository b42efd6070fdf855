package io.rmqgw.gateway.config;

import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Arrays;

/**
 * An address range as configuration writes it: an IP literal ({@code 10.1.2.3}, {@code ::1}) or a CIDR range
 * ({@code 10.1.0.0/16}, {@code fd00::/8}), never a host name (nothing is looked up). An IPv4-mapped IPv6 address
 * counts as its IPv4 one. {@code admin-requests.allow-from} and {@code rate-limits.per-address} take it.
 *
 * @param network      the range's first address, 4 bytes for IPv4, 16 for IPv6
 * @param prefixLength how many leading bits of {@code network} an address must share
 */
public record AddressRange(byte[] network, int prefixLength) {

    /** {@code ip} or {@code ip/bits}; {@link IllegalArgumentException} saying what is wrong otherwise. */
    public static AddressRange parse(String text) {
        int slash = text.indexOf('/');
        String ip = slash < 0 ? text : text.substring(0, slash);
        byte[] bytes = NetUtil.createByteArrayFromIpAddressString(ip);
        if (bytes == null) {
            throw new IllegalArgumentException("must be an IP address or a CIDR range such as 10.1.0.0/16 (host names are"
                + " not looked up), was '" + text + "'");
        }
        int max = bytes.length * 8;
        int prefix = max;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(text.substring(slash + 1));
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > max) {
                throw new IllegalArgumentException("the prefix length must be between 0 and " + max + ", was '" + text
                    + "'");
            }
        }
        return new AddressRange(bytes, prefix);
    }

    /** Whether {@code address} (4 or 16 bytes; null: none) lies in this range. */
    public boolean contains(byte[] address) {
        byte[] a = address;
        if (a == null) {
            return false;
        }
        if (a.length == 16 && network.length == 4 && isMappedIpv4(a)) {
            a = Arrays.copyOfRange(a, 12, 16);
        }
        if (a.length != network.length) {
            return false;
        }
        int full = prefixLength / 8;
        for (int i = 0; i < full; i++) {
            if (a[i] != network[i]) {
                return false;
            }
        }
        int rest = prefixLength % 8;
        if (rest == 0) {
            return true;
        }
        int mask = (0xFF << (8 - rest)) & 0xFF;
        return (a[full] & mask) == (network[full] & mask);
    }

    public boolean contains(InetAddress address) {
        return contains(address.getAddress());
    }

    /** Whether {@code address} is an {@link InetSocketAddress} in this range. */
    public boolean contains(SocketAddress address) {
        return address instanceof InetSocketAddress in && in.getAddress() != null && contains(in.getAddress());
    }

    private static boolean isMappedIpv4(byte[] a) {
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return (a[10] & 0xFF) == 0xFF && (a[11] & 0xFF) == 0xFF;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AddressRange r && r.prefixLength == prefixLength && Arrays.equals(r.network, network);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(network) + prefixLength;
    }

    @Override
    public String toString() {
        return NetUtil.bytesToIpAddress(network) + "/" + prefixLength;
    }
}
