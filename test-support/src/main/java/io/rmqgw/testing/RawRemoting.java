package io.rmqgw.testing;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.rocketmq.remoting.exception.RemotingCommandException;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * One blocking loopback connection speaking the remoting protocol by hand: for requests in a chosen
 * header encoding, for reading back the encoding of the answer as it was on the wire, and for
 * writing bytes that are no remoting frame at all. Unlike {@link Admin#invoke} the connection is
 * kept, so several requests (or bad bytes after good ones) share it.
 */
public final class RawRemoting implements AutoCloseable {

    /** How the peer ended the connection, as {@link #awaitClosed} saw it. */
    public enum Closed { EOF, RESET }

    /** A response as it arrived: the serialize type byte of its header and the decoded command. */
    public record Answer(SerializeType wireEncoding, int wireTypeByte, RemotingCommand command) {
        public int code() {
            return command.getCode();
        }

        public String remark() {
            return command.getRemark();
        }

        public String ext(String key) {
            return command.getExtFields() == null ? null : command.getExtFields().get(key);
        }

        @Override
        public String toString() {
            return "Answer[" + wireEncoding + " code " + command.getCode() + " opaque " + command.getOpaque()
                + " remark " + command.getRemark() + " ext " + command.getExtFields() + "]";
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final String address;

    private RawRemoting(Socket socket, String address) throws IOException {
        this.socket = socket;
        this.address = address;
        this.in = new DataInputStream(socket.getInputStream());
    }

    public static RawRemoting connect(String host, int port, Duration timeout) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            s.setSoTimeout((int) timeout.toMillis());
            s.setTcpNoDelay(true);
            return new RawRemoting(s, host + ":" + port);
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    /** {@code host:port}. */
    public static RawRemoting connect(String address, Duration timeout) throws IOException {
        int colon = address.lastIndexOf(':');
        return connect(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)), timeout);
    }

    public static RawRemoting connect(int loopbackPort, Duration timeout) throws IOException {
        return connect("127.0.0.1", loopbackPort, timeout);
    }

    public String address() {
        return address;
    }

    /** {@code ip:port} of this end: what the peer sees as its remote address. */
    public String localEnd() {
        return socket.getLocalAddress().getHostAddress() + ":" + socket.getLocalPort();
    }

    /** The whole frame of {@code command} (length prefix included) in {@code encoding}. */
    public static byte[] frame(RemotingCommand command, SerializeType encoding) {
        command.setSerializeTypeCurrentRPC(encoding);
        ByteBuffer b = command.encode();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return bytes;
    }

    public void write(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
    }

    /** Sends {@code request} in {@code encoding} and reads until the response with its opaque arrives. */
    public Answer invoke(RemotingCommand request, SerializeType encoding) throws IOException {
        write(frame(request, encoding));
        while (true) {
            Answer a = readFrame();
            if (a.command().isResponseType() && a.command().getOpaque() == request.getOpaque()) {
                return a;
            }
        }
    }

    /** Reads the next frame (a request from the peer or a response), within the socket timeout. */
    public Answer readFrame() throws IOException {
        int length = in.readInt();
        if (length < 4 || length > 16 * 1024 * 1024) {
            throw new IOException("bad frame length " + length + " from " + address);
        }
        byte[] body = new byte[length];
        in.readFully(body);
        int typeByte = body[0] & 0xFF;
        SerializeType wire = SerializeType.valueOf((byte) typeByte);
        try {
            return new Answer(wire, typeByte, RemotingCommand.decode(body));
        } catch (RemotingCommandException e) {
            throw new IOException("undecodable frame from " + address + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads (and discards) until the peer closes the connection; throws AssertionError if it is
     * still open after {@code timeout}. A reset counts as closed: the peer closed with bytes of
     * ours still unread.
     */
    public Closed awaitClosed(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        InputStream raw = socket.getInputStream();
        byte[] sink = new byte[4096];
        while (true) {
            long leftMillis = (deadline - System.nanoTime()) / 1_000_000;
            if (leftMillis <= 0) {
                throw new AssertionError("connection to " + address + " still open after " + timeout.toMillis() + " ms");
            }
            socket.setSoTimeout((int) Math.max(1, Math.min(leftMillis, 500)));
            try {
                int n = raw.read(sink);
                if (n < 0) {
                    return Closed.EOF;
                }
            } catch (SocketTimeoutException e) {
                // not yet: go on until the deadline
            } catch (EOFException e) {
                return Closed.EOF;
            } catch (SocketException e) {
                if (String.valueOf(e.getMessage()).toLowerCase().contains("reset")) {
                    return Closed.RESET;
                }
                throw e;
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
