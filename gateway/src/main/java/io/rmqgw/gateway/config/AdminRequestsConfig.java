package io.rmqgw.gateway.config;

import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Which admin requests the gateway relays (docs/ADMIN-REQUESTS.md classifies every request code). Client traffic,
 * admin reads and topic/group creation and updates always pass; codes that delete, disable or reconfigure, read
 * server or ACL configuration, or are cluster-internal, and codes the gateway does not know, are answered
 * NO_PERMISSION (16) and never reach a name server or broker, unless allowed here. Applied at once on a reload.
 *
 * @param allowAll          every code passes, from every address (the gateway as an open admin port, as before)
 * @param allowFrom         source addresses (an IP, or a CIDR such as {@code 10.1.0.0/16}) from which every code
 *                          passes; literal addresses only, never looked up
 * @param allowUnknownCodes codes neither rocketmq-remoting 5.4.0 nor 4.9.7 defines pass from every address (a newer
 *                          RocketMQ's client codes, say); the classified refused codes stay refused
 */
public record AdminRequestsConfig(Boolean allowAll, List<String> allowFrom, Boolean allowUnknownCodes) {

    /** The default: refused codes refused from everywhere. */
    public static final AdminRequestsConfig DEFAULT = new AdminRequestsConfig(null, null, null);

    public AdminRequestsConfig {
        allowAll = Objects.requireNonNullElse(allowAll, Boolean.FALSE);
        allowUnknownCodes = Objects.requireNonNullElse(allowUnknownCodes, Boolean.FALSE);
        List<String> entries = new ArrayList<>();
        List<String> given = allowFrom == null ? List.of() : allowFrom;
        for (int i = 0; i < given.size(); i++) {
            String path = "admin-requests.allow-from[" + i + "]";
            if (given.get(i) == null || given.get(i).isBlank()) {
                throw new ConfigException(path, "must be an IP address or a CIDR such as 10.1.0.0/16");
            }
            String entry = given.get(i).trim();
            SourceRange.parse(path, entry);
            entries.add(entry);
        }
        allowFrom = List.copyOf(entries);
    }

    /** The parsed {@link #allowFrom} entries. */
    public List<SourceRange> allowFromRanges() {
        return allowFrom.stream().map(e -> SourceRange.parse("admin-requests.allow-from", e)).toList();
    }

    /** An address range: {@code prefixLength} leading bits of {@code network} (4 bytes for IPv4, 16 for IPv6). */
    public record SourceRange(byte[] network, int prefixLength) {

        /** {@code ip} or {@code ip/prefix}; {@code path} names the key in errors. */
        public static SourceRange parse(String path, String text) {
            int slash = text.indexOf('/');
            String ip = slash < 0 ? text : text.substring(0, slash);
            byte[] bytes = NetUtil.createByteArrayFromIpAddressString(ip);
            if (bytes == null) {
                throw new ConfigException(path, "must be an IP address or a CIDR such as 10.1.0.0/16 (host names are"
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
                    throw new ConfigException(path, "prefix length must be between 0 and " + max + ", was '" + text + "'");
                }
            }
            return new SourceRange(bytes, prefix);
        }

        /** Whether {@code address} (an IPv4-mapped IPv6 address counts as its IPv4 one) lies in this range. */
        public boolean contains(InetAddress address) {
            byte[] a = address.getAddress();
            if (a.length == 16 && network.length == 4 && isMappedIpv4(a)) {
                a = new byte[] {a[12], a[13], a[14], a[15]};
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
            return o instanceof SourceRange r && r.prefixLength == prefixLength
                && java.util.Arrays.equals(r.network, network);
        }

        @Override
        public int hashCode() {
            return 31 * java.util.Arrays.hashCode(network) + prefixLength;
        }

        @Override
        public String toString() {
            return NetUtil.bytesToIpAddress(network) + "/" + prefixLength;
        }
    }
}
