package io.rmqgw.testing;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * A scripted TCP peer standing in for a name server or broker: accepts connections on
 * 127.0.0.1, reads whole remoting frames and hands each to a {@link Script}, which may answer,
 * stay silent, delay or close. Every frame received is also queued for assertions.
 *
 * <p>Requests for GET_BROKER_CLUSTER_INFO (106), which the gateway sends once at start to
 * discover brokers, are answered automatically (with {@link #clusterInfo} when set, SYSTEM_ERROR
 * otherwise) and not queued or scripted.
 */
public final class ScriptedPeer implements AutoCloseable {

    public static final int GET_BROKER_CLUSTER_INFO = 106;
    public static final int GET_ROUTEINFO_BY_TOPIC = 105;
    public static final int TOPIC_NOT_EXIST = 17;
    /** A ClusterInfo body without brokers. */
    public static final String EMPTY_CLUSTER = "{\"brokerAddrTable\":{},\"clusterAddrTable\":{}}";

    /** What the peer does with one frame it received. Runs on that connection's reader thread. */
    @FunctionalInterface
    public interface Script {
        void onFrame(Connection connection, Wire.Frame frame) throws Exception;

        /** Receives and never answers. */
        Script SILENT = (c, f) -> {
        };

        /** Answers every request (not oneway, not response) with SUCCESS, same opaque and code-specific remark. */
        Script ECHO = (c, f) -> {
            if (!f.isResponse() && !f.isOneway()) {
                c.send(Wire.response(Wire.SUCCESS, f.opaque()).type(f.serializeType())
                    .remark("echo " + f.code()).bytes());
            }
        };
    }

    /**
     * Answers every request (not oneway, not a response) with what {@code handler} returns for it, the
     * request's opaque set; {@code null} leaves it unanswered.
     */
    public static Script answering(Function<RemotingCommand, RemotingCommand> handler) {
        return (c, f) -> {
            if (f.isResponse() || f.isOneway()) {
                return;
            }
            RemotingCommand response = handler.apply(f.command());
            if (response != null) {
                response.setOpaque(f.opaque());
                response.markResponseType();
                java.nio.ByteBuffer encoded = response.encode();
                byte[] bytes = new byte[encoded.remaining()];
                encoded.get(bytes);
                c.send(bytes);
            }
        };
    }

    /**
     * A name server: its cluster names {@code brokerAddress} as broker-a (no broker when null), routes are
     * unknown (TOPIC_NOT_EXIST), every other request gets SUCCESS.
     */
    public static ScriptedPeer nameServer(String brokerAddress) throws IOException {
        ScriptedPeer peer = start(answering(request -> request.getCode() == GET_ROUTEINFO_BY_TOPIC
            ? RemotingCommand.createResponseCommand(TOPIC_NOT_EXIST, "no route (scripted name server)")
            : RemotingCommand.createResponseCommand(Wire.SUCCESS, "namesrv " + request.getCode())));
        return peer.clusterInfo(brokerAddress == null ? EMPTY_CLUSTER : clusterInfoNaming("broker-a", brokerAddress));
    }

    /** A broker answering every request with SUCCESS, except those whose code {@code silent} accepts. */
    public static ScriptedPeer broker(IntPredicate silent) throws IOException {
        return start(answering(request -> silent.test(request.getCode()) ? null
            : RemotingCommand.createResponseCommand(Wire.SUCCESS, "broker " + request.getCode())));
    }

    /** A frame and the connection it arrived on. */
    public record Received(Connection connection, Wire.Frame frame) {
    }

    private final ServerSocket server;
    private final Thread acceptor;
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final BlockingQueue<Connection> accepted = new LinkedBlockingQueue<>();
    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final List<Integer> codes = new CopyOnWriteArrayList<>();
    private final AtomicInteger connectionIds = new AtomicInteger();
    private volatile Script script;
    private volatile byte[] clusterInfo;
    private volatile boolean closed;

    private ScriptedPeer(Script script) throws IOException {
        this.script = script;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        this.acceptor = new Thread(this::acceptLoop, "scripted-peer-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public static ScriptedPeer start(Script script) throws IOException {
        return new ScriptedPeer(script);
    }

    public int port() {
        return server.getLocalPort();
    }

    /** {@code 127.0.0.1:port}, as RocketMQ writes addresses. */
    public String address() {
        return "127.0.0.1:" + port();
    }

    public void script(Script script) {
        this.script = script;
    }

    /** The body to answer GET_BROKER_CLUSTER_INFO with (a ClusterInfo JSON); null answers SYSTEM_ERROR. */
    public ScriptedPeer clusterInfo(String json) {
        this.clusterInfo = json == null ? null : Wire.utf8(json);
        return this;
    }

    /** A ClusterInfo body naming one broker at {@code brokerAddress}, as a name server writes it. */
    public static String clusterInfoNaming(String brokerName, String brokerAddress) {
        return clusterInfoNaming(Map.of(brokerName, brokerAddress));
    }

    /** A ClusterInfo body naming each broker (name to master address) in one cluster, as a name server writes it. */
    public static String clusterInfoNaming(Map<String, String> brokerAddresses) {
        StringBuilder brokers = new StringBuilder();
        StringBuilder names = new StringBuilder();
        brokerAddresses.forEach((name, address) -> {
            String separator = brokers.length() == 0 ? "" : ",";
            brokers.append(separator).append("\"").append(name).append("\":{\"brokerAddrs\":{\"0\":\"").append(address)
                .append("\"},\"brokerName\":\"").append(name)
                .append("\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}");
            names.append(separator).append("\"").append(name).append("\"");
        });
        return "{\"brokerAddrTable\":{" + brokers + "},\"clusterAddrTable\":{\"DefaultCluster\":[" + names + "]}}";
    }

    /** The code of {@link #awaitDialBy}'s greeting: no RocketMQ request has it, so a gateway passes it through. */
    public static final int GREETING_CODE = 4320;

    /**
     * The connection a gateway dials to this peer for {@code client}: gateways dial a client's upstream
     * with its first request, so the client sends a oneway greeting first, taken here off the frames
     * received (later {@link #awaitFrame} calls see what follows it).
     */
    public Connection awaitDialBy(RawClient client, Duration timeout) throws IOException, InterruptedException {
        return awaitDialBy(client, SerializeType.JSON, timeout);
    }

    /** As {@link #awaitDialBy(RawClient, Duration)}, greeting in {@code encoding} (what a mirroring gateway answers in). */
    public Connection awaitDialBy(RawClient client, SerializeType encoding, Duration timeout)
        throws IOException, InterruptedException {
        client.send(Wire.request(GREETING_CODE).type(encoding).oneway().bytes());
        awaitFrame(f -> f.code() == GREETING_CODE, timeout);
        return awaitConnection(timeout);
    }

    public Connection awaitConnection(Duration timeout) throws InterruptedException {
        Connection c = accepted.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (c == null) {
            throw new AssertionError("no connection to " + address() + " within " + timeout.toMillis() + " ms");
        }
        return c;
    }

    /** The next received frame matching {@code match}; frames before it that do not match are dropped. */
    public Received awaitFrame(Predicate<Wire.Frame> match, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int i = 0; i < 10_000; i++) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            Received r = received.poll(left, TimeUnit.NANOSECONDS);
            if (r == null) {
                break;
            }
            if (match.test(r.frame())) {
                return r;
            }
        }
        throw new AssertionError("no matching frame at " + address() + " within " + timeout.toMillis() + " ms");
    }

    public Received awaitFrame(Duration timeout) throws InterruptedException {
        return awaitFrame(f -> true, timeout);
    }

    /** Frames received and not yet taken by {@link #awaitFrame}. */
    public List<Received> drainReceived() {
        List<Received> out = new java.util.ArrayList<>();
        received.drainTo(out);
        return out;
    }

    /** The codes of every frame received so far (GET_BROKER_CLUSTER_INFO requests aside), in order. */
    public List<Integer> codes() {
        return List.copyOf(codes);
    }

    public int connectionCount() {
        return connectionIds.get();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return;
            }
            try {
                s.setTcpNoDelay(true);
                Connection c = new Connection(connectionIds.incrementAndGet(), s);
                connections.add(c);
                accepted.add(c);
                c.reader.start();
            } catch (IOException e) {
                closeQuietly(s);
            }
        }
    }

    /** Stops listening and closes every connection. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        for (Connection c : connections) {
            c.close();
        }
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing
        }
    }

    /** One accepted connection. */
    public final class Connection {
        private final int id;
        private final Socket socket;
        private final OutputStream out;
        private final DataInputStream in;
        private final Thread reader;

        Connection(int id, Socket socket) throws IOException {
            this.id = id;
            this.socket = socket;
            this.out = socket.getOutputStream();
            this.in = new DataInputStream(socket.getInputStream());
            this.reader = new Thread(this::readLoop, "scripted-peer-" + port() + "-conn-" + id);
            reader.setDaemon(true);
        }

        public int id() {
            return id;
        }

        /** The remote (gateway side) port of this connection. */
        public int remotePort() {
            return socket.getPort();
        }

        public synchronized void send(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        public void close() {
            closeQuietly(socket);
        }

        public boolean isClosed() {
            return socket.isClosed();
        }

        private void readLoop() {
            try {
                while (!socket.isClosed()) {
                    int length = in.readInt();
                    if (length < 4 || length > 64 * 1024 * 1024) {
                        throw new IOException("implausible frame length " + length);
                    }
                    byte[] whole = new byte[4 + length];
                    whole[0] = (byte) (length >>> 24);
                    whole[1] = (byte) (length >>> 16);
                    whole[2] = (byte) (length >>> 8);
                    whole[3] = (byte) length;
                    in.readFully(whole, 4, length);
                    Wire.Frame frame = Wire.parse(whole);
                    if (frame.code() == GET_BROKER_CLUSTER_INFO && !frame.isResponse()) {
                        answerDiscovery(frame);
                        continue;
                    }
                    codes.add(frame.code());
                    received.add(new Received(this, frame));
                    script.onFrame(this, frame);
                }
            } catch (EOFException | SocketException e) {
                // closed by either side
            } catch (Exception e) {
                System.err.println("scripted peer " + address() + " connection " + id + ": " + e);
            } finally {
                close();
            }
        }

        private void answerDiscovery(Wire.Frame request) throws IOException {
            byte[] body = clusterInfo;
            if (body == null) {
                send(Wire.response(Wire.SYSTEM_ERROR, request.opaque()).remark("scripted peer has no cluster").bytes());
            } else {
                send(Wire.response(Wire.SUCCESS, request.opaque()).body(body).bytes());
            }
        }
    }
}
