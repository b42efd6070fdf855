package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.rmqgw.codec.frame.BodyChunk;
import io.rmqgw.codec.frame.FrameBudgetExceededException;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.edge.HeaderReencoder;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.ListenerMeters;
import java.io.IOException;
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
    /** What a request gets once the gateway stops; RocketMQ clients retry SYSTEM_BUSY on another broker. */
    static final String DRAINING_REMARK = "rmqgw is draining (stopping); retry another address";

    private final RelayContext context;
    private final UpstreamRole role;
    private final String roleLabel;
    private final ListenerMeters meters;
    private final GatewayMetrics metrics;
    private final Channel client;
    private final String clientAddress;
    /** The client's source address, as the address rate limits see it. */
    private final RateLimits.Source source;
    /** The requests forwarded upstream, and their answers. */
    private final UpstreamAnswers answers;
    /** Each request's answer, once, and those its handler gives later. */
    private final Replies replies;
    /** The client's requests on their way: filters, handlers, the upstream or a wait for its dial. */
    private final ClientRequests requests;
    /** The upstream connection: its state, dial, writes and what its answers tell. */
    private final UpstreamLink link;
    /** The timeouts' scan. */
    private final SessionSweep sweep;
    /** The client's input and the answers it is owed. */
    private final ClientInput input;
    /** What the session writes to its client: the bound on its own answers, flushes, the idle and unwritable clocks. */
    private final ClientWrites writes;
    private final ReadGate reads;
    /** The client's frame decoder: the sweep asks it how long its frame has been arriving. */
    private final FrameDecoder clientFrames;

    /** The header encoding of the client's latest request: what a mirroring answer uses. */
    private SerializeType clientEncoding;
    private boolean closeAfterBurst;

    private RelaySession(RelayContext context, UpstreamRole role, ListenerMeters meters, Channel client) {
        this.context = context;
        this.role = role;
        this.roleLabel = role.handlers().role().label();
        this.meters = meters;
        this.metrics = context.metrics();
        this.client = client;
        this.clientAddress = Addresses.of(client.remoteAddress());
        this.source = RateLimits.Source.of(client.remoteAddress());
        this.reads = new ReadGate(client);
        this.input = new ClientInput(client);
        this.link = new UpstreamLink(this, context, role, meters, reads);
        this.writes = new ClientWrites(client, context, metrics, roleLabel);
        this.replies = new Replies(this, context, writes, input);
        this.answers = new UpstreamAnswers(this, context, role, link, writes, input);
        this.requests = new ClientRequests(this, context, role, link, answers, writes, input);
        this.sweep = new SessionSweep(this, client, context, reads, roleLabel);
        this.clientFrames = client.pipeline().get(FrameDecoder.class);
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
        return answers.size() + replies.deferred() + replies.heldRefusals();
    }

    /** Requests forwarded upstream and not answered yet (no deferred ones); readable from any thread. */
    int forwardedInFlight() {
        return answers.size();
    }

    /** Bytes queued to the client and not yet taken by its socket; readable from any thread. */
    long queuedBytes() {
        return writes.queuedBytes();
    }

    /** The state of this session's upstream (tests and diagnostics; exact on the event loop). */
    SessionState state() {
        return link.state();
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
    SerializeType answerEncoding(SerializeType requestEncoding) {
        return context.edge().towardClient(requestEncoding, requestEncoding);
    }

    /**
     * A client request's bytes in the upstream header encoding. Takes ownership of {@code frame}
     * and {@code decoded} (its header if the handler already decoded it, or null).
     */
    ByteBuf reencodeForUpstream(RemotingFrame frame, CommandHeader decoded) {
        return HeaderReencoder.reencode(client.alloc(), metrics, frame, decoded, context.edge().upstreamEncoding());
    }

    /**
     * An upstream frame's bytes in the encoding this client should get; {@code requestEncoding} is
     * how the client sent the request being answered (or its latest request). Takes ownership of
     * {@code frame} and {@code decoded}.
     */
    ByteBuf reencodeForClient(RemotingFrame frame, CommandHeader decoded, SerializeType requestEncoding) {
        SerializeType target = context.edge().towardClient(requestEncoding, frame.encoding());
        return HeaderReencoder.reencode(client.alloc(), metrics, frame, decoded, target);
    }

    /**
     * An upstream frame rebuilt with a changed {@code header}, in the encoding this client should
     * get. Takes ownership of {@code frame} and {@code header}.
     */
    ByteBuf rebuildForClient(RemotingFrame frame, CommandHeader header, SerializeType requestEncoding) {
        SerializeType target = context.edge().towardClient(requestEncoding, frame.encoding());
        return HeaderReencoder.rebuild(client.alloc(), metrics, frame, header, target);
    }

    void answer(RequestExchange exchange, ByteBuf answer) {
        replies.answer(exchange, answer);
    }

    void deferUnlessAnswered(RequestExchange exchange) {
        replies.deferUnlessAnswered(exchange);
    }

    void answerRateLimited(RequestExchange exchange, String remark) {
        replies.answerRateLimited(exchange, remark);
    }

    /** Whether the client connection closed (the session is over). */
    boolean isClosed() {
        return link.state() instanceof SessionState.Closed;
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

    /** The settings this session's frames are treated with (current at the time of the call). */
    EdgeSettings edge() {
        return context.edge();
    }

    GatewayMetrics metrics() {
        return metrics;
    }

    // ---- drain ----

    /**
     * The gateway stops (on this session's loop, after {@link RelayContext#draining()} turned true): requests
     * read while a dial was under way never went upstream and get SYSTEM_BUSY, and so do long polls that
     * lose nothing by it; requests already upstream are left to finish.
     */
    void drainStarted() {
        input.draining(true);
        // held rate-limit refusals go out now: the drain waits for nothing the session itself holds back
        replies.writeHeldRefusals();
        requests.drainStarted();
        answers.cutShortForDrain(DRAINING_REMARK);
        writes.flush();
    }

    /** Closes the client once what is queued to it is written (the upstream closes with it). */
    void closeAfterWrites(String reason) {
        client.eventLoop().execute(() -> {
            log.debug("closing {}: {}", clientAddress, reason);
            writes.flush();
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        });
    }

    // ---- upstream dialing ----

    /** The session of a client connection now active: registered, its timeouts watched, nothing dialed yet. */
    static RelaySession start(RelayContext context, UpstreamRole role, ListenerMeters meters, Channel client) {
        RelaySession session = new RelaySession(context, role, meters, client);
        session.start();
        return session;
    }

    /** A frame read from the client (its decoder's output). */
    void read(RemotingFrame frame) {
        requests.read(frame);
    }

    /** The client's frame decoder: the sweep asks it how long its frame has been arriving. */
    FrameDecoder clientFrames() {
        return clientFrames;
    }

    /** Whether a malformed frame ended the client's input: nothing more is relayed. */
    boolean inputEnded() {
        return input.ended();
    }

    /** A head not taken by an upstream (refused, answered here, dropped): its body is discarded as it arrives. */
    void headNotStreamed() {
        link.headNotStreamed();
    }

    /** The client connection closed: so does the upstream one. */
    void clientClosed() {
        closed();
    }

    void upstreamReadComplete() {
        writes.flush();
        input.closeIfAnswered();
    }

    void upstreamWritabilityChanged() {
        if (!(link.state() instanceof SessionState.Closed)) {
            reads.upstreamWritabilityChanged();
        }
    }

    void latestEncoding(SerializeType encoding) {
        this.clientEncoding = encoding;
    }

    /** The client's connection closes once this read burst is written (a oneway it could not be told of). */
    void closeAfterBurst() {
        this.closeAfterBurst = true;
    }

    private void start() {
        context.register(this);
        sweep.start();
        if (role.local()) {
            link.local();
        }
        // nothing is dialed before the client's first request needs it: idle clients hold no upstream
        reads.dialing(false);
    }

    // ---- client -> upstream ----

    /** Whether a large request streams through (asked by the client's frame decoder once its header arrived). */
    boolean mayStream(RemotingFrame head) {
        return requests.mayStream(head);
    }

    /** Whether any request could stream now. */
    boolean streamsOpen() {
        return requests.streamsOpen();
    }

    void dialSettled() {
        requests.dialSettled();
    }

    /** Body bytes of the frame streaming through: on to the upstream that took its head, or released. */
    void bodyChunk(BodyChunk chunk) {
        link.bodyChunk(chunk);
    }

    /** The client's write buffer crossed a water mark: reads follow, and the unwritable clock starts or stops. */
    void clientWritabilityChanged() {
        writes.writabilityChanged();
        reads.clientWritabilityChanged();
    }

    void clientReadComplete() {
        writes.active();
        link.flush();
        writes.flush();
        if (closeAfterBurst) {
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
        input.closeIfAnswered();
    }

    // ---- upstream -> client ----

    int upstreamVersion() {
        return link.version();
    }

    void fromUpstream(RemotingFrame frame) {
        answers.fromUpstream(frame);
    }

    void resend(RequestExchange exchange, ByteBuf request) {
        answers.resend(exchange, request);
    }

    HandlerTable handlers() {
        return role.handlers();
    }

    /** The connected upstream's channel, or null. */
    Channel upstreamChannel() {
        return link.channel();
    }

    void upstreamLost(Channel upstream) {
        String reason = link.lost(upstream);
        if (reason == null) {
            return;
        }
        // counted before any answer goes out: whoever reads the answers may look at the metric next
        context.metrics().connectionClosed(roleLabel, CloseReason.UPSTREAM_CLOSED);
        try {
            answers.lost(reason);
        } finally {
            // an answer that could not be allocated still closes the client, which then knows its requests failed
            client.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** The sweep's due checks of the session's own: overdue answers, the client's write and idle clocks, timeouts. */
    void timeoutsDue() {
        if (input.overdue(context.upstream().requestTimeoutNanos())) {
            answers.giveUpAfterMalformedFrame();
            input.answeredAll();
            input.closeIfAnswered();
        }
        writes.closeIfUnwritableTooLong();
        if (writes.idleTooLong()) {
            idle();
        }
        if (answers.expire()) {
            writes.flush();
            input.closeIfAnswered();
        }
    }

    /**
     * No traffic either way for {@code downstream.idle-timeout} (as brokers close all-idle connections): closed unless
     * a request is still in flight (a consumer waiting on a long poll gets its answer within it).
     */
    private void idle() {
        if (answers.size() > 0 || requests.waiting() || replies.deferred() > 0) {
            return;
        }
        log.info("closing client {}: no traffic for {}", clientAddress, context.downstream().idleTimeout());
        metrics.connectionClosed(roleLabel, CloseReason.IDLE);
        client.close();
    }

    private void closed() {
        link.closed();
        sweep.stop();
        answers.drop();
        replies.releaseHeldRefusals();
        requests.closed();
        context.unregister(this);
    }

    void failed(Channel channel, String side, Throwable cause) {
        String tlsRefusal = channel == client ? null : Dialer.tlsRefusal(cause);
        if (cause instanceof MalformedFrameException m) {
            boolean answersOwed = channel == client && input.owed() > 0;
            PeerCloses.logClose(context.peerCloseLog(), side, channel, m.getMessage(), answersOwed);
            context.metrics().decodeError(m.reason());
            context.metrics().connectionClosed(roleLabel, CloseReason.MALFORMED_FRAME);
            if (channel == client) {
                input.end();
                return;
            }
        } else if (cause instanceof FrameBudgetExceededException b && channel == client) {
            PeerCloses.logClose(context.peerCloseLog(), side, channel, "downstream.incomplete-frame-budget: " + b.getMessage(), input.owed() > 0);
            context.metrics().connectionClosed(roleLabel, CloseReason.INCOMPLETE_FRAME_BUDGET);
            input.end();
            return;
        } else if (AllocationFailures.isAllocationFailure(cause)) {
            // Netty closes a channel whose read found no memory; any other allocation closes it here. The others go on.
            context.allocationFailures().record();
            PeerCloses.logClose(context.peerCloseLog(), side, channel, "no memory for it: " + cause, false);
            context.metrics().connectionClosed(roleLabel, CloseReason.ALLOCATION_FAILED);
        } else if (tlsRefusal != null) {
            link.ended(tlsRefusal);
            log.warn("client {}: upstream {}: {}", clientAddress, Addresses.of(channel.remoteAddress()), tlsRefusal);
        } else if (cause instanceof IOException) {
            log.debug("{} connection {}: {}", side, Addresses.of(channel.remoteAddress()), cause.toString());
        } else {
            log.warn("closing {} connection {}", side, Addresses.of(channel.remoteAddress()), cause);
            context.metrics().connectionClosed(roleLabel, CloseReason.INTERNAL_ERROR);
        }
        channel.close();
    }

}
