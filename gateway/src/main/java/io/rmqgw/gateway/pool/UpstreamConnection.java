package io.rmqgw.gateway.pool;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.core.AllocationFailures;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.RequestSigner;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.gateway.pool.ResponseTable.Pending;
import io.rmqgw.gateway.pool.UpstreamException.Reason;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.routing.NamesrvAddresses;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's own multiplexed connection to one broker (or to the name servers, in failover order):
 * requests get this connection's opaques, wait in its {@link ResponseTable}, and their answers are
 * handed to the caller on the caller's executor.
 *
 * <p>Threads: every field below {@link #admitted} belongs to {@link #loop}, the event loop the channel
 * is registered on; a call from any other thread hops onto it with {@code execute}. {@link #admitted}
 * is the one field read and written elsewhere: callers reserve their slot there before the hop, so a
 * full connection refuses at once instead of queueing tasks on its loop.
 *
 * <p>Life: dialed on the first request, reused while it stays up, dialed again by the next request
 * after a loss. Requests arriving while it dials wait for the dial (at most {@code maxInFlight} of them).
 */
public final class UpstreamConnection {

    /** What the connection leads to. */
    public enum Kind { BROKER, NAMESRV }

    private static final Logger log = LoggerFactory.getLogger(UpstreamConnection.class);
    private static final long TIMEOUT_SCAN_MILLIS = 500;
    /** The version gateway-built requests carry: V5_0_0, so name servers answer standard JSON. */
    private static final int REQUEST_VERSION = 453;
    private static final int ONEWAY_FLAG = 1 << 1;

    private final RelayContext context;
    private final UpstreamPool pool;
    private final Kind kind;
    /** The broker's {@code ip:port}; null for the name-server connection (it follows the configured list). */
    private final String address;
    private final EventLoop loop;
    private final int maxInFlight;
    /** Requests accepted and not yet finished (waiting for the dial, in the table, or oneway being written). */
    private final AtomicInteger admitted = new AtomicInteger();
    /** Where the latest dial went; volatile only so {@link #describe} may be called from any thread. */
    private volatile String target;
    /** Mirrors {@code state instanceof Connected} for readers on other threads. */
    private volatile boolean connected;

    // ---- owned by loop ----
    private final ResponseTable table = new ResponseTable();
    private final ArrayDeque<Outgoing> dialWaiters = new ArrayDeque<>();
    private PooledState state = new PooledState.Idle();
    private int nextOpaque;
    private ScheduledFuture<?> timeoutScan;
    /** Why the channel is being closed by us (a malformed frame), for the loss message. */
    private String closeReason;

    UpstreamConnection(RelayContext context, UpstreamPool pool, Kind kind, String address, EventLoop loop,
                       int maxInFlight) {
        this.context = context;
        this.pool = pool;
        this.kind = kind;
        this.address = address;
        this.target = address;
        this.loop = loop;
        this.maxInFlight = maxInFlight;
    }

    /** Why the connection is closing (for the requests it fails), set by its channel handler. */
    void closeReason(String why) {
        this.closeReason = why;
    }

    RelayContext context() {
        return context;
    }

    // ---------------------------------------------------------------- API (any thread)

    /**
     * Sends a request with {@code code} and {@code extFields} (may be null) and no remark.
     *
     * @see #request(RemotingHeader, ByteBuf, long, EventExecutor)
     */
    public Future<RemotingFrame> request(int code, Map<String, String> extFields, ByteBuf body, long timeoutNanos,
                                         EventExecutor replyOn) {
        return request(new RemotingHeader(code, LanguageCode.JAVA, REQUEST_VERSION, 0, 0, null, extFields), body,
            timeoutNanos, replyOn);
    }

    /**
     * Sends a request and returns its answer. The connection assigns the opaque and the flag (the ones
     * in {@code header} are ignored) and writes the header in the upstream encoding
     * ({@code upstream.header-encoding}; ROCKETMQ binary when it preserves the client's).
     *
     * <p>Takes ownership of {@code body} (may be null), released on every path. The future completes on
     * {@code replyOn}: with the response frame, which the caller then owns and must release, or with an
     * {@link UpstreamException} (connect failure, connection lost, timeout after {@code timeoutNanos},
     * busy, closed). A response arriving after the future failed is released and dropped. Cancelling the
     * future does not withdraw the request: it holds its in-flight slot until answered or timed out, and
     * the answer is then released.
     *
     * @param timeoutNanos how long to wait for the answer, dial included (positive); checked every 500 ms
     */
    public Future<RemotingFrame> request(RemotingHeader header, ByteBuf body, long timeoutNanos, EventExecutor replyOn) {
        Promise<RemotingFrame> response = replyOn.newPromise();
        long start = System.nanoTime();
        admit(header, body, start, start + timeoutNanos, response, null, replyOn);
        return response;
    }

    /**
     * Sends a oneway request (no answer expected). Takes ownership of {@code body} (may be null). The
     * future completes on {@code replyOn} once the request is written, or fails as {@link #request} does.
     */
    public Future<Void> oneway(RemotingHeader header, ByteBuf body, EventExecutor replyOn) {
        Promise<Void> written = replyOn.newPromise();
        long start = System.nanoTime();
        admit(header, body, start, start + context.upstream().requestTimeoutNanos(), null, written, replyOn);
        return written;
    }

    /**
     * Writes an answer to a request the upstream sent on this connection ({@link PooledRequestHandler}).
     * Takes ownership of {@code frame}; dropped when the connection is gone.
     */
    public void answer(ByteBuf frame) {
        onLoop(() -> {
            if (state instanceof PooledState.Connected c) {
                c.channel().writeAndFlush(frame, c.channel().voidPromise());
            } else {
                log.debug("{}: answer dropped, connection gone", describe());
                frame.release();
            }
        }, frame::release);
    }

    /** {@code broker ip:port} or {@code name server ip:port}: how messages name this upstream. */
    public String describe() {
        String t = target;
        return (kind == Kind.BROKER ? "broker " : "name server ") + (t == null ? "(not dialed yet)" : t);
    }

    public Kind kind() {
        return kind;
    }

    /** Requests accepted and not finished yet; exact from any thread. */
    public int inFlight() {
        return admitted.get();
    }

    /** Whether a channel is up now (a snapshot: it may close the next moment). */
    public boolean isConnected() {
        return connected;
    }

    /** The event loop that owns this connection. */
    public EventLoop eventLoop() {
        return loop;
    }

    /** The allocator for frames written on this connection (the pooled channels use the default one). */
    public ByteBufAllocator alloc() {
        return ByteBufAllocator.DEFAULT;
    }

    /** Fails everything in flight with CLOSED and closes the channel; later requests fail the same way. */
    /**
     * Fails everything in flight and closes the channel, on the connection's loop.
     *
     * @return done once that ran (at once when the loop is already gone): the failures it sent to their callers'
     * executors were submitted while those still ran
     */
    Future<?> close() {
        Promise<Void> done = io.netty.util.concurrent.ImmediateEventExecutor.INSTANCE.newPromise();
        onLoop(() -> {
            PooledState before = state;
            state = new PooledState.Closed();
            connected = false;
            if (timeoutScan != null) {
                timeoutScan.cancel(false);
            }
            failAll(Reason.CLOSED, code -> "request code " + code + " to " + describe()
                + " abandoned: the gateway is stopping");
            if (before instanceof PooledState.Connected c) {
                c.channel().close();
            }
            done.trySuccess(null);
        }, () -> done.trySuccess(null));
        return done;
    }

    // ---------------------------------------------------------------- admission (caller's thread)

    private void admit(RemotingHeader header, ByteBuf body, long start, long deadline, Promise<RemotingFrame> response,
                       Promise<Void> written, EventExecutor replyOn) {
        Promise<?> promise = response != null ? response : written;
        int now = admitted.incrementAndGet();
        if (now > maxInFlight) {
            admitted.decrementAndGet();
            ReferenceCountUtil.release(body);
            CallerExecutor.fail(replyOn, promise, new UpstreamException(Reason.BUSY, describe() + " busy: " + maxInFlight
                + " requests in flight, request code " + header.code() + " refused"));
            return;
        }
        onLoop(() -> send(header, body, start, deadline, response, written, replyOn), () -> {
            admitted.decrementAndGet();
            ReferenceCountUtil.release(body);
            CallerExecutor.fail(replyOn, promise, new UpstreamException(Reason.CLOSED, "the gateway is stopping; request code "
                + header.code() + " to " + describe() + " not sent"));
        });
    }

    /** Runs {@code task} on the loop (now when already there); {@code rejected} when the loop is shut down. */
    private void onLoop(Runnable task, Runnable rejected) {
        if (loop.inEventLoop()) {
            task.run();
            return;
        }
        try {
            loop.execute(task);
        } catch (RejectedExecutionException e) {
            rejected.run();
        }
    }

    // ---------------------------------------------------------------- on the loop

    private void send(RemotingHeader header, ByteBuf body, long start, long deadline, Promise<RemotingFrame> response,
                      Promise<Void> written, EventExecutor replyOn) {
        Promise<?> promise = response != null ? response : written;
        if (state instanceof PooledState.Closed) {
            admitted.decrementAndGet();
            ReferenceCountUtil.release(body);
            CallerExecutor.fail(replyOn, promise, new UpstreamException(Reason.CLOSED, "the gateway is stopping; request code "
                + header.code() + " to " + describe() + " not sent"));
            return;
        }
        if (timeoutScan == null) {
            timeoutScan = loop.scheduleAtFixedRate(this::sweep, TIMEOUT_SCAN_MILLIS, TIMEOUT_SCAN_MILLIS,
                TimeUnit.MILLISECONDS);
        }
        int opaque = ++nextOpaque;
        SerializeType encoding = context.edge().upstreamEncoding() == null ? SerializeType.ROCKETMQ
            : context.edge().upstreamEncoding();
        // every request the gateway originates passes here: signed once, under the current upstream.acl
        RequestSigner signer = context.upstream().signer();
        Map<String, String> extFields = signer == null ? header.extFields() : signer.sign(header.extFields(), body);
        RemotingHeader stamped = new RemotingHeader(header.code(), header.language(), header.version(), opaque,
            response == null ? ONEWAY_FLAG : 0, header.remark(), extFields);
        ByteBuf frame;
        try {
            frame = Frames.encode(alloc(), stamped, encoding, body); // releases body when it throws
        } catch (RuntimeException e) {
            admitted.decrementAndGet();
            CallerExecutor.fail(replyOn, promise, e);
            return;
        }
        Outgoing out = new Outgoing(opaque, header.code(), frame, start, deadline, response, written, replyOn);
        if (state instanceof PooledState.Connected c) {
            write(c.channel(), out);
        } else {
            dialWaiters.add(out);
            if (state instanceof PooledState.Idle) {
                dial();
            }
        }
    }

    private void write(Channel channel, Outgoing out) {
        if (!channel.isWritable()) {
            finish(out, new UpstreamException(Reason.BUSY, describe() + " busy: its write buffer is full, request code "
                + out.code() + " refused"));
            return;
        }
        if (out.response() != null) {
            table.add(new Pending(out.opaque(), out.code(), out.startNanos(), out.deadlineNanos(), out.response(),
                out.replyOn()));
        }
        channel.writeAndFlush(out.frame()).addListener((ChannelFutureListener) f -> written(out, f));
    }

    private void written(Outgoing out, ChannelFuture f) {
        if (out.written() != null) {
            // a oneway is done once written
            admitted.decrementAndGet();
            if (f.isSuccess()) {
                CallerExecutor.complete(out.replyOn(), out.written(), null);
            } else {
                CallerExecutor.fail(out.replyOn(), out.written(), lost(out.code(), f.cause()));
            }
        } else if (!f.isSuccess() && table.remove(out.opaque()) != null) {
            admitted.decrementAndGet();
            CallerExecutor.fail(out.replyOn(), out.response(), lost(out.code(), f.cause()));
        }
    }

    private UpstreamException lost(int code, Throwable cause) {
        return new UpstreamException(Reason.CONNECTION_LOST, "request code " + code + " could not be written to "
            + describe() + ": " + Addresses.describe(cause));
    }

    // ---- dialing

    private void dial() {
        state = new PooledState.Connecting();
        if (kind == Kind.BROKER) {
            new PooledDial(this, List.of(address), null, null).next(0);
            return;
        }
        NamesrvAddresses namesrv = context.upstream().namesrv();
        if (namesrv == null) {
            dialFailed("no upstream name server configured");
            return;
        }
        List<Integer> order = namesrv.failoverOrder();
        new PooledDial(this, order.stream().map(i -> namesrv.get(i).toString()).toList(), namesrv, order).next(0);
    }

    void connected(Channel channel) {
        log.debug("{}: connected from {}", describe(), channel.localAddress());
        state = new PooledState.Connected(channel);
        connected = true;
        closeReason = null;
        for (Outgoing out; (out = dialWaiters.poll()) != null; ) {
            write(channel, out);
        }
    }

    void dialFailed(String why) {
        log.warn("{}: cannot connect: {}", describe(), why);
        context.metrics().upstreamFailure(UpstreamFailure.CONNECT_FAILED);
        state = new PooledState.Idle();
        String message = "cannot connect to " + (kind == Kind.BROKER ? "broker " + address : "any name server")
            + " (" + why + "), request code ";
        for (Outgoing out; (out = dialWaiters.poll()) != null; ) {
            finish(out, new UpstreamException(Reason.CONNECT_FAILED, message + out.code() + " not sent"));
        }
    }

    /** Whether a dial is still wanted (the connection was not closed meanwhile). */
    boolean connecting() {
        return state instanceof PooledState.Connecting;
    }

    /** The address a dial tries now (for messages). */
    void target(String next) {
        this.target = next;
    }

    EventLoop loop() {
        return loop;
    }

    // ---- answers, losses, timeouts

    void fromUpstream(RemotingFrame frame) {
        if (!frame.isResponse()) {
            try {
                pool.requestHandler().onRequest(this, frame);
            } catch (RuntimeException e) {
                log.warn("{}: handler for request code {} failed", describe(), frame.code(), e);
            }
            return;
        }
        Pending p = table.remove(frame.opaque());
        if (p == null) {
            log.debug("{}: dropping late or unknown response opaque {} code {}", describe(), frame.opaque(), frame.code());
            frame.release();
            return;
        }
        admitted.decrementAndGet();
        CallerExecutor.complete(p.replyOn(), p.promise(), frame);
    }

    void channelClosed(Channel channel) {
        if (!(state instanceof PooledState.Connected c) || c.channel() != channel) {
            return;
        }
        state = new PooledState.Idle();
        connected = false;
        String why = closeReason == null ? "closed" : "closed (" + closeReason + ")";
        List<Pending> orphans = table.drain();
        log.debug("{}: connection {}, {} requests in flight", describe(), why, orphans.size());
        if (!orphans.isEmpty()) {
            context.metrics().upstreamFailure(UpstreamFailure.CONNECTION_LOST);
        }
        for (Pending p : orphans) {
            admitted.decrementAndGet();
            CallerExecutor.fail(p.replyOn(), p.promise(), new UpstreamException(Reason.CONNECTION_LOST, "connection to " + describe()
                + " " + why + " before answering request code " + p.code()));
        }
    }

    /** The periodic scan: a failure in it closes the connection (its requests then fail) rather than end the scan. */
    private void sweep() {
        try {
            expire();
        } catch (Throwable t) {
            if (AllocationFailures.isAllocationFailure(t)) {
                context.allocationFailures().record();
            }
            log.warn("closing pooled connection to {}: its timeout scan failed: {}", describe(), t.toString());
            closeReason = "timeout scan failed: " + t;
            if (state instanceof PooledState.Connected c) {
                c.channel().close();
            }
        }
    }

    private void expire() {
        long now = System.nanoTime();
        for (Pending p : table.expire(now)) {
            admitted.decrementAndGet();
            context.metrics().upstreamFailure(UpstreamFailure.TIMEOUT);
            CallerExecutor.fail(p.replyOn(), p.promise(), timeout(p.code(), p.startNanos(), now, ""));
        }
        for (Iterator<Outgoing> it = dialWaiters.iterator(); it.hasNext(); ) {
            Outgoing out = it.next();
            if (now - out.deadlineNanos() >= 0) {
                it.remove();
                context.metrics().upstreamFailure(UpstreamFailure.TIMEOUT);
                finish(out, timeout(out.code(), out.startNanos(), now, " (still connecting)"));
            }
        }
    }

    private UpstreamException timeout(int code, long start, long now, String note) {
        return new UpstreamException(Reason.TIMEOUT, describe() + " did not answer request code " + code + " within "
            + TimeUnit.NANOSECONDS.toMillis(now - start) + " ms" + note);
    }

    /** Fails everything in flight and waiting with {@code reason} and the message for each request code. */
    private void failAll(Reason reason, IntFunction<String> message) {
        for (Outgoing out; (out = dialWaiters.poll()) != null; ) {
            finish(out, new UpstreamException(reason, message.apply(out.code())));
        }
        for (Pending p : table.drain()) {
            admitted.decrementAndGet();
            CallerExecutor.fail(p.replyOn(), p.promise(), new UpstreamException(reason, message.apply(p.code())));
        }
    }

    /** A request that will not be written: its frame is released and its caller told why. */
    private void finish(Outgoing out, Throwable cause) {
        admitted.decrementAndGet();
        out.frame().release();
        CallerExecutor.fail(out.replyOn(), out.response() != null ? out.response() : out.written(), cause);
    }

}
