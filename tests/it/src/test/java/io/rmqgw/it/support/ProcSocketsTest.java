package io.rmqgw.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProcSocketsTest {

    @Test
    void parsesIpv4Line() {
        ProcSockets.TcpConnection c = ProcSockets.parseLine(
            "   3: 0100007F:D431 0100007F:2694 01 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000 20 4");
        assertNotNull(c);
        assertEquals("127.0.0.1", c.localAddress());
        assertEquals(0xD431, c.localPort());
        assertEquals("127.0.0.1", c.remoteAddress());
        assertEquals(9876, c.remotePort());
        assertEquals("ESTABLISHED", c.state());
        assertEquals(123456L, c.inode());
    }

    @Test
    void parsesIpv4MappedIpv6LineAsIpv4() {
        ProcSockets.TcpConnection c = ProcSockets.parseLine(
            "   0: 0000000000000000FFFF00000100007F:2694 00000000000000000000000000000000:0000 0A 00000000:00000000 "
                + "00:00000000 00000000     0        0 777 1 0000 100 0 0 10 0");
        assertNotNull(c);
        assertEquals("127.0.0.1", c.localAddress());
        assertEquals(9876, c.localPort());
        assertEquals("LISTEN", c.state());
        assertTrue(c.listening());
    }

    @Test
    void ignoresHeaderAndGarbage() {
        assertNull(ProcSockets.parseLine("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt"));
        assertNull(ProcSockets.parseLine(""));
    }

    @Test
    void seesThisJvmsOwnConnection() throws Exception {
        long pid = ProcessHandle.current().pid();
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket client = new Socket()) {
            client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
            try (Socket accepted = server.accept()) {
                Set<Integer> remotes = ProcSockets.remotePortsOf(pid);
                assertTrue(remotes.contains(server.getLocalPort()), () -> "remote ports " + remotes);
                assertTrue(ProcSockets.listenersOf(pid).stream().anyMatch(l -> l.localPort() == server.getLocalPort()));
                assertTrue(accepted.isConnected());
            }
        }
    }
}
