package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.RateLimitConfig.ClientLimit;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A session while the gateway drains, driven with EmbeddedChannels: new requests are answered
 * SYSTEM_BUSY with the drain's remark and never reach the upstream, requests already upstream finish,
 * pulls held upstream are cut short. And the client is not read while it cannot take more writes; a client past
 * its request rate limit is answered SYSTEM_BUSY before anything goes upstream.
 */
class SessionDrainTest {

    private static final int HELD_PULL = RequestCode.PULL_MESSAGE;
    private static final int DEFERRED = 4501;
    /** Answered through Exchange.answer inside the handler's own call (a future already complete). */
    private static final int AT_ONCE = 4502;
    private static final int ANSWER_AT_ONCE = 4503;

    private final GatewayMetrics metrics = GatewayMetrics.inMemory();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final List<ChannelPromise> dials = new ArrayList<>();
    private EmbeddedChannel upstream;
    private EmbeddedChannel client;
    private RelayContext context;

    @AfterEach
    void releaseEverything() {
        deferred.forEach(RemotingFrame::release);
        for (EmbeddedChannel c : channels) {
            c.finishAndReleaseAll();
        }
        metrics.close();
    }

    /** A pull handler as the broker role has one: held upstream, cut short when draining. */
    private static final RequestHandler PULL = new RequestHandler() {
        @Override
        public boolean longPolling() {
            return true;
        }

        @Override
        public boolean cutShortWhenDraining() {
            return true;
        }
    };

    /** Requests the deferring handler took, to be answered by the test through their exchanges. */
    private final List<RemotingFrame> deferred = new ArrayList<>();
    private final List<Exchange> deferredExchanges = new ArrayList<>();

    /** Takes the request and answers later, as a fan-out does. */
    private final RequestHandler later = new RequestHandler() {
        @Override
        public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
            deferred.add(request);
            deferredExchanges.add(exchange);
            return null;
        }
    };

    private static final RequestHandler WRITES_AT_ONCE = new RequestHandler() {
        @Override
        public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
            int opaque = request.opaque();
            request.release();
            exchange.answer(Unpooled.wrappedBuffer(Wire.response(Wire.SUCCESS, opaque).remark("at once").bytes()));
            return null;
        }
    };

    private static final RequestHandler ANSWERS_AT_ONCE = new RequestHandler() {
        @Override
        public ByteBuf onResponse(Exchange exchange, RemotingFrame response) {
            exchange.answer(exchange.forClient(response, null));
            return null;
        }
    };

    private RelaySession accept() {
        Dialer dialer = (target, loop, timeout, handler) -> {
            upstream = track(new EmbeddedChannel(handler));
            ChannelPromise promise = upstream.newPromise();
            dials.add(promise);
            return promise;
        };
        context = new RelayContext(null, dialer, metrics, 1 << 20,
            new UpstreamSettings(null, 1000, TimeUnit.SECONDS.toNanos(30), TimeUnit.SECONDS.toNanos(60)));
        HandlerTable table = HandlerTable.builder(Role.BROKER)
            .filter(io.rmqgw.gateway.filters.RateLimitFilters.requests(context.rateLimits())).request(PULL, HELD_PULL)
            .request(later, DEFERRED).request(WRITES_AT_ONCE, AT_ONCE).request(ANSWERS_AT_ONCE, ANSWER_AT_ONCE).build();
        UpstreamRole role = new UpstreamRole() {
            @Override
            public HandlerTable handlers() {
                return table;
            }

            @Override
            public List<String> upstreamTargets() {
                return List.of("127.0.0.1:10911");
            }

            @Override
            public String describe(String target) {
                return "broker " + target;
            }
        };
        client = track(new EmbeddedChannel(ClientPipeline.initializer(context, metrics.namesrvListener(), role)));
        return RelaySession.of(client);
    }

    /** Accepted, a first request forwarded: the session is connected. */
    private RelaySession connected() {
        RelaySession session = accept();
        send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(1));
        dials.get(0).setSuccess();
        assertEquals(1, Wire.parse(bytes(upstream.readOutbound())).opaque());
        upstream.writeInbound(Unpooled.wrappedBuffer(Wire.response(Wire.SUCCESS, 1).bytes()));
        assertEquals(1, Wire.parse(bytes(client.readOutbound())).opaque());
        return session;
    }

    private EmbeddedChannel track(EmbeddedChannel c) {
        channels.add(c);
        return c;
    }

    private void send(Wire.Builder request) {
        client.writeInbound(Unpooled.wrappedBuffer(request.bytes()));
    }

    private void drain() {
        context.startDraining();
        client.runPendingTasks();
    }

    private static byte[] bytes(ByteBuf buf) {
        try {
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    private Wire.Frame answer() {
        ByteBuf out = client.readOutbound();
        assertTrue(out != null, "no answer written to the client");
        return Wire.parse(bytes(out));
    }

    @Test
    void aRequestArrivingDuringTheDrainGetsSystemBusyAndNeverReachesTheUpstream() {
        RelaySession session = connected();
        drain();

        send(Wire.request(RequestCode.SEND_MESSAGE_V2).opaque(7).body("m"));
        Wire.Frame busy = answer();
        assertEquals(7, busy.opaque());
        assertEquals(RemotingSysResponseCode.SYSTEM_BUSY, busy.code());
        assertEquals(RelaySession.DRAINING_REMARK, busy.remark());
        assertNull(upstream.readOutbound(), "a request that arrived while draining went upstream");
        assertEquals(0, session.inFlight(), "nothing in flight: the drain need not wait for it");
        assertEquals(1, MeterReadings.of(metrics).requests(RequestCode.SEND_MESSAGE_V2, RemotingSysResponseCode.SYSTEM_BUSY));
    }

    @Test
    void aClientPastItsRequestLimitGetsSystemBusyButItsHeartbeatsPass() {
        RelaySession session = connected();
        // the loop's clock moves only when the test moves it: real time passing on a slow machine would make the
        // 100 ms refusal due before the test has advanced 99 ms
        client.freezeTime();
        context.rateLimits().apply(new RateLimitConfig(null, List.of(new ClientLimit("*", null, null, 1, 2))));
        for (int opaque = 11; opaque <= 13; opaque++) {
            send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(opaque));
        }
        send(Wire.request(RequestCode.HEART_BEAT).opaque(14).body("{}"));
        assertEquals(11, Wire.parse(bytes(upstream.readOutbound())).opaque());
        assertEquals(12, Wire.parse(bytes(upstream.readOutbound())).opaque());
        assertEquals(14, Wire.parse(bytes(upstream.readOutbound())).opaque(), "a heartbeat is never refused");
        assertNull(upstream.readOutbound(), "the refused request went upstream");
        assertNull(client.readOutbound(), "the refusal is held for rate-limits.refusal-delay (100ms by default)");
        assertEquals(4, session.inFlight(), "three requests upstream and one held refusal");
        client.advanceTimeBy(99, TimeUnit.MILLISECONDS);
        client.runScheduledPendingTasks();
        assertNull(client.readOutbound(), "answered before its delay");
        client.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        client.runScheduledPendingTasks();
        Wire.Frame busy = answer();
        assertEquals(13, busy.opaque());
        assertEquals(RemotingSysResponseCode.SYSTEM_BUSY, busy.code());
        assertEquals("[RATE_LIMITED] requests of client " + session.idForLimits() + " (this one code "
            + RequestCode.GET_MAX_OFFSET + ") exceed the gateway's limit of 1 per second (burst 2); retry later",
            busy.remark());
        assertEquals(1, MeterReadings.of(metrics).rateLimitedSends("client_request"));
        assertEquals(3, session.inFlight(), "the three admitted requests wait for their answers");
    }

    /**
     * Connected under a tight request limit (a burst of 1, refusals held a second, the longest allowed), its one
     * token spent by a request with {@code opaque}, now upstream.
     */
    private RelaySession limitedAfter(int opaque) {
        RelaySession session = connected();
        context.rateLimits().apply(new RateLimitConfig(null, List.of(new ClientLimit("*", null, null, 1, 1)))
            .withRefusalDelay(Duration.ofSeconds(1)));
        send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(opaque));
        assertEquals(opaque, Wire.parse(bytes(upstream.readOutbound())).opaque());
        return session;
    }

    @Test
    void heldRefusalsAreAnsweredOnceEachInOrderAndPastTheBoundAtOnce() {
        RelaySession session = limitedAfter(100);
        for (int i = 1; i <= HeldRefusals.MAX_HELD; i++) {
            send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(100 + i));
        }
        assertNull(client.readOutbound(), "refusals within the bound are held");
        send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(999));
        assertEquals(999, answer().opaque(), "past the bound a refusal is answered at once");
        assertEquals(1 + HeldRefusals.MAX_HELD, session.inFlight());

        client.advanceTimeBy(2, TimeUnit.SECONDS);
        client.runScheduledPendingTasks();
        List<Integer> all = new ArrayList<>();
        for (ByteBuf out; (out = client.readOutbound()) != null; ) {
            Wire.Frame f = Wire.parse(bytes(out));
            assertEquals(RemotingSysResponseCode.SYSTEM_BUSY, f.code());
            all.add(f.opaque());
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 1; i <= HeldRefusals.MAX_HELD; i++) {
            expected.add(100 + i);
        }
        assertEquals(expected, all, "each held refusal answered once, in order");
        assertEquals(1, session.inFlight(), "only the request upstream is in flight");
        assertEquals(HeldRefusals.MAX_HELD + 1, MeterReadings.of(metrics).rateLimitedSends("client_request"));
    }

    @Test
    void theDrainAnswersHeldRefusalsAtOnce() {
        RelaySession session = limitedAfter(20);
        send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(21));
        assertNull(client.readOutbound());
        assertEquals(2, session.inFlight(), "the drain waits for the held refusal too");
        drain();
        Wire.Frame busy = answer();
        assertEquals(21, busy.opaque());
        assertEquals(RemotingSysResponseCode.SYSTEM_BUSY, busy.code());
        assertTrue(busy.remark().startsWith("[RATE_LIMITED] requests of client unidentified@"), busy.remark());
        assertEquals(1, session.inFlight(), "nothing held any more");
        client.advanceTimeBy(2, TimeUnit.SECONDS);
        client.runScheduledPendingTasks();
        assertNull(client.readOutbound(), "answered twice");
    }

    @Test
    void aConnectionClosedWithHeldRefusalsReleasesThem() {
        RelaySession session = limitedAfter(30);
        for (int opaque = 31; opaque <= 35; opaque++) {
            send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(opaque));
        }
        assertEquals(5, session.inFlight() - 1);
        client.close();
        assertEquals(0, session.inFlight());
        client.advanceTimeBy(2, TimeUnit.SECONDS);
        client.runScheduledPendingTasks();
        assertNull(client.readOutbound(), "nothing written after the close");
        // the leak detector (PARANOID) fails the build if a held answer was not released
    }

    @Test
    void aRequestAlreadyUpstreamFinishesAndIsRelayedDuringTheDrain() {
        RelaySession session = connected();
        send(Wire.request(RequestCode.SEND_MESSAGE_V2).opaque(8).body("m"));
        assertEquals(8, Wire.parse(bytes(upstream.readOutbound())).opaque());
        drain();
        assertEquals(1, session.inFlight(), "the send upstream is in flight");
        assertNull(client.readOutbound(), "the send upstream is not answered by the drain");

        upstream.writeInbound(Unpooled.wrappedBuffer(Wire.response(Wire.SUCCESS, 8).remark("stored").bytes()));
        Wire.Frame relayed = answer();
        assertEquals(8, relayed.opaque());
        assertEquals(Wire.SUCCESS, relayed.code());
        assertEquals("stored", relayed.remark());
        assertEquals(0, session.inFlight());
    }

    @Test
    void aPullHeldUpstreamIsCutShortAndItsLateAnswerDropped() {
        RelaySession session = connected();
        send(Wire.request(HELD_PULL).opaque(9));
        send(Wire.request(RequestCode.SEND_MESSAGE_V2).opaque(10).body("m"));
        upstream.releaseOutbound();
        assertEquals(2, session.inFlight());

        drain();
        Wire.Frame busy = answer();
        assertEquals(9, busy.opaque());
        assertEquals(RemotingSysResponseCode.SYSTEM_BUSY, busy.code());
        assertEquals(RelaySession.DRAINING_REMARK, busy.remark());
        assertEquals(1, session.inFlight(), "only the send is still in flight");

        upstream.writeInbound(Unpooled.wrappedBuffer(Wire.response(Wire.SUCCESS, 9).bytes()));
        assertNull(client.readOutbound(), "the pull was answered already");
    }

    @Test
    void requestsReadWhileDialingAreAnsweredBusyOnceTheDrainStarts() {
        RelaySession session = accept();
        send(Wire.request(RequestCode.SEND_MESSAGE_V2).opaque(11).body("m"));
        assertEquals(1, dials.size(), "the first request dials");
        drain();
        Wire.Frame busy = answer();
        assertEquals(11, busy.opaque());
        assertEquals(RemotingSysResponseCode.SYSTEM_BUSY, busy.code());

        dials.get(0).setSuccess();
        assertNull(upstream.readOutbound(), "the request that waited for the dial went upstream during the drain");
        assertEquals(0, session.inFlight());
    }

    @Test
    void aOnewayRequestIsStillRelayedDuringTheDrain() {
        connected();
        drain();
        send(Wire.request(RequestCode.UNREGISTER_CLIENT).opaque(12).oneway());
        ByteBuf forwarded = upstream.readOutbound();
        assertEquals(12, Wire.parse(bytes(forwarded)).opaque(), "a oneway holds nothing up");
        assertNull(client.readOutbound(), "a oneway gets no answer");
    }

    @Test
    void aClientThatCannotTakeMoreWritesIsNotRead() {
        connected();
        client.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));
        assertTrue(client.config().isAutoRead());

        client.write(Unpooled.wrappedBuffer(new byte[64]));
        assertFalse(client.isWritable());
        assertFalse(client.config().isAutoRead(), "a client with a full write buffer is still read");
        assertFalse(upstream.config().isAutoRead());

        client.flush();
        assertTrue(client.config().isAutoRead());
        assertTrue(upstream.config().isAutoRead());
        client.releaseOutbound();
    }

    /**
     * A client that takes none of its answers, whose last frame the gateway read halfway before it stopped reading
     * it: its frame stalls because of the gateway, so the frame timeout does not run while the client is not read;
     * the unwritable timeout closes it, counted {@code unwritable}, not {@code frame_timeout}.
     */
    @Test
    void aHalfReadFrameOfAClientTheGatewayStoppedReadingIsNotTimedOutAndTheClientIsClosedAsUnwritable()
        throws InterruptedException {
        connected();
        context.downstream(new DownstreamConfig(null, null, Duration.ofMillis(50), null, null, null, null, null, null,
            Duration.ofMillis(300)));
        byte[] frame = Wire.request(RequestCode.GET_MAX_OFFSET).opaque(40).bytes();
        client.writeInbound(Unpooled.wrappedBuffer(frame, 0, frame.length - 3));
        client.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));
        client.write(Unpooled.wrappedBuffer(new byte[64]));
        assertFalse(client.config().isAutoRead(), "the gateway still reads a client that takes nothing");

        Thread.sleep(150); // three frame timeouts
        client.advanceTimeBy(1, TimeUnit.SECONDS);
        client.runScheduledPendingTasks();
        assertTrue(client.isActive(), "closed for a frame the gateway itself stopped reading");

        Thread.sleep(250); // past the unwritable timeout
        client.advanceTimeBy(1, TimeUnit.SECONDS);
        client.runScheduledPendingTasks();
        assertFalse(client.isActive(), "a client that takes nothing is still open past downstream.unwritable-timeout");
        assertEquals(1, MeterReadings.of(metrics).connectionsClosed(GatewayMetrics.BROKER, CloseReason.UNWRITABLE));
        assertEquals(0, MeterReadings.of(metrics).connectionsClosed(GatewayMetrics.BROKER, CloseReason.FRAME_TIMEOUT));
    }

    /** Once the gateway reads the client again, a frame that still does not complete times out, from then on. */
    @Test
    void aHalfReadFrameTimesOutOnceTheClientIsReadAgain() throws InterruptedException {
        connected();
        context.downstream(new DownstreamConfig(null, null, Duration.ofMillis(100), null, null));
        byte[] frame = Wire.request(RequestCode.GET_MAX_OFFSET).opaque(41).bytes();
        client.writeInbound(Unpooled.wrappedBuffer(frame, 0, frame.length - 3));
        client.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));
        client.write(Unpooled.wrappedBuffer(new byte[64]));
        Thread.sleep(150);
        client.flush(); // the client took it: writable, read again; the frame's time starts now
        client.releaseOutbound();
        assertTrue(client.config().isAutoRead());
        client.advanceTimeBy(1, TimeUnit.SECONDS);
        client.runScheduledPendingTasks();
        assertTrue(client.isActive(), "the time the gateway did not read it was counted against the frame");
        Thread.sleep(150);
        client.advanceTimeBy(1, TimeUnit.SECONDS);
        client.runScheduledPendingTasks();
        assertFalse(client.isActive());
        assertEquals(1, MeterReadings.of(metrics).connectionsClosed(GatewayMetrics.BROKER, CloseReason.FRAME_TIMEOUT));
    }

    @Test
    void anAnswerAHandlerDeferredIsInFlightUntilWritten() {
        RelaySession session = connected();
        send(Wire.request(DEFERRED).opaque(13));
        assertEquals(1, session.inFlight(), "deferred: the drain waits for its answer");
        assertNull(upstream.readOutbound());
        drain();
        assertEquals(1, session.inFlight());

        RemotingFrame request = deferred.remove(0);
        Exchange exchange = deferredExchanges.remove(0);
        int opaque = request.opaque();
        request.release();
        exchange.answer(Unpooled.wrappedBuffer(Wire.response(Wire.SUCCESS, opaque).remark("later").bytes()));
        Wire.Frame later = answer();
        assertEquals(13, later.opaque());
        assertEquals("later", later.remark());
        assertEquals(0, session.inFlight());
    }

    @Test
    void anAnswerWrittenInsideTheHandlersOwnCallIsNotLeftInFlight() {
        RelaySession session = connected();
        send(Wire.request(AT_ONCE).opaque(14));
        assertEquals(14, answer().opaque());
        assertEquals(0, session.inFlight(), "a deferred answer written before the handler returned");

        send(Wire.request(ANSWER_AT_ONCE).opaque(15));
        assertEquals(15, Wire.parse(bytes(upstream.readOutbound())).opaque());
        upstream.writeInbound(Unpooled.wrappedBuffer(Wire.response(Wire.SUCCESS, 15).bytes()));
        assertEquals(15, answer().opaque());
        assertEquals(0, session.inFlight(), "an upstream answer written inside onResponse");
    }
}
