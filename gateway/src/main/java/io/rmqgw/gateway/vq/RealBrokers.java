package io.rmqgw.gateway.vq;

import io.netty.util.concurrent.Future;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.Map;
import java.util.Optional;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * The gateway's own requests to the real brokers for one served group (the client side of RocketMQ's
 * {@code MQClientAPIImpl}): to a broker's master over the pooled upstream connections, with the request timeout,
 * answered on the virtual queues' loop. Every answer handed out is the receiver's to release.
 */
final class RealBrokers {

    private final VirtualQueues owner;

    RealBrokers(VirtualQueues owner) {
        this.owner = owner;
    }

    /** The master address of {@code brokerName}, when the cluster view knows one. */
    Optional<String> master(String brokerName) {
        return owner.context().cluster().masterAddress(brokerName);
    }

    /** Request {@code code} with {@code ext} (no body) to {@code master}. */
    Future<RemotingFrame> request(String master, int code, Map<String, String> ext) {
        return owner.pool().broker(master).request(code, ext, null, owner.context().upstream().requestTimeoutNanos(),
            owner.loop());
    }

    /** What an offset request answered: its code and its {@code offset} field (-1 unless SUCCESS). */
    @FunctionalInterface
    interface OffsetAnswer {
        void accept(int code, long offset);
    }

    /** An offset request; a failure reaches {@code then} as code and offset -1. */
    void askOffset(String master, int code, Map<String, String> ext, OffsetAnswer then) {
        askOffset(master, code, ext, then, () -> then.accept(-1, -1));
    }

    void askOffset(String master, int code, Map<String, String> ext, OffsetAnswer then, Runnable failed) {
        request(master, code, ext).addListener(f -> {
            if (!f.isSuccess()) {
                failed.run();
                return;
            }
            RemotingFrame answer = (RemotingFrame) f.getNow();
            int answered;
            long offset;
            try {
                answered = answer.code();
                offset = answered == ResponseCode.SUCCESS
                    ? longField(HeaderCodec.decodeHeader(answer).extFields(), "offset", -1) : -1;
            } finally {
                answer.release();
            }
            then.accept(answered, offset);
        });
    }

    static long longField(Map<String, String> ext, String name, long fallback) {
        String v = ext == null ? null : ext.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
