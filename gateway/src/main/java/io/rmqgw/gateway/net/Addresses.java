package io.rmqgw.gateway.net;

import io.netty.util.NetUtil;
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
     * Parses {@code host:port} without a DNS lookup: an IP literal (IPv4, or IPv6 plain or in brackets) gives a
     * resolved address, a host name an unresolved one ({@link InetSocketAddress#getAddress()} null), which the
     * dialer resolves asynchronously ({@link Transport#resolver()}). Malformed text is refused with an
     * {@link IllegalArgumentException} saying what is wrong.
     */
    public static InetSocketAddress parse(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException("not host:port: '" + hostPort + "'");
        }
        String portText = hostPort.substring(colon + 1);
        int port = portText.length() <= 5 && portText.chars().allMatch(c -> c >= '0' && c <= '9')
            ? Integer.parseInt(portText) : -1;
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port is not a number from 1 to 65535 in '" + hostPort + "'");
        }
        String host = hostPort.substring(0, colon);
        boolean bracketed = host.startsWith("[") && host.endsWith("]");
        if (bracketed) {
            host = host.substring(1, host.length() - 1);
        }
        if (NetUtil.isValidIpV4Address(host) || NetUtil.isValidIpV6Address(host)) {
            try {
                // a literal: the JDK parses it without asking DNS (a scope such as %eth0 is a local interface)
                return new InetSocketAddress(InetAddress.getByName(host), port);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("bad IP address in '" + hostPort + "': " + e.getMessage(), e);
            }
        }
        if (bracketed || host.isEmpty() || host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
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
