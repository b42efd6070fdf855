package io.rmqgw.gateway.relay;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.BodyChunk;
import io.rmqgw.codec.frame.FrameBudgetExceededException;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.edge.HeaderUpgrade;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.ListenerMeters;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection and the upstream connection dialed for it (opaques pass through, so the
 * upstream's own requests reach this client). Both channels live on the client's event loop,
 * which owns every field here: no locks. Each request is treated by the handler its code is
 * registered with in the role's {@link HandlerTable}; unregistered codes pass through as the bytes
 * they arrived as. Where the upstream stands is a {@link SessionState}; reading on each side is
 * decided by the {@link ReadGate} alone, so a slow peer never grows the gateway's memory.
 */
public final class RelaySession implements ClientConnection {

    private static final Logger log = LoggerFactory.getLogger(RelaySession.class);
    private static final long TIMEOUT_SCAN_MILLIS = 500;
    /** While no upstream answers, a request dials again at most this often; the rest get the error at once. */
    private static final long REDIAL_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long REFUSAL_WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final AtomicLong lastRefusalWarnNanos = new AtomicLong(System.nanoTime() - REFUSAL_WARN_INTERVAL_NANOS);
    private static final AtomicLong lastSlowReaderWarnNanos = new AtomicLong(System.nanoTime() - REFUSAL_WARN_INTERVAL_NANOS);
    /**
     * Rate-limit refusals held on one connection at once ({@code rate-limits.refusal-delay}); past it a refusal is
     * answered at once, so a client that keeps sending does not grow what the gateway holds for it.
     */
    static final int MAX_HELD_REFUSALS = 64;
    /** What a request gets once the gateway stops; RocketMQ clients retry SYSTEM_BUSY on another broker. */
    static final String DRAINING_REMARK = "rmqgw is draining (stopping); retry another address";

    private final RelayContext context;
    private final UpstreamRole role;
    private final HandlerTable handlers;
    private final ListenerMeters meters;
    private final GatewayMetrics metrics;
    private final Channel client;
    private final String clientAddress;
    /** The client's source address, as the address rate limits see it. */
    private final RateLimits.Source source;
    private final PendingRequests pending = new PendingRequests();
    /**
     * Requests that need the upstream, read while a dial is under way: the one that started it and those read in
     * the same burst (the client is not read meanwhile: a frame too long to store whole could only stream).
     */
    private final ArrayDeque<RequestExchange> waiting = new ArrayDeque<>();
    private final StringBuilder connectFailures = new StringBuilder(64);
    private final ReadGate reads;
    /** The client's frame decoder: the sweep asks it how long its frame has been arriving. */
    private final FrameDecoder clientFrames;

    private SessionState state = new SessionState.Accepted();
    /** The MQVersion ordinal on the upstream connection's latest answer that set one; 0 while none did. */
    private int upstreamVersion;
    /** The header encoding of the client's latest request: what a mirroring answer uses. */
    private SerializeType clientEncoding;
    private boolean clientNeedsFlush;
    private boolean upstreamNeedsFlush;
    private boolean closeAfterBurst;
    private ScheduledFuture<?> timeoutScan;
    /**
     * Answers the client is owed: its requests (not oneway) read and not yet answered, wherever they
     * wait (dial, upstream, a handler's later answer). A malformed frame closes the connection only once
     * this is 0, so the requests read before it get their answers.
     */
    private int owedAnswers;
    /**
     * The upstream that took the head of the frame now streaming through, so its body follows; null when none
     * streams or its body is discarded (the head was answered here, or that upstream is gone).
     */
    private Channel streamTo;
    /** Since when ({@code System.nanoTime()}, never 0) a malformed frame ended the client's input; 0 while it is read. */
    private long inputEndedNanos;
    private boolean closeIssued;
    /** Why the upstream connection ended, when it said so (a TLS refusal); for the answers it leaves owed. */
    private String upstreamEnded;
    /**
     * Requests whose handler took them without forwarding or answering at once: it answers later through
     * {@link Exchange#answer} (a fan-out, a route answer waiting for its listeners). In flight like pending ones.
     */
    private volatile int deferredAnswers;
    /** The gateway's own answers written to the client and not yet taken by its socket. */
    private int composedQueued;
    private long composedQueuedBytes;
    /** Closed for a write backlog: later answers are released unwritten. */
    private boolean backlogClosed;
    /**
     * Rate-limit refusals composed and not yet written ({@link #answerRateLimited}), oldest first, each with the
     * timer that writes it; every one is owed an answer ({@link #owedAnswers}) and counts in {@link #inFlight}.
     */
    private final ArrayDeque<HeldRefusal> heldRefusals = new ArrayDeque<>();
    /** {@code heldRefusals.size()}, readable from any thread (the drain's count). */
    private volatile int heldRefusalCount;
    /** When the client's write buffer passed its high water mark; 0 while writable. */
    private long unwritableSinceNanos;
    /** The client was read or written to since the last idle check ({@link #closeIfIdle}). */
    private boolean clientActive;
    /** When an idle check last saw the client active ({@code System.nanoTime()}). */
    private long clientActiveNanos;

    private RelaySession(RelayContext context, UpstreamRole role, ListenerMeters meters, Channel client) {
        this.context = context;
        this.role = role;
        this.handlers = role.handlers();
        this.meters = meters;
        this.metrics = context.metrics();
        this.client = client;
        this.clientAddress = Addresses.of(client.remoteAddress());
        this.source = RateLimits.Source.of(client.remoteAddress());
        this.reads = new ReadGate(client);
        this.clientFrames = client.pipeline().get(FrameDecoder.class);
    }

    /** The pipeline for accepted client connections; the client is read only once its upstream is settled. */
    public static ChannelInitializer<Channel> clientInitializer(RelayContext context, ListenerMeters meters,
                                                                UpstreamRole role) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                DownstreamConfig downstream = context.downstream();
                ConnectionLimits.Refusal refusal = context.connections()
                    .admit(ch, downstream.maxConnections(), downstream.maxConnectionsPerAddress());
                if (refusal != null) {
                    refuse(context, role, ch, refusal, downstream);
                    return;
                }
                // the ReadGate's initial state: nothing is read before the session starts
                ch.config().setAutoRead(false);
                // first in the pipeline when TLS is on: TLS or plain is told from the first bytes
                context.tls().install(ch, role.handlers().role().label());
                ch.pipeline().addLast("meters", meters.clientHandler());
                ClientSide side = new ClientSide(context, meters, role);
                // frames up to max-incomplete-frame-bytes are stored whole; a large one may stream up to max-frame-length
                ch.pipeline().addLast("frames", new FrameDecoder(context.maxFrameLength(),
                    context.clientFrameLimit(downstream), FrameDecoder.LARGE_FRAME_LENGTH, context.incompleteFrames(),
                    side));
                ch.pipeline().addLast("relay", side);
            }
        };
    }

    /** Closes a connection refused at accept: logged (at most every 10 s at WARN) and counted. */
    private static void refuse(RelayContext context, UpstreamRole role, Channel ch, ConnectionLimits.Refusal refusal,
                               DownstreamConfig downstream) {
        context.metrics().connectionClosed(role.handlers().role().label(), CloseReason.CONNECTION_LIMIT);
        String why = refusal == ConnectionLimits.Refusal.TOTAL
            ? "the gateway holds downstream.max-connections (" + downstream.maxConnections() + ") client connections"
            : "its address holds downstream.max-connections-per-address (" + downstream.maxConnectionsPerAddress() + ")";
        long now = System.nanoTime();
        long last = lastRefusalWarnNanos.get();
        if (now - last >= REFUSAL_WARN_INTERVAL_NANOS && lastRefusalWarnNanos.compareAndSet(last, now)) {
            log.warn("refusing client connection {}: {} (further refusals within 10 s are logged at DEBUG)",
                Addresses.of(ch.remoteAddress()), why);
        } else {
            log.debug("refusing client connection {}: {}", Addresses.of(ch.remoteAddress()), why);
        }
        ch.close();
    }

    /** The session of an accepted client channel, or null before it is active (tests and diagnostics). */
    static RelaySession of(Channel client) {
        ClientSide side = client.pipeline().get(ClientSide.class);
        return side == null ? null : side.session;
    }

    @Override
    public Channel channel() {
        return client;
    }

    @Override
    public String address() {
        return clientAddress;
    }

    /** Requests forwarded and not answered yet, and those a handler will answer later; readable from any thread. */
    int inFlight() {
        return pending.size() + Math.max(0, deferredAnswers) + heldRefusalCount;
    }

    /** Requests forwarded upstream and not answered yet (no deferred ones); readable from any thread. */
    int forwardedInFlight() {
        return pending.size();
    }

    /** Bytes queued to the client and not yet taken by its socket; readable from any thread. */
    long queuedBytes() {
        io.netty.channel.ChannelOutboundBuffer out = client.unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    /** The state of this session's upstream (tests and diagnostics; exact on the event loop). */
    SessionState state() {
        return state;
    }

    @Override
    public SerializeType latestEncoding() {
        return clientEncoding;
    }

    @Override
    public ByteBuf forClient(RemotingFrame frame, CommandHeader decoded) {
        return reencodeForClient(frame, decoded, clientEncoding);
    }

    @Override
    public ByteBuf rebuiltForClient(RemotingFrame frame, CommandHeader header) {
        return rebuildForClient(frame, header, clientEncoding);
    }

    /** The encoding for the gateway's own answer to a request sent in {@code requestEncoding}. */
    private SerializeType answerEncoding(SerializeType requestEncoding) {
        return context.edge().towardClient(requestEncoding, requestEncoding);
    }

    /**
     * A client request's bytes in the upstream header encoding. Takes ownership of {@code frame}
     * and {@code decoded} (its header if the handler already decoded it, or null).
     */
    ByteBuf reencodeForUpstream(RemotingFrame frame, CommandHeader decoded) {
        return HeaderUpgrade.reencode(client.alloc(), metrics, frame, decoded, context.edge().upstreamEncoding());
    }

    /**
     * An upstream frame's bytes in the encoding this client should get; {@code requestEncoding} is
     * how the client sent the request being answered (or its latest request). Takes ownership of
     * {@code frame} and {@code decoded}.
     */
    ByteBuf reencodeForClient(RemotingFrame frame, CommandHeader decoded, SerializeType requestEncoding) {
        SerializeType target = context.edge().towardClient(requestEncoding, frame.encoding());
        return HeaderUpgrade.reencode(client.alloc(), metrics, frame, decoded, target);
    }

    /**
     * An upstream frame rebuilt with a changed {@code header}, in the encoding this client should
     * get. Takes ownership of {@code frame} and {@code header}.
     */
    ByteBuf rebuildForClient(RemotingFrame frame, CommandHeader header, SerializeType requestEncoding) {
        SerializeType target = context.edge().towardClient(requestEncoding, frame.encoding());
        return HeaderUpgrade.rebuild(client.alloc(), metrics, frame, header, target);
    }

    /**
     * {@code exchange}'s answer, exactly once (on the event loop): now, flushed with the read burst, while its
     * filters, handler or response handler treat it; flushed at once when its handler deferred it. A second answer,
     * or one to a request given up already (timed out, its connection closed), is released. Takes ownership.
     */
    void answer(RequestExchange exchange, ByteBuf answer) {
        switch (exchange.phase) {
            case TREATED, RESPONDING -> {
                exchange.phase = RequestExchange.Phase.DONE;
                if (exchange.oneway()) {
                    answer.release();
                    return;
                }
                writeComposed(answer);
                answered();
            }
            case DEFERRED -> {
                exchange.phase = RequestExchange.Phase.DONE;
                if (deferredAnswers > 0) {
                    deferredAnswers--;
                }
                writeComposed(answer);
                flushClient();
                answered();
                closeIfAnswered();
            }
            case FORWARDED, DONE -> {
                answer.release();
                if (!(state instanceof SessionState.Closed)) {
                    log.error("client {}: {} answered again; the second answer is dropped", clientAddress, exchange);
                }
            }
        }
    }

    /** After its handler returned without an answer to write: a request neither answered nor oneway is answered later. */
    private void deferUnlessAnswered(RequestExchange exchange) {
        RequestExchange.Phase phase = exchange.phase;
        if ((phase == RequestExchange.Phase.TREATED || phase == RequestExchange.Phase.RESPONDING) && !exchange.oneway()) {
            exchange.phase = RequestExchange.Phase.DEFERRED;
            deferredAnswers++;
        } else if (phase != RequestExchange.Phase.FORWARDED) {
            exchange.phase = RequestExchange.Phase.DONE;
        }
    }

    @Override
    public String idForLimits() {
        String id = context.clients().clientIdOf(client);
        return id != null ? id : "unidentified@" + source.ip();
    }

    @Override
    public RateLimits.Source sourceForLimits() {
        return source;
    }

    /**
     * The SYSTEM_BUSY answer to a request a rate limit refused, held {@code rate-limits.refusal-delay} before it is
     * written, so that a client retrying at once (as RocketMQ producers retry SYSTEM_BUSY) cannot spin: answered
     * once, when due, or at once when the delay is 0, {@value #MAX_HELD_REFUSALS} refusals are held already or the
     * gateway drains. Only this small answer is held (the request is the caller's to release); a oneway request is
     * dropped, logged at debug. On the event loop.
     */
    void answerRateLimited(RequestExchange exchange, String remark) {
        assert client.eventLoop().inEventLoop() : "answerRateLimited off the session's event loop";
        if (exchange.phase == RequestExchange.Phase.DONE) {
            return;
        }
        exchange.phase = RequestExchange.Phase.DONE;
        if (exchange.oneway()) {
            log.debug("client {}: oneway request code {} dropped: {}", clientAddress, exchange.code(), remark);
            return;
        }
        ByteBuf answer = Frames.errorResponse(client.alloc(), exchange.opaque(), exchange.answerEncoding(),
            RemotingSysResponseCode.SYSTEM_BUSY, remark);
        long delay = context.rateLimits().refusalDelayNanos();
        if (delay <= 0 || heldRefusals.size() >= MAX_HELD_REFUSALS || context.draining() || !client.isActive()) {
            writeComposed(answer);
            answered();
            return;
        }
        HeldRefusal held = new HeldRefusal(answer);
        heldRefusals.add(held);
        heldRefusalCount = heldRefusals.size();
        held.timer = client.eventLoop().schedule(() -> writeHeldRefusal(held), delay, TimeUnit.NANOSECONDS);
    }

    /** A held refusal's delay is over: written unless the drain wrote it or a close released it already. */
    private void writeHeldRefusal(HeldRefusal held) {
        if (!heldRefusals.remove(held)) {
            return;
        }
        heldRefusalCount = heldRefusals.size();
        writeComposed(held.answer);
        answered();
        flushClient();
        closeIfAnswered();
    }

    /** Every held refusal goes out now (the drain), each once: their timers find them gone. */
    private void writeHeldRefusals() {
        for (HeldRefusal h; (h = heldRefusals.poll()) != null; ) {
            h.timer.cancel(false);
            writeComposed(h.answer);
            answered();
        }
        heldRefusalCount = 0;
    }

    /** A closed connection's held refusals: released unwritten, their timers stopped. */
    private void releaseHeldRefusals() {
        for (HeldRefusal h; (h = heldRefusals.poll()) != null; ) {
            h.timer.cancel(false);
            h.answer.release();
        }
        heldRefusalCount = 0;
    }

    /** A rate-limit refusal's answer, held, and the timer that writes it. */
    private static final class HeldRefusal {
        final ByteBuf answer;
        ScheduledFuture<?> timer;

        HeldRefusal(ByteBuf answer) {
            this.answer = answer;
        }
    }

    /** The settings this session's frames are treated with (current at the time of the call). */
    EdgeSettings edge() {
        return context.edge();
    }

    GatewayMetrics metrics() {
        return metrics;
    }

    /**
     * Writes an answer the gateway composed (not one relayed from upstream, whose reading the {@link ReadGate}
     * stops instead): within {@code downstream.max-pending-writes} and {@code max-pending-write-bytes} of such
     * answers not yet taken by the client's socket, else the connection is closed. Takes ownership of
     * {@code answer}; flushed with the read burst or by the caller.
     */
    private void writeComposed(ByteBuf answer) {
        if (backlogClosed || !client.isOpen()) {
            answer.release();
            return;
        }
        int bytes = answer.readableBytes();
        if (!composedFits(bytes)) {
            // what the socket takes now completes and leaves the backlog; a reading client never gets further
            client.flush();
            clientNeedsFlush = false;
            if (!composedFits(bytes)) {
                answer.release();
                closeForBacklog();
                return;
            }
        }
        composedQueued++;
        composedQueuedBytes += bytes;
        client.write(answer).addListener(f -> {
            composedQueued--;
            composedQueuedBytes -= bytes;
        });
        clientNeedsFlush = true;
    }

    private boolean composedFits(int bytes) {
        DownstreamConfig limits = context.downstream();
        return composedQueued < limits.maxPendingWrites() && composedQueuedBytes + bytes <= limits.maxPendingWriteBytes();
    }

    private void closeForBacklog() {
        backlogClosed = true;
        DownstreamConfig limits = context.downstream();
        warnSlowReader("closing client {}: {} answers of the gateway's own ({} bytes) wait unread, the bound is {} answers"
                + " or {} bytes (downstream.max-pending-writes, max-pending-write-bytes)", clientAddress, composedQueued,
            composedQueuedBytes, limits.maxPendingWrites(), limits.maxPendingWriteBytes());
        metrics.connectionClosed(handlers.role().label(), CloseReason.WRITE_BACKLOG);
        client.close();
    }

    /** A client that reads nothing: WARN at most every 10 s across connections (the metric has the exact count). */
    private static void warnSlowReader(String format, Object... args) {
        long now = System.nanoTime();
        long last = lastSlowReaderWarnNanos.get();
        if (now - last >= REFUSAL_WARN_INTERVAL_NANOS && lastSlowReaderWarnNanos.compareAndSet(last, now)) {
            log.warn(format + " (more within 10 s at DEBUG)", args);
        } else {
            log.debug(format, args);
        }
    }

    /** The client's write buffer crossed a water mark: reads follow, and the unwritable clock starts or stops. */
    private void clientWritabilityChanged() {
        if (client.isWritable()) {
            unwritableSinceNanos = 0;
        } else if (unwritableSinceNanos == 0) {
            unwritableSinceNanos = System.nanoTime();
        }
        reads.clientWritabilityChanged();
    }

    /** A client whose write buffer stays full reads nothing, and holds what is queued to it: closed past the limit. */
    private void closeIfUnwritableTooLong() {
        Duration limit = context.downstream().unwritableTimeout();
        long since = unwritableSinceNanos;
        if (since == 0 || limit.isZero() || !client.isActive() || System.nanoTime() - since < limit.toNanos()) {
            return;
        }
        warnSlowReader("closing client {}: it has taken nothing from its write buffer ({} bytes queued) for {} ms"
                + " (downstream.unwritable-timeout {})", clientAddress, queuedBytes(),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since), limit);
        metrics.connectionClosed(handlers.role().label(), CloseReason.UNWRITABLE);
        backlogClosed = true;
        client.close();
    }

    // ---- drain ----

    /**
     * The gateway stops (on this session's loop, after {@link RelayContext#draining()} turned true): requests
     * read while a dial was under way never went upstream and get SYSTEM_BUSY, and so do long polls that
     * lose nothing by it; requests already upstream are left to finish.
     */
    void drainStarted() {
        // held rate-limit refusals go out now: the drain waits for nothing the session itself holds back
        writeHeldRefusals();
        for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
            waited.releaseHeader();
            waited.phase = RequestExchange.Phase.DONE;
            refuseDraining(waited.takeHeld());
        }
        for (RequestExchange p : pending.removeIf(p -> p.handler().cutShortWhenDraining())) {
            p.phase = RequestExchange.Phase.DONE;
            metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            writeComposed(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                RemotingSysResponseCode.SYSTEM_BUSY, DRAINING_REMARK));
            answered();
        }
        flushClient();
    }

    /** A request that arrived while the gateway drains: SYSTEM_BUSY at once, never upstream. Takes ownership. */
    private void refuseDraining(RemotingFrame frame) {
        if (frame.isOneway()) {
            log.debug("client {}: oneway request code {} dropped: the gateway is draining", clientAddress,
                frame.code());
            frame.release();
            return;
        }
        answerBusy(frame, DRAINING_REMARK);
    }

    /** Answers a request (not oneway) SYSTEM_BUSY with {@code remark}. Takes ownership. */
    private void answerBusy(RemotingFrame frame, String remark) {
        try {
            metrics.requestAnswered(frame.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            writeComposed(Frames.errorResponse(client.alloc(), frame.opaque(), answerEncoding(frame.encoding()),
                RemotingSysResponseCode.SYSTEM_BUSY, remark));
            answered();
        } finally {
            frame.release();
        }
    }

    /** Closes the client once what is queued to it is written (the upstream closes with it). */
    void closeAfterWrites(String reason) {
        client.eventLoop().execute(() -> {
            log.debug("closing {}: {}", clientAddress, reason);
            flushClient();
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        });
    }

    // ---- upstream dialing ----

    private void start() {
        context.register(this);
        clientActiveNanos = System.nanoTime();
        timeoutScan = client.eventLoop().scheduleAtFixedRate(this::sweep,
            TIMEOUT_SCAN_MILLIS, TIMEOUT_SCAN_MILLIS, TimeUnit.MILLISECONDS);
        if (role.local()) {
            state = state.local();
        }
        // nothing is dialed before the client's first request needs it: idle clients hold no upstream
        reads.dialing(false);
    }

    private void dial(List<String> targets, int index) {
        if (state instanceof SessionState.Closed) {
            return;
        }
        if (index >= targets.size()) {
            becomeUnavailable(targets.isEmpty() ? "no upstream configured" : connectFailures.toString());
            return;
        }
        String target = targets.get(index);
        state = state.dialing(target);
        reads.dialing(true);
        role.upstreamDialing(target);
        context.dialer().dial(target, client.eventLoop(), context.upstream().connectTimeoutMillis(), new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast("meters", meters.upstreamHandler());
                ch.pipeline().addLast("frames", new FrameDecoder(context.maxFrameLength()));
                ch.pipeline().addLast("relay", new UpstreamSide());
            }
        }).addListener((ChannelFutureListener) f -> {
            if (state instanceof SessionState.Closed) {
                role.upstreamResult(target, f.isSuccess()); // what the dial learned still counts for the next
                f.channel().close();
                return;
            }
            if (f.isSuccess()) {
                role.upstreamResult(target, true);
                state = state.connected(f.channel());
                upstreamVersion = 0;
                reads.upstream(f.channel());
                drainWaiting();
                reads.dialing(false);
            } else {
                role.upstreamResult(target, false);
                if (connectFailures.length() > 0) {
                    connectFailures.append("; ");
                }
                connectFailures.append(role.describe(target)).append(" unreachable: ")
                    .append(Addresses.describe(f.cause()));
                dial(targets, index + 1);
            }
        });
    }

    /**
     * Treats the requests read while dialing, once the dial settled (outside any read burst, so this
     * flushes and closes as a burst's end would). A frame that cannot be decoded closes the connection
     * as it would have in the pipeline.
     */
    private void drainWaiting() {
        try {
            for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
                RemotingFrame frame = waited.takeHeld();
                boolean owed = owesAnswer(frame);
                try {
                    proceed(waited, frame);
                } catch (RuntimeException e) {
                    if (owed) {
                        answered();
                    }
                    throw e;
                }
            }
        } catch (RuntimeException e) {
            // the frames read after the one that failed are dropped, as they would have been in the pipeline
            for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
                RemotingFrame frame = waited.takeHeld();
                if (owesAnswer(frame)) {
                    answered();
                }
                frame.release();
                waited.releaseHeader();
            }
            failed(client, "client", e);
        }
        clientReadComplete();
    }

    /** {@link #fromClient} for a frame already counted in {@link #owedAnswers}: one that fails is owed nothing. */
    private void relay(RemotingFrame frame) {
        boolean owed = owesAnswer(frame);
        try {
            fromClient(frame);
        } catch (RuntimeException e) {
            if (owed) {
                answered();
            }
            throw e;
        }
    }

    private static boolean owesAnswer(RemotingFrame frame) {
        return !frame.isResponse() && !frame.isOneway();
    }

    private void becomeUnavailable(String reason) {
        log.warn("client {}: {}", clientAddress, reason);
        context.metrics().upstreamFailure(UpstreamFailure.CONNECT_FAILED);
        state = state.unavailable(reason, System.nanoTime());
        drainWaiting();
        reads.dialing(false);
    }

    // ---- client -> upstream ----

    /**
     * Whether a large request streams through (asked by the client's frame decoder once its header arrived):
     * only a request with an answer, relayed now to a connected upstream by a handler that leaves its body as it
     * is. Everything else keeps being stored whole.
     */
    private boolean mayStream(RemotingFrame head) {
        return streamsOpen() && !head.isOneway() && handlers.streams(head);
    }

    /** Whether any request could stream now: a first request, for one, waits for its dial and is stored whole. */
    private boolean streamsOpen() {
        return state instanceof SessionState.Connected && waiting.isEmpty() && !inputEnded() && !context.draining();
    }

    /** Body bytes of the frame streaming through: on to the upstream that took its head, or released. */
    private void bodyChunk(BodyChunk chunk) {
        Channel to = streamTo;
        if (chunk.last()) {
            streamTo = null;
        }
        if (to != null && state instanceof SessionState.Connected c && c.channel() == to) {
            to.write(chunk.content(), to.voidPromise());
            upstreamNeedsFlush = true;
        } else {
            chunk.release();
        }
    }

    /**
     * The bytes a handler returned for a streamed head: its length prefix made the whole frame's (the header may
     * have changed size), and the upstream noted as where the body goes.
     */
    private ByteBuf headWithBody(ByteBuf out, int bodyLength, Channel upstream) {
        if (bodyLength > 0) {
            out.setInt(out.readerIndex(), out.readableBytes() - 4 + bodyLength);
            streamTo = upstream;
            metrics.frameStreamed();
        }
        return out;
    }

    private void fromClient(RemotingFrame frame) {
        assert client.eventLoop().inEventLoop() : "client frame off the session's event loop";
        if (frame.isResponse()) {
            // the client's answer to a broker's request (check-back, running info)
            if (state instanceof SessionState.Connected c) {
                c.channel().write(reencodeForUpstream(frame, null), c.channel().voidPromise());
                upstreamNeedsFlush = true;
            } else {
                log.debug("client {} answered opaque {} but its upstream is gone", clientAddress, frame.opaque());
                frame.release();
            }
            return;
        }
        if (context.draining() && !(frame.isOneway()
            && (state instanceof SessionState.Connected || state instanceof SessionState.Local))) {
            // a oneway holds nothing up and is still relayed; every other new request stays out of upstream
            refuseDraining(frame);
            return;
        }
        RequestExchange exchange = new RequestExchange(this, frame, System.nanoTime());
        exchange.handler(handlers.request(frame.code()));
        clientEncoding = frame.encoding();
        RemotingFrame admitted = filtered(exchange, frame);
        if (admitted != null) {
            proceed(exchange, admitted);
        } else {
            exchange.releaseHeader();
            deferUnlessAnswered(exchange);
        }
    }

    /**
     * The request after the role's filters for its code, in order, once per request (before any dial): null when
     * one answered, dropped or took it.
     */
    private RemotingFrame filtered(RequestExchange exchange, RemotingFrame frame) {
        RemotingFrame request = frame;
        for (RequestFilter filter : handlers.filters(frame.code())) {
            try {
                request = filter.filter(exchange, request);
            } catch (RuntimeException e) {
                exchange.releaseHeader();
                throw e;
            }
            if (request == null) {
                return null;
            }
        }
        return request;
    }

    /** A request its filters admitted: to the upstream through its handler, served here, or waiting for a dial. */
    private void proceed(RequestExchange exchange, RemotingFrame frame) {
        int streamed = frame.streamedBodyLength();
        boolean waits = false;
        try {
            if (state instanceof SessionState.Connected c) {
                forward(c.channel(), exchange, frame, streamed);
            } else if (streamed > 0) {
                // a head is offered only while connected: its body cannot wait for a dial
                answerWithoutUpstream(exchange, frame, "no upstream connection for a request streaming through");
            } else if (state instanceof SessionState.Local) {
                serveLocally(exchange, frame);
            } else if (state instanceof SessionState.Accepted) {
                // the first request that needs the upstream: it waits for the dial, like the ones read with it
                waits = waitForDial(exchange, frame);
                dial(role.upstreamTargets(), 0);
            } else if (state instanceof SessionState.Unavailable u) {
                if (System.nanoTime() - u.sinceNanos() >= REDIAL_INTERVAL_NANOS) {
                    // the upstream may be back: this request waits for a fresh dial, like the first one did
                    waits = waitForDial(exchange, frame);
                    connectFailures.setLength(0);
                    dial(role.upstreamTargets(), 0);
                } else {
                    answerWithoutUpstream(exchange, frame, u.reason());
                }
            } else if (state instanceof SessionState.Connecting) {
                waits = waitForDial(exchange, frame);
            } else {
                exchange.phase = RequestExchange.Phase.DONE;
                frame.release();
            }
        } finally {
            if (!waits) {
                exchange.releaseHeader();
            }
        }
    }

    private boolean waitForDial(RequestExchange exchange, RemotingFrame frame) {
        exchange.hold(frame);
        waiting.add(exchange);
        return true;
    }

    /** The request's handler gives the bytes for {@code upstream} (or answers it): sent, and pending if answered. */
    private void forward(Channel upstream, RequestExchange exchange, RemotingFrame frame, int streamed) {
        RequestHandler handler = exchange.handler();
        int code = exchange.code();
        ByteBuf out = handler.toUpstream(exchange, frame);
        if (out == null) {
            deferUnlessAnswered(exchange);
        } else if (exchange.oneway()) {
            exchange.phase = RequestExchange.Phase.DONE;
            metrics.oneway(code);
            upstream.write(headWithBody(out, streamed, upstream), upstream.voidPromise());
        } else {
            long sent = System.nanoTime();
            UpstreamSettings settings = context.upstream();
            long timeout = handler.longPolling() ? settings.longPollTimeoutNanos() : settings.requestTimeoutNanos();
            exchange.forwarded(sent, sent + timeout);
            pending.add(exchange);
            upstream.write(headWithBody(out, streamed, upstream), upstream.voidPromise());
        }
        upstreamNeedsFlush = true;
    }

    /**
     * A role without upstream: the handler answers (now or later through {@link Exchange#answer}).
     */
    private void serveLocally(RequestExchange exchange, RemotingFrame frame) {
        int code = frame.code();
        ByteBuf out = exchange.handler().toUpstream(exchange, frame);
        if (out != null) {
            // a handler that answers alone forwarded: there is nowhere to forward to
            out.release();
            log.error("client {}: handler of request code {} forwarded on {} a request it answers alone",
                clientAddress, code, handlers.role().label());
            exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, handlers.role().label() + " cannot serve request code " + code);
        }
        deferUnlessAnswered(exchange);
    }

    private void answerWithoutUpstream(RequestExchange exchange, RemotingFrame frame, String reason) {
        try {
            if (frame.isOneway()) {
                // a oneway request has no answer to carry the failure: say so by closing the connection
                log.warn("client {}: oneway request code {} dropped: {}", clientAddress, frame.code(), reason);
                context.metrics().connectionClosed(handlers.role().label(), CloseReason.ONEWAY_WITHOUT_UPSTREAM);
                closeAfterBurst = true;
                return;
            }
            long start = System.nanoTime();
            exchange.phase = RequestExchange.Phase.DONE;
            ByteBuf answer = exchange.handler().answerWithoutUpstream(exchange, frame, reason);
            if (answer != null) {
                metrics.requestCompleted(frame.code(), RemotingSysResponseCode.SUCCESS, System.nanoTime() - start, -1);
            } else {
                metrics.requestAnswered(frame.code(), RemotingSysResponseCode.SYSTEM_ERROR);
                // the connection stays open: clients retry on it at once, and a close would lose that retry
                answer = Frames.errorResponse(client.alloc(), frame.opaque(), answerEncoding(frame.encoding()),
                    RemotingSysResponseCode.SYSTEM_ERROR, reason);
            }
            writeComposed(answer);
            answered();
        } finally {
            frame.release();
        }
    }

    private void clientReadComplete() {
        clientActive = true;
        flushUpstream();
        flushClient();
        if (closeAfterBurst) {
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
        closeIfAnswered();
    }

    private void flushUpstream() {
        if (upstreamNeedsFlush && state instanceof SessionState.Connected c) {
            upstreamNeedsFlush = false;
            c.channel().flush();
        }
    }

    private void flushClient() {
        if (clientNeedsFlush) {
            clientNeedsFlush = false;
            clientActive = true;
            client.flush();
        }
    }

    // ---- upstream -> client ----

    private void fromUpstream(RemotingFrame frame) {
        // the upstream channel was dialed onto the client's loop: one loop owns both sides
        assert client.eventLoop().inEventLoop() : "upstream frame off the session's event loop";
        ByteBuf out;
        boolean response = frame.isResponse();
        if (response) {
            RequestExchange p = pending.remove(frame.opaque());
            if (p == null) {
                // answered already (timed out) or never asked: nobody waits for it
                log.debug("client {}: dropping late or unknown response opaque {}", clientAddress, frame.opaque());
                frame.release();
                return;
            }
            if (frame.version() != 0) {
                upstreamVersion = frame.version();
            }
            long received = System.nanoTime();
            int result = frame.code();
            p.phase = RequestExchange.Phase.RESPONDING;
            out = p.handler().onResponse(p, frame);
            if (p.phase == RequestExchange.Phase.FORWARDED) {
                return; // sent again by its handler: the next answer is the client's
            }
            role.upstreamAnswered();
            if (out == null) {
                deferUnlessAnswered(p);
            } else {
                p.phase = RequestExchange.Phase.DONE;
            }
            metrics.requestCompleted(p.code(), result,
                (p.sentNanos - p.startNanos()) + (System.nanoTime() - received), received - p.sentNanos);
        } else {
            out = handlers.upstreamRequest(frame.code()).toClient(this, frame);
        }
        if (out != null) {
            client.write(out, client.voidPromise());
            clientNeedsFlush = true;
            if (response) {
                answered();
            }
        }
    }

    /** {@link Exchange#resend}: on the event loop, from the request's response handler. Takes ownership. */
    void resend(RequestExchange exchange, ByteBuf request) {
        if (exchange.phase != RequestExchange.Phase.RESPONDING || !(state instanceof SessionState.Connected c)) {
            request.release();
            throw new IllegalStateException("resend of " + exchange + " outside its response handler");
        }
        long sent = System.nanoTime();
        exchange.forwarded(sent, sent + (exchange.deadlineNanos - exchange.sentNanos));
        pending.add(exchange);
        c.channel().writeAndFlush(request, c.channel().voidPromise());
    }

    int upstreamVersion() {
        return upstreamVersion;
    }

    /** The connected upstream's channel, or null. */
    Channel upstreamChannel() {
        return state instanceof SessionState.Connected c ? c.channel() : null;
    }

    private void upstreamLost(Channel upstream) {
        if (!(state instanceof SessionState.Connected c) || c.channel() != upstream) {
            return;
        }
        String reason = "connection to " + role.describe(c.target()) + " closed"
            + (upstreamEnded == null ? "" : " (" + upstreamEnded + ")");
        // requests still arriving before the close below get this error, not a fresh dial
        state = state.lost(reason, System.nanoTime());
        // counted before any answer goes out: whoever reads the answers may look at the metric next
        context.metrics().connectionClosed(handlers.role().label(), CloseReason.UPSTREAM_CLOSED);
        reads.upstream(null);
        List<RequestExchange> orphans = pending.drain();
        try {
            if (!orphans.isEmpty()) {
                context.metrics().upstreamFailure(UpstreamFailure.CONNECTION_LOST);
                for (RequestExchange p : orphans) {
                    p.phase = RequestExchange.Phase.DONE;
                    answered();
                    metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_ERROR);
                    writeComposed(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                        RemotingSysResponseCode.SYSTEM_ERROR, reason + " before answering request code " + p.code()));
                }
            }
        } finally {
            // an answer that could not be allocated still closes the client, which then knows its requests failed
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /**
     * The periodic scan: a failure in it (an answer that could not be allocated) closes this connection instead of
     * ending the scan, which would leave the connection's timeouts unwatched for good.
     */
    private void sweep() {
        try {
            expireTimedOut();
        } catch (Throwable t) {
            failed(client, "client", t);
        }
    }

    private void expireTimedOut() {
        closeIfAFrameStalled();
        reportSuppressedMalformedLines();
        closeIfAnswersAreOverdue();
        closeIfUnwritableTooLong();
        closeIfIdle();
        if (pending.size() == 0) {
            return;
        }
        List<RequestExchange> expired = pending.expire(System.nanoTime());
        if (expired.isEmpty()) {
            return;
        }
        String target = state instanceof SessionState.Connected c ? c.target() : "upstream";
        for (RequestExchange p : expired) {
            p.phase = RequestExchange.Phase.DONE;
            answered();
            context.metrics().upstreamFailure(UpstreamFailure.TIMEOUT);
            metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_BUSY);
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - p.startNanos());
            writeComposed(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                RemotingSysResponseCode.SYSTEM_BUSY,
                role.describe(target) + " did not answer request code " + p.code() + " within " + waitedMillis + " ms"));
        }
        flushClient();
        closeIfAnswered();
    }

    /**
     * A frame that began to arrive and never completes (slowloris) would hold its buffer for ever. Its time runs
     * only while the gateway reads the client: one the gateway stopped reading (a client that takes none of its
     * answers is closed by {@link #closeIfUnwritableTooLong}) stalls because of the gateway, and its frame's time
     * starts again when its reads resume.
     */
    private void closeIfAFrameStalled() {
        Duration limit = context.downstream().frameTimeout();
        FrameDecoder frames = clientFrames;
        long since = frames == null ? 0 : frames.partialFrameSinceNanos();
        if (since == 0 || limit.isZero() || !client.isActive() || !reads.clientRead()) {
            return;
        }
        long resumed = reads.clientReadSinceNanos();
        if (resumed != 0 && resumed - since > 0) {
            since = resumed;
        }
        if (System.nanoTime() - since < limit.toNanos()) {
            return;
        }
        logClose("client", client, "a frame began to arrive " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since)
            + " ms ago and is still incomplete (downstream.frame-timeout " + limit + ")", false);
        metrics.connectionClosed(handlers.role().label(), CloseReason.FRAME_TIMEOUT);
        client.close();
    }

    /**
     * All-idle, as brokers: neither read from nor written to for {@code downstream.idle-timeout}, and nothing in
     * flight (a consumer waiting on a long poll gets its answer within it). Told by the scan from a flag the read
     * bursts and flushes set: an IdleStateHandler per connection put a listener on every write (about 1.5% of
     * the gateway's CPU under load).
     */
    private void closeIfIdle() {
        long now = System.nanoTime();
        Duration timeout = context.downstream().idleTimeout();
        if (clientActive || timeout.isZero()) {
            clientActive = false;
            clientActiveNanos = now;
        } else if (now - clientActiveNanos >= timeout.toNanos()) {
            idle();
        }
    }

    /** No traffic either way for the idle timeout: closed unless a request is still in flight. */
    private void idle() {
        if (pending.size() > 0 || !waiting.isEmpty() || deferredAnswers > 0) {
            return;
        }
        log.info("closing client {}: no traffic for {}", clientAddress, context.downstream().idleTimeout());
        metrics.connectionClosed(handlers.role().label(), CloseReason.IDLE);
        client.close();
    }

    private void closed() {
        state = state.closed();
        if (timeoutScan != null) {
            timeoutScan.cancel(false);
        }
        pending.drain();
        deferredAnswers = 0;
        releaseHeldRefusals();
        for (RequestExchange waited; (waited = waiting.poll()) != null; ) {
            waited.takeHeld().release();
            waited.releaseHeader();
        }
        context.unregister(this);
    }

    private void failed(Channel channel, String side, Throwable cause) {
        String tlsRefusal = channel == client ? null : Dialer.tlsRefusal(cause);
        if (cause instanceof MalformedFrameException m) {
            boolean answersOwed = channel == client && owedAnswers > 0;
            logClose(side, channel, m.getMessage(), answersOwed);
            context.metrics().decodeError(m.reason());
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.MALFORMED_FRAME);
            if (channel == client) {
                endInput();
                return;
            }
        } else if (cause instanceof FrameBudgetExceededException b && channel == client) {
            logClose(side, channel, "downstream.incomplete-frame-budget: " + b.getMessage(), owedAnswers > 0);
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.INCOMPLETE_FRAME_BUDGET);
            endInput();
            return;
        } else if (AllocationFailures.isAllocationFailure(cause)) {
            // Netty closes a channel whose read found no memory; any other allocation closes it here. The others go on.
            context.allocationFailures().record();
            logClose(side, channel, "no memory for it: " + cause, false);
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.ALLOCATION_FAILED);
        } else if (tlsRefusal != null) {
            upstreamEnded = tlsRefusal;
            log.warn("client {}: upstream {}: {}", clientAddress, Addresses.of(channel.remoteAddress()), upstreamEnded);
        } else if (cause instanceof IOException) {
            log.debug("{} connection {}: {}", side, Addresses.of(channel.remoteAddress()), cause.toString());
        } else {
            log.warn("closing {} connection {}", side, Addresses.of(channel.remoteAddress()), cause);
            context.metrics().connectionClosed(handlers.role().label(), CloseReason.INTERNAL_ERROR);
        }
        channel.close();
    }

    /**
     * A malformed frame ended the client's input (framing is lost): nothing more is relayed, but the
     * requests read before it still get their answers, then the connection closes
     * ({@link #closeIfAnswered}); answers still owed after {@code upstream.request-timeout} get
     * SYSTEM_ERROR ({@link #closeIfAnswersAreOverdue}). The client is still read meanwhile, its bytes
     * discarded by the decoder: a socket closed with unread bytes is reset by the kernel, which may
     * drop the last answers before they reach the client.
     */
    private void endInput() {
        if (inputEndedNanos == 0) {
            inputEndedNanos = System.nanoTime() | 1;
        }
        closeIfAnswered();
    }

    private boolean inputEnded() {
        return inputEndedNanos != 0;
    }

    /** One answer the client was owed went out (or was given up). */
    private void answered() {
        if (owedAnswers > 0) {
            owedAnswers--;
        }
    }

    /** Closes a client whose input ended once it is owed nothing more (its last answers flushed first). */
    private void closeIfAnswered() {
        if (!inputEnded() || closeIssued || owedAnswers > 0) {
            return;
        }
        closeIssued = true;
        client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    /** Answers still owed long after the client's input ended: each gets SYSTEM_ERROR, then the close. */
    private void closeIfAnswersAreOverdue() {
        if (!inputEnded() || closeIssued || System.nanoTime() - inputEndedNanos < context.upstream().requestTimeoutNanos()) {
            return;
        }
        for (RequestExchange p : pending.drain()) {
            p.phase = RequestExchange.Phase.DONE;
            metrics.requestAnswered(p.code(), RemotingSysResponseCode.SYSTEM_ERROR);
            client.write(Frames.errorResponse(client.alloc(), p.opaque(), answerEncoding(p.encoding()),
                RemotingSysResponseCode.SYSTEM_ERROR, "request code " + p.code()
                    + " not answered in time; the gateway closes this connection after its malformed frame"),
                client.voidPromise());
        }
        owedAnswers = 0;
        closeIfAnswered();
    }

    /**
     * The WARN for a connection closed for what its peer sent (malformed or over-budget frames, a frame
     * never finished): a peer can cause these at will, so they go through the gateway-wide limiter.
     */
    private void logClose(String side, Channel channel, String why, boolean answersOwed) {
        String after = answersOwed ? " (after the answers it is owed)" : "";
        long suppressed = context.peerCloseLog().tryAcquire();
        if (suppressed == LogRateLimiter.SUPPRESS) {
            log.debug("closing {} connection {}{}: {}", side, Addresses.of(channel.remoteAddress()), after, why);
        } else if (suppressed > 0) {
            log.warn("closing {} connection {}{}: {} ({} more such lines were not logged; "
                + "rmqgw_connections_closed_total counts each)", side, Addresses.of(channel.remoteAddress()), after, why,
                suppressed);
        } else {
            log.warn("closing {} connection {}{}: {}", side, Addresses.of(channel.remoteAddress()), after, why);
        }
    }

    /** A flood of such closes that stopped is still reported: one line with the count not logged. */
    private void reportSuppressedMalformedLines() {
        long suppressed = context.peerCloseLog().takeSuppressed();
        if (suppressed > 0) {
            LogRateLimiter limits = context.peerCloseLog();
            log.warn("{} more connections closed for what their peers sent (malformed, over-budget or unfinished "
                + "frames) were not logged (at most {} lines per {}; rmqgw_connections_closed_total counts each)",
                suppressed, limits.linesPerInterval(), limits.interval());
        }
    }

    /** The client side of a session: created per accepted connection. */
    private static final class ClientSide extends ChannelInboundHandlerAdapter implements FrameDecoder.CutThrough {

        private final RelayContext context;
        private final ListenerMeters meters;
        private final UpstreamRole role;
        private RelaySession session;

        ClientSide(RelayContext context, ListenerMeters meters, UpstreamRole role) {
            this.context = context;
            this.meters = meters;
            this.role = role;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            session = new RelaySession(context, role, meters, ctx.channel());
            session.start();
            ctx.fireChannelActive();
        }

        @Override
        public boolean stream(RemotingFrame head) {
            return session != null && session.mayStream(head);
        }

        @Override
        public boolean open() {
            return session != null && session.streamsOpen();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof BodyChunk chunk) {
                if (session != null) {
                    session.bodyChunk(chunk);
                } else {
                    chunk.release();
                }
                return;
            }
            if (session != null) {
                // a head not taken by an upstream (refused, answered here, dropped) has its body discarded
                session.streamTo = null;
            }
            if (session == null || !(msg instanceof RemotingFrame frame) || session.inputEnded()) {
                // after a malformed frame nothing more is relayed
                ReferenceCountUtil.release(msg);
                return;
            }
            if (owesAnswer(frame)) {
                session.owedAnswers++;
            }
            session.relay(frame);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (session != null) {
                session.clientReadComplete();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (session != null) {
                session.clientWritabilityChanged();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (session != null) {
                SessionState before = session.state;
                session.closed();
                if (before instanceof SessionState.Connected c) {
                    c.channel().close();
                }
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (session != null) {
                session.failed(ctx.channel(), "client", cause);
            } else {
                ctx.close();
            }
        }
    }

    /** The upstream side of a session. */
    private final class UpstreamSide extends ChannelInboundHandlerAdapter {

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof RemotingFrame frame) {
                fromUpstream(frame);
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            flushClient();
            closeIfAnswered();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (!(state instanceof SessionState.Closed)) {
                reads.upstreamWritabilityChanged();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            upstreamLost(ctx.channel());
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            failed(ctx.channel(), "upstream", cause);
        }
    }
}
