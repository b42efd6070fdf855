package io.rmqgw.gateway.net;

import java.net.InetSocketAddress;
import java.net.SocketAddress;

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

    /** Parses {@code host:port}; the host is resolved when connecting. */
    public static InetSocketAddress parse(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("not host:port: " + hostPort);
        }
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
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
