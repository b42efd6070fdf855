package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.metrics.GatewayMetrics;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * One client request in flight, as its filters and handler see it (Kroxylicious' {@code FilterContext}, RocketMQ's
 * {@code RemotingCommand} with its channel): what it is, how its frames change encoding, and its answer, given
 * once. A handler talks to nothing else, so it can be tested against a fake exchange without sockets. Everything
 * but {@link #answer} runs on the connection's event loop.
 */
public interface Exchange {

    int opaque();

    int code();

    /** The header encoding the client sent the request in. */
    SerializeType encoding();

    boolean oneway();

    /** The client connection the request came on. */
    ClientConnection client();

    default ByteBufAllocator alloc() {
        return client().alloc();
    }

    /** The event loop that owns the connection: where the exchange's work and its timers run. */
    default EventLoop loop() {
        return client().loop();
    }

    /** The settings this request is treated with (current when it arrived). */
    EdgeSettings edge();

    GatewayMetrics metrics();

    /** The encoding of the gateway's own answer to this request. */
    SerializeType answerEncoding();

    /**
     * Keeps {@code context} with the request for {@link RequestHandler#onResponse} (set while treating it); a
     * reference-counted one is the exchange's, released if the request ends without its handler taking it back.
     */
    void keep(Object context);

    /** What {@link #keep} stored, or null. */
    Object kept();

    /**
     * The request's header decoded, once for the whole exchange: the filters and the handler that ask share it, and
     * {@link #forward} reuses it. Null when the decoder of the request's code gives no {@code H}. The exchange owns
     * it ({@link #forward} hands it on; otherwise it is released once the request was treated). An undecodable
     * header releases {@code request} and rethrows (the connection closes with a counted reason).
     */
    <H extends CommandHeader> H header(RemotingFrame request, Class<H> type);

    /** Whether a filter or the handler decoded the header already ({@link #header}). */
    boolean headerDecoded();

    /**
     * The request's bytes for the upstream, in the upstream header encoding: from the header decoded for the
     * exchange if any, else from the bytes alone (unchanged when the encoding is). Takes ownership of
     * {@code request}.
     */
    ByteBuf forward(RemotingFrame request);

    /**
     * The MQVersion ordinal the upstream connection's answers carry (the latest that set one), 0 while none did or
     * no upstream is connected.
     */
    int upstreamVersion();

    /**
     * What a handler remembers of the upstream connection the request goes to (what its broker serves, say): gone
     * with the connection; null when none is connected.
     */
    <T> Attribute<T> upstreamAttr(AttributeKey<T> key);

    /**
     * Sends {@code request} (bytes for the upstream) instead, from {@link RequestHandler#onResponse}: the answer the
     * handler had is not the client's, the answer to these bytes will be (within the request's timeout, counted
     * again). Takes ownership of {@code request}.
     */
    void resend(ByteBuf request);

    /**
     * A client frame's bytes in the upstream header encoding. Takes ownership of {@code frame} and of
     * {@code decoded} (its header if already decoded, or null).
     */
    ByteBuf forUpstream(RemotingFrame frame, CommandHeader decoded);

    /** An upstream frame's bytes in the encoding this request's client should get. Takes ownership of both. */
    ByteBuf forClient(RemotingFrame frame, CommandHeader decoded);

    /** An upstream frame rebuilt with a changed {@code header}, in the client's encoding. Takes ownership of both. */
    ByteBuf rebuiltForClient(RemotingFrame frame, CommandHeader header);

    /** Whether an upstream frame reaches the client in its own encoding (nothing to convert). */
    boolean reachesClientAsIs(RemotingFrame frame);

    /** The encoding an upstream frame now in {@code current} should reach the client in. */
    SerializeType clientTarget(SerializeType current);

    /**
     * The request's answer, from any thread, once: a second answer is released and logged, and a oneway request's
     * is released (it gets none). Takes ownership of {@code answer}.
     */
    void answer(ByteBuf answer);

    /** Answers with an error {@code code} and {@code remark} in the client's encoding. */
    void answerError(int code, String remark);

    /**
     * Answers SYSTEM_BUSY for a rate limit with {@code remark}, held {@code rate-limits.refusal-delay} so that a
     * client retrying at once cannot spin (a oneway request is dropped).
     */
    void answerRateLimited(String remark);
}
