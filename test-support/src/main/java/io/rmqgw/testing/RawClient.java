package io.rmqgw.testing;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** A remoting client on a plain blocking socket: writes raw bytes, reads whole frames, every read bounded. */
public final class RawClient implements AutoCloseable {

    public static final Duration WAIT = Duration.ofSeconds(5);

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    private RawClient(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = new DataInputStream(socket.getInputStream());
    }

    public static RawClient connect(int port) throws IOException {
        Socket socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress("127.0.0.1", port), (int) WAIT.toMillis());
        return new RawClient(socket);
    }

    /** A TLS connection (trusting any certificate), handshake done. */
    public static RawClient connectTls(int port) throws IOException {
        Socket plain = new Socket();
        plain.setTcpNoDelay(true);
        plain.connect(new InetSocketAddress("127.0.0.1", port), (int) WAIT.toMillis());
        javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) TestCerts.trustAll().getSocketFactory()
            .createSocket(plain, "127.0.0.1", port, true);
        tls.setSoTimeout((int) WAIT.toMillis());
        tls.startHandshake();
        return new RawClient(tls);
    }

    public void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** The next whole frame, within {@link #WAIT}. */
    public Wire.Frame read() throws IOException {
        return read(WAIT);
    }

    public Wire.Frame read(Duration timeout) throws IOException {
        return Wire.parse(readBytes(timeout));
    }

    /** The next whole frame's exact bytes, length prefix included. */
    public byte[] readBytes(Duration timeout) throws IOException {
        socket.setSoTimeout((int) Math.max(1, timeout.toMillis()));
        try {
            int length = in.readInt();
            if (length < 4 || length > 64 * 1024 * 1024) {
                throw new AssertionError("implausible frame length " + length);
            }
            byte[] whole = new byte[4 + length];
            whole[0] = (byte) (length >>> 24);
            whole[1] = (byte) (length >>> 16);
            whole[2] = (byte) (length >>> 8);
            whole[3] = (byte) length;
            in.readFully(whole, 4, length);
            return whole;
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no frame within " + timeout.toMillis() + " ms", e);
        } catch (EOFException e) {
            throw new AssertionError("connection closed while a frame was expected", e);
        }
    }

    /**
     * Reads frames until one matches, returning every frame read (the match last); fails when none
     * arrives within {@code timeout} or the connection closes.
     */
    public List<Wire.Frame> readUntil(Predicate<Wire.Frame> match, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Wire.Frame> seen = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            Wire.Frame f = read(Duration.ofNanos(left));
            seen.add(f);
            if (match.test(f)) {
                return seen;
            }
        }
        throw new AssertionError("no matching frame within " + timeout.toMillis() + " ms; saw " + seen);
    }

    /** Passes when the peer closes the connection (EOF or reset) within {@code timeout} without sending anything more. */
    public void assertClosedBy(Duration timeout) throws IOException {
        socket.setSoTimeout((int) Math.max(1, timeout.toMillis()));
        InputStream raw = in;
        int b;
        try {
            b = raw.read();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("connection still open after " + timeout.toMillis() + " ms", e);
        } catch (SocketException e) {
            return; // reset: closed with unread input on the gateway side
        }
        if (b != -1) {
            byte[] more = new byte[Math.max(0, Math.min(in.available(), 256))];
            int n = in.read(more);
            throw new AssertionError("expected the connection to close, got more bytes: first 0x"
                + Integer.toHexString(b) + " and " + n + " more");
        }
    }

    public void assertClosedBy() throws IOException {
        assertClosedBy(WAIT);
    }

    public int localPort() {
        return socket.getLocalPort();
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
