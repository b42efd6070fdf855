package io.rmqgw.gateway.net;

import io.netty.util.NetUtil;
import io.rmqgw.tools.HostPort;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;

/** Address strings as RocketMQ writes them ({@code ip:port}), computed once per connection. */
public final class Addresses {

    private Addresses() {
    }

    /** {@code ip:port} of a socket address, without the leading slash or host name. */
    public static String of(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            String host = inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
            return host + ':' + inet.getPort();
        }
        return String.valueOf(address);
    }

    /**
     * Parses {@code host:port} ({@link HostPort}, the one syntax) without a DNS lookup: an IP literal (IPv4, or IPv6 plain or in brackets) gives a
     * resolved address, a host name an unresolved one ({@link InetSocketAddress#getAddress()} null), which the
     * dialer resolves asynchronously ({@link Transport#resolver()}). Malformed text is refused with an
     * {@link IllegalArgumentException} saying what is wrong.
     */
    public static InetSocketAddress parse(String hostPort) {
        HostPort parsed = HostPort.parse("", hostPort);
        int port = parsed.port();
        String host = parsed.bareHost();
        if (NetUtil.isValidIpV4Address(host) || NetUtil.isValidIpV6Address(host)) {
            try {
                // a literal: the JDK parses it without asking DNS (a scope such as %eth0 is a local interface)
                return new InetSocketAddress(InetAddress.getByName(host), port);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("bad IP address in '" + hostPort + "': " + e.getMessage(), e);
            }
        }
        if (!host.equals(parsed.host()) || host.indexOf(':') >= 0) {
            throw new IllegalArgumentException("not host:port (nor [IPv6]:port): '" + hostPort + "'");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }

    /** A short reason for a failed connect: the exception's message without the stack. */
    public static String describe(Throwable cause) {
        if (cause == null) {
            return "unknown error";
        }
        String message = cause.getMessage();
        return message == null ? cause.getClass().getSimpleName() : message;
    }
}
