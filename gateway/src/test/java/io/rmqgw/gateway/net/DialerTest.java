package io.rmqgw.gateway.net;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ConnectTimeoutException;
import io.netty.resolver.dns.SingletonDnsServerAddressStreamProvider;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Dialer#tcp}: a host name's lookup counts against the connect timeout. The DNS server here is a UDP socket on
 * loopback that reads nothing, so a lookup would wait for the resolver's own query timeout (5 s by default).
 */
@Timeout(30)
class DialerTest {

    /** Well under the resolver's own 5 s: a dial failing within it was not held by the lookup's timeout. */
    private static final long WELL_UNDER_THE_QUERY_TIMEOUT_MILLIS = 4_000;

    private DatagramSocket silentDns;
    private Transport transport;

    @BeforeEach
    void start() throws Exception {
        silentDns = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        transport = new Transport(1, new SingletonDnsServerAddressStreamProvider(
            (InetSocketAddress) silentDns.getLocalSocketAddress()));
    }

    @AfterEach
    void stop() {
        transport.close();
        silentDns.close();
    }

    @Test
    void aLookupThatGetsNoAnswerFailsTheDialOnceTheConnectTimeoutPassed() {
        String target = "namesrv-1.rmqgw.invalid:9876";
        ChannelFuture dial = Dialer.tcp(transport).dial(target, transport.workers().next(), 300,
            new ChannelInboundHandlerAdapter());

        assertTrue(dial.awaitUninterruptibly(WELL_UNDER_THE_QUERY_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS),
            "the dial waited past the connect timeout for the lookup");
        assertFalse(dial.isSuccess());
        assertInstanceOf(ConnectTimeoutException.class, dial.cause(), String.valueOf(dial.cause()));
        String message = dial.cause().getMessage();
        assertTrue(message.contains(target) && message.contains("300 ms") && message.contains("lookup"), message);
        assertTrue(dial.channel().closeFuture().awaitUninterruptibly(WELL_UNDER_THE_QUERY_TIMEOUT_MILLIS),
            "the abandoned channel is closed");
    }

    @Test
    void aNameFromTheHostsFileStillConnectsThroughTheBoundedDial() throws Exception {
        try (ServerSocket server = new ServerSocket()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            ChannelFuture dial = Dialer.tcp(transport).dial("localhost:" + server.getLocalPort(),
                transport.workers().next(), 3_000, new ChannelInboundHandlerAdapter());
            try (Socket accepted = server.accept()) {
                assertTrue(dial.awaitUninterruptibly(WELL_UNDER_THE_QUERY_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS));
                assertTrue(dial.isSuccess(), String.valueOf(dial.cause()));
                assertTrue(dial.channel().isActive());
            } finally {
                dial.channel().close().awaitUninterruptibly();
            }
        }
    }
}
