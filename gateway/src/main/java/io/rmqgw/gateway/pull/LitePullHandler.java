package io.rmqgw.gateway.pull;

import io.netty.buffer.ByteBuf;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.core.Exchange;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;

/**
 * LITE_PULL_MESSAGE (361, 5.x lite pull consumers): brokers before 5.0.0 do not know it and get it as PULL_MESSAGE
 * (same header and fields). Which one an upstream connection's broker takes is told by the version its answers
 * carry ({@link Exchange#upstreamVersion}) or, from a broker that sets none, by its answer to a 361: while unknown, a
 * 361 goes as it is, its PULL_MESSAGE bytes kept to be sent once instead if the broker answers
 * REQUEST_CODE_NOT_SUPPORTED. What was learned stays with the upstream connection.
 */
public final class LitePullHandler extends PullHandler {

    /**
     * MQVersion.Version.V5_0_0.ordinal(): a frame's {@code version} is its sender's MQVersion ordinal, and brokers
     * before 5.0.0 do not know LITE_PULL_MESSAGE (361).
     */
    static final int V5_0_0 = 413;
    /** Whether the connection's broker serves 361 (true) or gets it as 11 (false); unset while unknown. */
    private static final AttributeKey<Boolean> SERVES_361 = AttributeKey.valueOf("rmqgw.serves-lite-pull");

    public LitePullHandler(StoreHostMapper storeHosts) {
        super(storeHosts);
    }

    @Override
    public ByteBuf toUpstream(Exchange exchange, RemotingFrame request) {
        Boolean serves = servesLitePull(exchange);
        ByteBuf out = super.toUpstream(exchange, request);
        if (Boolean.FALSE.equals(serves)) {
            exchange.metrics().litePullTranslated();
            try {
                return Frames.withCode(exchange.alloc(), out, RequestCode.PULL_MESSAGE);
            } finally {
                out.release();
            }
        }
        if (serves == null) {
            try {
                // in buffers of its own: a JSON request's bytes hold a reference to the body
                exchange.keep(Frames.withCode(exchange.alloc(), out, RequestCode.PULL_MESSAGE));
            } catch (RuntimeException e) {
                out.release();
                throw e;
            }
        }
        return out;
    }

    @Override
    public ByteBuf onResponse(Exchange exchange, RemotingFrame response) {
        learn(exchange, response);
        if (exchange.kept() instanceof ByteBuf asPull) {
            exchange.keep(null);
            if (response.code() == RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED) {
                // a broker before 5.0.0: the same pull again as 11, once; that answer is the client's
                response.release();
                exchange.metrics().litePullTranslated();
                exchange.resend(asPull);
                return null;
            }
            asPull.release();
        }
        return super.onResponse(exchange, response);
    }

    /** What the connection's broker is known to do with 361, or null while unknown. */
    private static Boolean servesLitePull(Exchange exchange) {
        Attribute<Boolean> learned = exchange.upstreamAttr(SERVES_361);
        Boolean serves = learned == null ? null : learned.get();
        if (serves == null && exchange.upstreamVersion() != 0) {
            serves = exchange.upstreamVersion() >= V5_0_0;
        }
        return serves;
    }

    /** What an answer to a 361 tells: its sender's version, or, from a broker that sets none, its code. */
    private static void learn(Exchange exchange, RemotingFrame answer) {
        Attribute<Boolean> learned = exchange.upstreamAttr(SERVES_361);
        if (learned == null || learned.get() != null) {
            return;
        }
        learned.set(answer.version() != 0 ? answer.version() >= V5_0_0
            : answer.code() != RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    }
}
