package io.rmqgw.gateway.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.config.ResponseEncoding;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.RequestSigner;
import io.rmqgw.gateway.core.UpstreamSettings;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.gateway.pool.UpstreamException.Reason;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.routing.NamesrvAddresses;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The pool against scripted brokers and name servers on loopback. */
class UpstreamPoolTest {

    private static final int CODE = 4242;
    private static final long LONG = TimeUnit.SECONDS.toNanos(10);
    private static final Duration WAIT = Duration.ofSeconds(5);

    private Transport transport;
    private GatewayMetrics metrics;
    private RelayContext context;
    private UpstreamPool pool;
    private CallerLoop caller;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeEach
    void setUp() {
        transport = new Transport(2);
        metrics = GatewayMetrics.inMemory();
        caller = new CallerLoop();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (pool != null) {
            pool.close();
        }
        transport.close(Duration.ofMillis(50));
        caller.shutdownGracefully(0, 50, TimeUnit.MILLISECONDS).syncUninterruptibly();
        for (AutoCloseable c : closeAfter) {
            c.close();
        }
        assertFalse(caller.completions.contains(false), "a caller's future completed off the caller's executor");
    }

    private UpstreamPool pool(List<String> namesrv, int maxInFlight) {
        return pool(namesrv, maxInFlight, null);
    }

    private UpstreamPool pool(List<String> namesrv, int maxInFlight, RequestSigner signer) {
        context = new RelayContext(transport, Dialer.tcp(transport), metrics, FrameDecoder.DEFAULT_MAX_FRAME_LENGTH,
            new UpstreamSettings(namesrv.isEmpty() ? null : NamesrvAddresses.of(namesrv), 1000,
                TimeUnit.MILLISECONDS.toNanos(300), TimeUnit.SECONDS.toNanos(2), signer));
        pool = new UpstreamPool(context, maxInFlight);
        return pool;
    }

    private UpstreamPool pool() {
        return pool(List.of(), UpstreamPool.DEFAULT_MAX_IN_FLIGHT);
    }

    private ScriptedPeer peer(ScriptedPeer.Script script) throws IOException {
        ScriptedPeer peer = ScriptedPeer.start(script);
        closeAfter.add(peer);
        return peer;
    }

    /** A pooled direct buffer: the leak detector tracks it. */
    private static ByteBuf body(String text) {
        return PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(text.getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, String> ext(String key, String value) {
        return Map.of(key, value);
    }

    /** The response's remark; releases it (the caller owns it). */
    private static String remarkOf(Future<RemotingFrame> f) throws Exception {
        RemotingFrame frame = f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            return HeaderCodec.decodeHeader(frame).remark();
        } finally {
            frame.release();
        }
    }

    private static UpstreamException failure(Future<?> f) throws InterruptedException {
        assertTrue(f.await(WAIT.toMillis()), "not completed within " + WAIT);
        assertFalse(f.isSuccess(), "succeeded; expected a failure");
        return assertInstanceOf(UpstreamException.class, f.cause());
    }

    @Test
    void opaquesAreDistinctAndAnswersMatchEvenOutOfOrder() throws Exception {
        int n = 6;
        List<Wire.Frame> got = new ArrayList<>();
        ScriptedPeer broker = peer((c, f) -> {
            synchronized (got) {
                got.add(f);
                if (got.size() == n) {
                    for (int i = n - 1; i >= 0; i--) {
                        Wire.Frame r = got.get(i);
                        c.send(Wire.response(Wire.SUCCESS, r.opaque()).remark("answer " + r.ext().get("n")).bytes());
                    }
                }
            }
        });
        UpstreamConnection connection = pool().broker(broker.address());
        List<Future<RemotingFrame>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            futures.add(connection.request(CODE, ext("n", String.valueOf(i)), body("payload " + i), LONG, caller));
        }
        for (int i = 0; i < n; i++) {
            assertEquals("answer " + i, remarkOf(futures.get(i)));
        }
        Set<Integer> opaques = new HashSet<>();
        for (Wire.Frame f : got) {
            opaques.add(f.opaque());
            assertEquals(SerializeType.ROCKETMQ, f.serializeType(), "default upstream encoding");
            assertFalse(f.isOneway());
            assertEquals("payload " + f.ext().get("n"), f.bodyText());
        }
        assertEquals(n, opaques.size(), "opaques " + opaques);
        assertEquals(1, broker.connectionCount(), "one multiplexed connection");
        assertEquals(0, connection.inFlight());
        assertEquals(connection, pool.broker(broker.address()), "the same connection for the same broker");
    }

    @Test
    void withCredentialsEveryRequestIsSignedOnTheWire() throws Exception {
        List<Wire.Frame> got = new CopyOnWriteArrayList<>();
        ScriptedPeer broker = peer((c, f) -> {
            got.add(f);
            if (!f.isOneway()) {
                c.send(Wire.response(Wire.SUCCESS, f.opaque()).bytes());
            }
        });
        RequestSigner signer = new RequestSigner(new io.rmqgw.gateway.config.UpstreamAclConfig("ak", "sk"));
        UpstreamConnection connection = pool(List.of(), UpstreamPool.DEFAULT_MAX_IN_FLIGHT, signer)
            .broker(broker.address());
        connection.request(CODE, ext("topic", "Orders"), body("payload"), LONG, caller).get(WAIT.toMillis(),
            TimeUnit.MILLISECONDS).release();
        connection.oneway(new RemotingHeader(CODE, org.apache.rocketmq.remoting.protocol.LanguageCode.JAVA, 453, 0, 0,
            null, null), null, caller).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        // the oneway's future completes once written: the peer reads it a moment later
        for (int i = 0; i < 100 && got.size() < 2; i++) {
            TimeUnit.MILLISECONDS.sleep(50);
        }
        assertEquals(2, got.size());
        ByteBuf sent = body("payload");
        try {
            assertEquals(signer.sign(Map.of("topic", "Orders"), sent), got.get(0).ext(), "request: fields and body signed");
        } finally {
            sent.release();
        }
        assertEquals(signer.sign(null, null), got.get(1).ext(), "oneway: signed too");
    }

    @Test
    void answerCompletesOnTheCallersExecutor() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.ECHO);
        UpstreamConnection connection = pool().broker(broker.address());
        CompletableFuture<Boolean> listenerOnCaller = new CompletableFuture<>();
        Future<RemotingFrame> f = connection.request(CODE, null, null, LONG, caller);
        f.addListener(done -> listenerOnCaller.complete(caller.inEventLoop()));
        assertEquals("echo " + CODE, remarkOf(f));
        assertTrue(listenerOnCaller.get(5, TimeUnit.SECONDS));
        assertNotSame(caller, connection.eventLoop());
        assertEquals(List.of(true), caller.completions, "completed once, on the caller's loop");
    }

    @Test
    void timeoutFailsTheCallerAndTheLateAnswerIsDropped() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.SILENT);
        UpstreamConnection connection = pool().broker(broker.address());
        Future<RemotingFrame> f = connection.request(CODE, null, body("never answered"), TimeUnit.MILLISECONDS.toNanos(200),
            caller);
        ScriptedPeer.Received asked = broker.awaitFrame(WAIT);
        UpstreamException e = failure(f);
        assertEquals(Reason.TIMEOUT, e.reason());
        assertTrue(e.getMessage().contains("broker " + broker.address()) && e.getMessage().contains("request code " + CODE)
            && e.getMessage().matches(".*within \\d+ ms.*"), e.getMessage());
        assertEquals(1, MeterReadings.of(metrics).upstreamFailures(UpstreamFailure.TIMEOUT));
        assertEquals(0, connection.inFlight());

        // the late answer (with a body the pool must release) and then an answer to a fresh request, in that order
        asked.connection().send(Wire.response(Wire.SUCCESS, asked.frame().opaque()).body("late").bytes());
        broker.script(ScriptedPeer.Script.ECHO);
        assertEquals("echo 7", remarkOf(connection.request(7, null, null, LONG, caller)));
        assertEquals(1, broker.connectionCount(), "the late answer did not disturb the connection");
    }

    @Test
    void connectionLossFailsEveryPendingCaller() throws Exception {
        ScriptedPeer broker = peer((c, f) -> {
            if ("3".equals(f.ext().get("n"))) {
                c.close();
            }
        });
        UpstreamConnection connection = pool().broker(broker.address());
        List<Future<RemotingFrame>> futures = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            futures.add(connection.request(CODE, ext("n", String.valueOf(i)), body("x"), LONG, caller));
        }
        for (Future<RemotingFrame> f : futures) {
            UpstreamException e = failure(f);
            assertEquals(Reason.CONNECTION_LOST, e.reason());
            assertTrue(e.getMessage().contains(broker.address()) && e.getMessage().contains("before answering request code "
                + CODE), e.getMessage());
        }
        assertEquals(1, MeterReadings.of(metrics).upstreamFailures(UpstreamFailure.CONNECTION_LOST), "one loss");
        assertEquals(0, connection.inFlight());
    }

    @Test
    void aLostConnectionIsDialedAgainByTheNextRequest() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.ECHO);
        UpstreamConnection connection = pool().broker(broker.address());
        assertEquals("echo 1", remarkOf(connection.request(1, null, null, LONG, caller)));
        broker.awaitConnection(WAIT).close();
        TestGateway.await(() -> !connection.isConnected(), WAIT, "the pool to notice the close");

        assertEquals("echo 2", remarkOf(connection.request(2, null, body("again"), LONG, caller)));
        assertEquals(2, broker.connectionCount());
        assertTrue(connection.isConnected());
    }

    @Test
    void theInFlightBoundRefusesAtOnceAndFreesAsAnswersArrive() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.SILENT);
        UpstreamConnection connection = pool(List.of(), 4).broker(broker.address());
        List<Future<RemotingFrame>> held = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            held.add(connection.request(CODE, null, null, LONG, caller));
        }
        ByteBuf refusedBody = body("refused");
        UpstreamException e = failure(connection.request(CODE, null, refusedBody, LONG, caller));
        assertEquals(Reason.BUSY, e.reason());
        assertTrue(e.getMessage().contains("4 requests in flight"), e.getMessage());
        assertEquals(0, refusedBody.refCnt(), "the refused request's body was released");

        for (int i = 0; i < 4; i++) {
            ScriptedPeer.Received r = broker.awaitFrame(WAIT);
            r.connection().send(Wire.response(Wire.SUCCESS, r.frame().opaque()).remark("ok").bytes());
        }
        for (Future<RemotingFrame> f : held) {
            assertEquals("ok", remarkOf(f));
        }
        assertEquals(0, connection.inFlight());
        broker.script(ScriptedPeer.Script.ECHO);
        assertEquals("echo 5", remarkOf(connection.request(5, null, null, LONG, caller)));
    }

    @Test
    void aFullWriteBufferRefusesInsteadOfQueueing() throws Exception {
        // accepts and never reads: the socket buffers fill, then the channel's outbound buffer passes its high mark
        ServerSocket server = new ServerSocket();
        closeAfter.add(server);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        List<Socket> accepted = new CopyOnWriteArrayList<>();
        Thread acceptor = new Thread(() -> {
            try {
                accepted.add(server.accept());
            } catch (IOException ignored) {
                // closed
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        closeAfter.add(() -> accepted.forEach(s -> {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }));
        UpstreamConnection connection = pool().broker("127.0.0.1:" + server.getLocalPort());
        byte[] mib = new byte[1024 * 1024];
        UpstreamException busy = null;
        for (int i = 0; i < 64 && busy == null; i++) {
            Future<RemotingFrame> f = connection.request(CODE, null,
                PooledByteBufAllocator.DEFAULT.directBuffer(mib.length).writeBytes(mib), LONG, caller);
            // written requests stay pending (never answered); a refused one fails at once
            if (f.await(200) && f.cause() instanceof UpstreamException e && e.reason() == Reason.BUSY) {
                busy = e;
            }
        }
        assertTrue(busy != null, "64 MiB written to a peer that reads nothing and no request was refused");
        assertTrue(busy.getMessage().contains("write buffer is full"), busy.getMessage());
    }

    @Test
    void aBrokersRequestGoesToTheHandlerAndTheDefaultAnswersNotSupported() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.ECHO);
        UpstreamConnection connection = pool().broker(broker.address());
        assertEquals("echo 1", remarkOf(connection.request(1, null, null, LONG, caller)));
        ScriptedPeer.Connection upstream = broker.awaitConnection(WAIT);

        // default: a oneway notification is dropped, a request is refused
        upstream.send(Wire.request(40).opaque(70).oneway().bytes());
        upstream.send(Wire.request(307).opaque(71).type(SerializeType.JSON).bytes());
        Wire.Frame refused = broker.awaitFrame(f -> f.isResponse(), WAIT).frame();
        assertEquals(71, refused.opaque());
        assertEquals(RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED, refused.code());
        assertEquals(SerializeType.JSON, refused.serializeType(), "answered in the request's encoding");
        assertTrue(refused.remark().contains("307"), refused.remark());

        // plugged in: the handler runs on the connection's loop and answers through it
        List<String> seen = new CopyOnWriteArrayList<>();
        pool.requestHandler((from, request) -> {
            try {
                seen.add(request.code() + " on loop " + from.eventLoop().inEventLoop());
                from.answer(Frames.encode(from.alloc(), RemotingHeader.response(request.opaque(), Wire.SUCCESS, "handled"),
                    request.encoding(), null));
            } finally {
                request.release();
            }
        });
        upstream.send(Wire.request(39).opaque(72).body("check-back body").bytes());
        Wire.Frame handled = broker.awaitFrame(f -> f.isResponse(), WAIT).frame();
        assertEquals(72, handled.opaque());
        assertEquals("handled", handled.remark());
        assertEquals(List.of("39 on loop true"), seen);
        assertFalse(broker.drainReceived().stream().anyMatch(r -> r.frame().opaque() == 70), "no answer to the oneway");
    }

    @Test
    void anUnreachableBrokerFailsTheRequestNamingIt() throws Exception {
        String dead = "127.0.0.1:" + TestGateway.deadPort();
        ByteBuf b = body("unsent");
        UpstreamException e = failure(pool().broker(dead).request(CODE, null, b, LONG, caller));
        assertEquals(Reason.CONNECT_FAILED, e.reason());
        assertTrue(e.getMessage().contains("broker " + dead) && e.getMessage().contains("request code " + CODE),
            e.getMessage());
        assertEquals(0, b.refCnt());
        assertEquals(1, MeterReadings.of(metrics).upstreamFailures(UpstreamFailure.CONNECT_FAILED));
        assertEquals(0, pool.broker(dead).inFlight());
    }

    @Test
    void theNameServerConnectionFailsOverInListOrder() throws Exception {
        ScriptedPeer namesrv = peer(ScriptedPeer.Script.ECHO);
        String dead = "127.0.0.1:" + TestGateway.deadPort();
        UpstreamConnection connection = pool(List.of(dead, namesrv.address()), 16).namesrv();
        assertEquals("echo 105", remarkOf(connection.request(105, ext("topic", "T"), null, LONG, caller)));
        assertEquals(namesrv.address(), context.upstream().namesrv().preferred().toString(), "the cursor moved on");
        assertEquals("name server " + namesrv.address(), connection.describe());
        assertEquals(UpstreamConnection.Kind.NAMESRV, connection.kind());
    }

    @Test
    void noNameServerConfiguredFailsClearly() throws Exception {
        UpstreamException e = failure(pool().namesrv().request(105, null, null, LONG, caller));
        assertEquals(Reason.CONNECT_FAILED, e.reason());
        assertTrue(e.getMessage().contains("no upstream name server configured"), e.getMessage());
    }

    @Test
    void onewayIsWrittenWithTheOnewayFlagAndNeverWaitsForAnAnswer() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.SILENT);
        UpstreamConnection connection = pool().broker(broker.address());
        RemotingHeader header = new RemotingHeader(35, org.apache.rocketmq.remoting.protocol.LanguageCode.JAVA, 453, 0, 0,
            null, ext("clientID", "gw"));
        Future<Void> written = connection.oneway(header, body("bye"), caller);
        assertTrue(written.await(WAIT.toMillis()) && written.isSuccess(), String.valueOf(written.cause()));
        Wire.Frame f = broker.awaitFrame(WAIT).frame();
        assertTrue(f.isOneway());
        assertEquals("gw", f.ext().get("clientID"));
        assertEquals(0, connection.inFlight());
    }

    @Test
    void theUpstreamHeaderEncodingApplies() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.ECHO);
        pool();
        context.edge(new EdgeSettings(SerializeType.JSON, ResponseEncoding.MIRROR, null, false));
        assertEquals("echo 30", remarkOf(pool.broker(broker.address()).request(30, ext("topic", "T"), null, LONG, caller)));
        Wire.Frame f = broker.awaitFrame(WAIT).frame();
        assertEquals(SerializeType.JSON, f.serializeType());
        assertEquals("T", f.ext().get("topic"));
    }

    @Test
    void closingThePoolFailsWhatIsInFlightAndWhatComesLater() throws Exception {
        ScriptedPeer broker = peer(ScriptedPeer.Script.SILENT);
        UpstreamConnection connection = pool().broker(broker.address());
        Future<RemotingFrame> pending = connection.request(CODE, null, body("pending"), LONG, caller);
        broker.awaitFrame(WAIT);
        pool.close();
        assertEquals(Reason.CLOSED, failure(pending).reason());
        ByteBuf later = body("later");
        assertEquals(Reason.CLOSED, failure(connection.request(CODE, null, later, LONG, caller)).reason());
        assertEquals(0, later.refCnt());
        assertEquals(Reason.CLOSED, failure(pool.broker("127.0.0.1:1").request(CODE, null, null, LONG, caller)).reason());
    }

    /** A caller's event loop whose promises record whether they were completed on it. */
    private static final class CallerLoop extends DefaultEventLoop {
        final List<Boolean> completions = new CopyOnWriteArrayList<>();

        CallerLoop() {
            super(new DefaultThreadFactory("test-caller"));
        }

        @Override
        public <V> Promise<V> newPromise() {
            return new DefaultPromise<>(this) {
                @Override
                public boolean trySuccess(V result) {
                    completions.add(CallerLoop.this.inEventLoop());
                    return super.trySuccess(result);
                }

                @Override
                public boolean tryFailure(Throwable cause) {
                    completions.add(CallerLoop.this.inEventLoop());
                    return super.tryFailure(cause);
                }
            };
        }
    }
}
