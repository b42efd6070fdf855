package io.rmqgw.cli;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * A minimal RocketMQ peer for cli tests (the gateway module's scripted peers are not on this class path):
 * accepts connections on 127.0.0.1, decodes each frame with rocketmq-remoting's own {@link RemotingCommand} and
 * answers requests with what the handler returns (null: no answer), carrying the request's opaque.
 */
final class FakePeer implements AutoCloseable {

    private final ServerSocket server;
    private final Function<RemotingCommand, RemotingCommand> handler;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Integer> codes = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private volatile boolean closed;

    private FakePeer(Function<RemotingCommand, RemotingCommand> handler) throws IOException {
        this.handler = handler;
        server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        Thread t = new Thread(this::accept, "fake-peer-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    /** A broker answering every request with SUCCESS, except those {@code silent} refuses to answer. */
    static FakePeer broker(java.util.function.IntPredicate silent) throws IOException {
        return new FakePeer(request -> silent.test(request.getCode()) ? null
            : RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, "broker " + request.getCode()));
    }

    /**
     * A name server: the cluster names {@code brokerAddress} as broker-a (when not null), routes are unknown
     * (TOPIC_NOT_EXIST), anything else SUCCESS.
     */
    static FakePeer nameServer(String brokerAddress) throws IOException {
        return new FakePeer(request -> {
            if (request.getCode() == RequestCode.GET_BROKER_CLUSTER_INFO) {
                RemotingCommand r = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
                String json = brokerAddress == null ? "{\"brokerAddrTable\":{},\"clusterAddrTable\":{}}"
                    : "{\"brokerAddrTable\":{\"broker-a\":{\"brokerAddrs\":{\"0\":\"" + brokerAddress
                    + "\"},\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\"}},"
                    + "\"clusterAddrTable\":{\"DefaultCluster\":[\"broker-a\"]}}";
                r.setBody(json.getBytes(StandardCharsets.UTF_8));
                return r;
            }
            if (request.getCode() == RequestCode.GET_ROUTEINFO_BY_TOPIC) {
                return RemotingCommand.createResponseCommand(ResponseCode.TOPIC_NOT_EXIST, "no route (fake name server)");
            }
            return RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, "namesrv " + request.getCode());
        });
    }

    String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** Connections accepted so far. */
    int connections() {
        return accepted.get();
    }

    /** Request codes received so far. */
    List<Integer> codes() {
        return List.copyOf(codes);
    }

    private void accept() {
        while (!closed) {
            try {
                Socket s = server.accept();
                accepted.incrementAndGet();
                sockets.add(s);
                Thread t = new Thread(() -> serve(s), "fake-peer-conn-" + s.getPort());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            while (!closed) {
                RemotingCommand request = read(in);
                if (request.isResponseType()) {
                    continue;
                }
                codes.add(request.getCode());
                if (request.isOnewayRPC()) {
                    continue;
                }
                RemotingCommand response = handler.apply(request);
                if (response != null) {
                    response.setOpaque(request.getOpaque());
                    response.markResponseType();
                    write(out, response);
                }
            }
        } catch (Exception e) {
            // connection over
        }
    }

    static RemotingCommand read(DataInputStream in) throws Exception {
        int length = in.readInt();
        byte[] frame = new byte[length];
        in.readFully(frame);
        return RemotingCommand.decode(ByteBuffer.wrap(frame));
    }

    static synchronized void write(OutputStream out, RemotingCommand command) throws IOException {
        ByteBuffer b = command.encode();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        out.write(bytes);
        out.flush();
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }
    }

    /** A client connection speaking RemotingCommand, with a read timeout. */
    static final class Client implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;
        private final AtomicInteger opaque = new AtomicInteger(1);

        Client(int port) throws IOException {
            socket = new Socket();
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            socket.setSoTimeout(5000);
            in = new DataInputStream(socket.getInputStream());
        }

        /** Sends {@code request} and reads its answer (within {@code timeout}). */
        RemotingCommand call(RemotingCommand request, Duration timeout) throws Exception {
            int id = opaque.getAndIncrement();
            request.setOpaque(id);
            write(socket.getOutputStream(), request);
            socket.setSoTimeout((int) timeout.toMillis());
            RemotingCommand answer = read(in);
            if (answer.getOpaque() != id) {
                throw new AssertionError("answer to opaque " + answer.getOpaque() + ", expected " + id);
            }
            return answer;
        }

        RemotingCommand call(RemotingCommand request) throws Exception {
            return call(request, Duration.ofSeconds(5));
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
