package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.Wire;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The session's state machine driven with EmbeddedChannels through an injected {@link Dialer}: no
 * sockets, every transition observed as it happens.
 */
class SessionStateMachineTest {

    private static final List<String> TARGETS = List.of("127.0.0.1:10911", "127.0.0.1:10921");

    private final GatewayMetrics metrics = GatewayMetrics.inMemory();
    /** One entry per dial: the upstream channel and the promise the test settles. */
    private final List<Dial> dials = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private EmbeddedChannel client;

    private record Dial(String target, EmbeddedChannel upstream, ChannelPromise promise) {
    }

    @AfterEach
    void releaseEverything() {
        for (EmbeddedChannel c : channels) {
            c.finishAndReleaseAll();
        }
        metrics.close();
    }

    private RelaySession accept() {
        return accept(false, HandlerTable.builder(Role.BROKER).build());
    }

    private RelaySession accept(boolean local, HandlerTable table) {
        Dialer dialer = (target, loop, timeout, handler) -> {
            EmbeddedChannel upstream = track(new EmbeddedChannel(handler));
            ChannelPromise promise = upstream.newPromise();
            dials.add(new Dial(target, upstream, promise));
            return promise;
        };
        RelayContext context = new RelayContext(null, dialer, metrics, 1 << 20,
            new UpstreamSettings(null, 1000, TimeUnit.SECONDS.toNanos(30), TimeUnit.SECONDS.toNanos(60)));
        UpstreamRole role = new UpstreamRole() {
            @Override
            public HandlerTable handlers() {
                return table;
            }

            @Override
            public boolean local() {
                return local;
            }

            @Override
            public List<String> upstreamTargets() {
                return TARGETS;
            }

            @Override
            public String describe(String target) {
                return "broker " + target;
            }
        };
        client = track(new EmbeddedChannel(ClientPipeline.initializer(context, metrics.namesrvListener(), role)));
        return RelaySession.of(client);
    }

    private EmbeddedChannel track(EmbeddedChannel c) {
        channels.add(c);
        return c;
    }

    private Dial lastDial() {
        return dials.get(dials.size() - 1);
    }

    private static byte[] bytes(ByteBuf buf) {
        try {
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    /** A oneway request the client sends first: the request that makes the session dial its upstream. */
    private void greet() {
        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.HEART_BEAT).opaque(1000).oneway().bytes()));
    }

    /** Accepted, greeted, dialing: the dial not settled yet. */
    private RelaySession acceptAndGreet() {
        RelaySession session = accept();
        greet();
        return session;
    }

    @Test
    void nothingIsDialedBeforeTheFirstRequestAndTheClientIsNotReadWhileDialing() {
        RelaySession session = accept();
        assertInstanceOf(SessionState.Accepted.class, session.state());
        assertTrue(dials.isEmpty(), "an idle client holds no upstream connection");
        assertTrue(client.config().isAutoRead());

        greet();
        assertInstanceOf(SessionState.Connecting.class, session.state());
        assertEquals(TARGETS.get(0), lastDial().target());
        assertFalse(client.config().isAutoRead(), "read while dialing");

        lastDial().promise().setSuccess();
        SessionState.Connected connected = assertInstanceOf(SessionState.Connected.class, session.state());
        assertSame(lastDial().upstream(), connected.channel());
        assertTrue(client.config().isAutoRead());
        Wire.Frame greeting = Wire.parse(bytes(lastDial().upstream().readOutbound()));
        assertEquals(1000, greeting.opaque(), "the request that dialed is forwarded once connected");
    }

    @Test
    void requestsAndAnswersCrossWithTheirOpaques() {
        RelaySession session = acceptAndGreet();
        Dial dial = lastDial();
        dial.promise().setSuccess();
        dial.upstream().releaseOutbound();

        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.GET_BROKER_RUNTIME_INFO).opaque(41).bytes()));
        Wire.Frame forwarded = Wire.parse(bytes(dial.upstream().readOutbound()));
        assertEquals(RequestCode.GET_BROKER_RUNTIME_INFO, forwarded.code());
        assertEquals(41, forwarded.opaque());
        assertEquals(1, session.inFlight());

        dial.upstream().writeInbound(Unpooled.wrappedBuffer(Wire.response(Wire.SUCCESS, 41).body("ok").bytes()));
        Wire.Frame answer = Wire.parse(bytes(client.readOutbound()));
        assertEquals(41, answer.opaque());
        assertEquals("ok", answer.bodyText());
        assertEquals(0, session.inFlight());
    }

    @Test
    void everyRefusedTargetIsTriedThenRequestsGetAnErrorNamingThem() {
        RelaySession session = accept();
        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.GET_BROKER_RUNTIME_INFO).opaque(6).bytes()));
        lastDial().promise().setFailure(new ConnectException("Connection refused"));
        assertEquals(TARGETS.get(1), lastDial().target(), "fails over to the next target");
        assertInstanceOf(SessionState.Connecting.class, session.state());
        lastDial().promise().setFailure(new ConnectException("Connection refused"));

        SessionState.Unavailable unavailable = assertInstanceOf(SessionState.Unavailable.class, session.state());
        assertTrue(unavailable.reason().contains("broker " + TARGETS.get(0) + " unreachable"), unavailable.reason());
        assertTrue(unavailable.reason().contains("broker " + TARGETS.get(1) + " unreachable"), unavailable.reason());
        assertTrue(client.config().isAutoRead(), "requests are read to be answered");
        Wire.Frame first = Wire.parse(bytes(client.readOutbound()));
        assertEquals(6, first.opaque(), "the request that dialed is answered");
        assertEquals(Wire.SYSTEM_ERROR, first.code());

        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.GET_BROKER_RUNTIME_INFO).opaque(7).bytes()));
        Wire.Frame answer = Wire.parse(bytes(client.readOutbound()));
        assertEquals(7, answer.opaque());
        assertEquals(Wire.SYSTEM_ERROR, answer.code());
        assertTrue(answer.remark().contains("unreachable"), answer.remark());
        assertTrue(client.isActive(), "the client stays connected to retry");
    }

    @Test
    void aLostUpstreamAnswersEveryPendingRequestAndClosesTheClient() {
        RelaySession session = acceptAndGreet();
        Dial dial = lastDial();
        dial.promise().setSuccess();
        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.GET_BROKER_RUNTIME_INFO).opaque(1).bytes()));
        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.QUERY_DATA_VERSION).opaque(2).bytes()));
        dial.upstream().releaseOutbound();

        dial.upstream().close();
        List<Integer> answered = new ArrayList<>();
        for (ByteBuf out; (out = client.readOutbound()) != null; ) {
            if (!out.isReadable()) {
                out.release(); // the flush before the close
                continue;
            }
            Wire.Frame f = Wire.parse(bytes(out));
            assertEquals(Wire.SYSTEM_ERROR, f.code());
            assertTrue(f.remark().contains("connection to broker " + TARGETS.get(0) + " closed"), f.remark());
            answered.add(f.opaque());
        }
        assertEquals(List.of(1, 2), answered.stream().sorted().toList());
        assertFalse(client.isOpen(), "the client is closed after its answers");
        assertInstanceOf(SessionState.Closed.class, session.state());
    }

    @Test
    void aFullUpstreamStopsReadingTheClientUntilItDrains() {
        RelaySession session = acceptAndGreet();
        Dial dial = lastDial();
        dial.promise().setSuccess();
        EmbeddedChannel upstream = dial.upstream();
        upstream.releaseOutbound();
        upstream.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));

        upstream.write(Unpooled.wrappedBuffer(new byte[64]));
        assertFalse(upstream.isWritable());
        assertFalse(client.config().isAutoRead(), "client read while its upstream is full");

        upstream.flush();
        assertTrue(upstream.isWritable());
        assertTrue(client.config().isAutoRead());
        assertInstanceOf(SessionState.Connected.class, session.state());
    }

    @Test
    void aFullClientStopsReadingTheUpstream() {
        acceptAndGreet();
        Dial dial = lastDial();
        dial.promise().setSuccess();
        client.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));

        client.write(Unpooled.wrappedBuffer(new byte[64]));
        assertFalse(dial.upstream().config().isAutoRead(), "upstream read while the client is full");
        client.flush();
        assertTrue(dial.upstream().config().isAutoRead());
    }

    @Test
    void aClosedSessionClosesTheUpstreamItWasDialing() {
        RelaySession session = acceptAndGreet();
        Dial dial = lastDial();
        client.close();
        assertInstanceOf(SessionState.Closed.class, session.state());
        dial.promise().setSuccess();
        assertFalse(dial.upstream().isOpen(), "a dial that completes after the client left is closed");
        assertInstanceOf(SessionState.Closed.class, session.state());
    }

    @Test
    void aLocalRoleDialsNothingAndItsHandlersAnswer() {
        RequestHandler maxOffset = new RequestHandler() {
            @Override
            public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
                return answerOffset42(exchange, request);
            }
        };
        RelaySession session = accept(true, HandlerTable.builder(Role.BROKER).request(maxOffset, RequestCode.GET_MAX_OFFSET)
            .fallback(RequestHandler.NOT_SERVED).build());
        assertInstanceOf(SessionState.Local.class, session.state());
        assertTrue(dials.isEmpty(), "no upstream dialed");
        assertTrue(client.config().isAutoRead());

        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(5).bytes()));
        client.writeInbound(Unpooled.wrappedBuffer(Wire.request(RequestCode.PULL_MESSAGE).opaque(6).bytes()));
        Wire.Frame answered = Wire.parse(bytes(client.readOutbound()));
        assertEquals(5, answered.opaque());
        assertEquals("42", answered.ext().get("offset"));
        Wire.Frame refused = Wire.parse(bytes(client.readOutbound()));
        assertEquals(6, refused.opaque());
        assertEquals(RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED, refused.code());
        assertTrue(refused.remark().contains("request code 11"), refused.remark());
        assertEquals(0, session.inFlight());
    }

    /** Answers GET_MAX_OFFSET itself (offset 42) when asked for topic "Own", else lets it on. */
    private static final RequestFilter ANSWERS_OWN_TOPIC = (exchange, request) ->
        "Own".equals(HeaderCodec.decodeHeader(request).extFields().get("topic")) ? answerOffset42(exchange, request)
            : request;

    /** Answers {@code request} (owned) SUCCESS with offset 42; null: nothing to forward. */
    private static <T> T answerOffset42(Exchange exchange, RemotingFrame request) {
        try {
            exchange.answer(Frames.encode(exchange.alloc(),
                RemotingHeader.response(request.opaque(), Wire.SUCCESS, null).withExtFields(Map.of("offset", "42")),
                exchange.answerEncoding(), null));
            return null;
        } finally {
            request.release();
        }
    }

    private static ByteBuf maxOffset(String topic, int opaque) {
        return Unpooled.wrappedBuffer(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(opaque).ext("topic", topic).bytes());
    }

    @Test
    void whatAFilterAnswersWaitsForNoDialInAnyUpstreamState() {
        RelaySession session = accept(false, HandlerTable.builder(Role.NAMESRV)
            .filter(ANSWERS_OWN_TOPIC, RequestCode.GET_MAX_OFFSET).build());

        // Accepted: answered, nothing dialed
        client.writeInbound(maxOffset("Own", 1));
        assertEquals(1, Wire.parse(bytes(client.readOutbound())).opaque());
        assertTrue(dials.isEmpty(), "no upstream dialed for an answer the gateway gives alone");
        assertInstanceOf(SessionState.Accepted.class, session.state());

        // Connecting: the request that needs the upstream waits, the one answered alone does not
        client.writeInbound(maxOffset("Theirs", 2), maxOffset("Own", 3));
        assertInstanceOf(SessionState.Connecting.class, session.state());
        Wire.Frame own = Wire.parse(bytes(client.readOutbound()));
        assertEquals(3, own.opaque());
        assertEquals("42", own.ext().get("offset"));
        assertNull(client.readOutbound(), "opaque 2 still waits for its dial");
        assertEquals(1, dials.size());

        // Unavailable: the waiting one gets the error naming every target, the own one still its answer
        lastDial().promise().setFailure(new ConnectException("Connection timed out"));
        lastDial().promise().setFailure(new ConnectException("Connection timed out"));
        assertInstanceOf(SessionState.Unavailable.class, session.state());
        Wire.Frame failed = Wire.parse(bytes(client.readOutbound()));
        assertEquals(2, failed.opaque());
        assertEquals(Wire.SYSTEM_ERROR, failed.code());
        assertTrue(failed.remark().contains(TARGETS.get(0)) && failed.remark().contains(TARGETS.get(1)), failed.remark());
        client.writeInbound(maxOffset("Own", 4));
        assertEquals(4, Wire.parse(bytes(client.readOutbound())).opaque());
        assertEquals(2, dials.size(), "no redial for it");
        assertEquals(0, session.inFlight());
    }

    @Test
    void illegalEventsAreRejected() {
        Channel channel = track(new EmbeddedChannel());
        SessionState accepted = new SessionState.Accepted();
        assertThrows(IllegalStateException.class, () -> accepted.connected(channel));
        assertThrows(IllegalStateException.class, () -> accepted.lost("x", 0));

        SessionState connecting = accepted.dialing("a");
        SessionState connected = connecting.connected(channel);
        assertThrows(IllegalStateException.class, () -> connected.dialing("b"), "a second upstream while connected");
        assertThrows(IllegalStateException.class, () -> connected.connected(channel));
        assertThrows(IllegalStateException.class, () -> connected.unavailable("x", 0));
        assertThrows(IllegalStateException.class, () -> connecting.lost("x", 0));

        SessionState unavailable = connected.lost("gone", 5);
        assertEquals(new SessionState.Unavailable("gone", 5), unavailable);
        assertThrows(IllegalStateException.class, () -> unavailable.connected(channel), "connected without a dial");
        assertEquals(new SessionState.Connecting("c"), unavailable.dialing("c"));

        assertThrows(IllegalStateException.class, () -> connecting.local(), "local once dialing");
        assertThrows(IllegalStateException.class, () -> new SessionState.Local().dialing("e"), "a local session never dials");
        SessionState closed = unavailable.closed();
        assertSame(closed, closed.closed());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> closed.dialing("d"));
        assertTrue(e.getMessage().contains("Closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> closed.connected(channel));
        assertThrows(IllegalStateException.class, () -> closed.unavailable("x", 0));
        assertThrows(IllegalStateException.class, () -> closed.lost("x", 0));
    }
}
