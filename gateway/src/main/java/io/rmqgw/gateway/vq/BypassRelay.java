package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.core.Exchange;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a bypass group's request goes on to a real broker and its answer comes back: over the gateway's pooled
 * upstream connections (the gateway's own opaques), answered to the client with its opaque. Answers of the pool
 * arrive on the client connection's event loop.
 */
final class BypassRelay {

    private static final Logger log = LoggerFactory.getLogger(BypassRelay.class);

    private final VirtualQueues queues;

    BypassRelay(VirtualQueues queues) {
        this.queues = queues;
    }

    long requestTimeoutNanos() {
        return queues.context().upstream().requestTimeoutNanos();
    }

    /**
     * Sends the request on to {@code brokerName}'s master with {@code ext} and {@code body} (owned);
     * {@code then} gets the broker's answer (owned), or the client is answered SYSTEM_ERROR naming what failed. A
     * oneway request goes on as a oneway.
     */
    void send(Exchange exchange, VirtualBrokerRequest r, String brokerName, Map<String, String> ext, ByteBuf body,
              long timeoutNanos, Consumer<RemotingFrame> then) {
        sendQuietly(exchange, r, brokerName, ext, body, timeoutNanos, answer -> {
            if (answer != null) {
                then.accept(answer);
            }
        }, failure -> r.error(exchange, RemotingSysResponseCode.SYSTEM_ERROR, failure));
    }

    /** {@link #send} whose {@code then} also gets null after a failure (logged), with the request timeout. */
    void sendQuietly(Exchange exchange, VirtualBrokerRequest r, String brokerName, Map<String, String> ext,
                     ByteBuf body, Consumer<RemotingFrame> then) {
        sendQuietly(exchange, r, brokerName, ext, body, requestTimeoutNanos(), then, failure -> {
            log.debug("bypass request {}: {}", r.code(), failure);
            then.accept(null);
        });
    }

    /** {@link #send} with what to do on a failure, named by {@code failed}. */
    void sendQuietly(Exchange exchange, VirtualBrokerRequest r, String brokerName, Map<String, String> ext,
                     ByteBuf body, long timeoutNanos, Consumer<RemotingFrame> then, Consumer<String> failed) {
        Optional<String> master = queues.context().cluster().masterAddress(brokerName);
        if (master.isEmpty()) {
            if (body != null) {
                body.release();
            }
            failed.accept("no master address known for broker " + brokerName);
            return;
        }
        // a lite pull (361) goes as PULL_MESSAGE: same header and answer, and brokers before 5.0.0 refuse 361
        int code = r.code();
        if (code == RequestCode.LITE_PULL_MESSAGE) {
            code = RequestCode.PULL_MESSAGE;
            queues.context().metrics().litePullTranslated();
        }
        RemotingHeader header = new RemotingHeader(code, r.header().language(), r.header().version(), 0, 0, null, ext);
        if (r.oneway()) {
            queues.pool().broker(master.get()).oneway(header, body, exchange.loop()).addListener(f -> {
                if (!f.isSuccess()) {
                    log.debug("bypass oneway {} to broker {} not sent: {}", r.code(), brokerName, f.cause().getMessage());
                }
            });
            return;
        }
        queues.pool().broker(master.get()).request(header, body, timeoutNanos, exchange.loop())
            .addListener(f -> {
                if (f.isSuccess()) {
                    then.accept((RemotingFrame) f.getNow());
                } else {
                    failed.accept("broker " + brokerName + " through the gateway: " + f.cause().getMessage());
                }
            });
    }

    /** The gateway's own request {@code code} to {@code brokerName}'s master; {@code then} gets the answer or null. */
    void ask(Exchange exchange, String brokerName, int code, Map<String, String> ext, Consumer<RemotingFrame> then) {
        Optional<String> master = queues.context().cluster().masterAddress(brokerName);
        if (master.isEmpty()) {
            then.accept(null);
            return;
        }
        queues.pool().broker(master.get()).request(code, ext, null, requestTimeoutNanos(), exchange.loop())
            .addListener(f -> then.accept(f.isSuccess() ? (RemotingFrame) f.getNow() : null));
    }

    /** Relays a broker's answer to the client as it is ({@link #relay}), then releases it. */
    static Consumer<RemotingFrame> relayed(Exchange exchange, VirtualBrokerRequest r) {
        return answer -> {
            try {
                relay(exchange, r, answer, null);
            } finally {
                answer.release();
            }
        };
    }

    /**
     * The broker's answer to the client: its code, remark and fields with the client's opaque, and {@code body}
     * (owned; null for the answer's own, retained here: {@code answer} stays the caller's). A broker's suggestion
     * to pull from a slave is dropped: the virtual broker has none.
     */
    static void relay(Exchange exchange, VirtualBrokerRequest r, RemotingFrame answer, ByteBuf body) {
        if (r.oneway()) {
            if (body != null) {
                body.release();
            }
            return;
        }
        RemotingHeader brokers = HeaderCodec.decodeHeader(answer);
        Map<String, String> ext = brokers.extFields() == null ? null : new LinkedHashMap<>(brokers.extFields());
        if (ext != null && ext.containsKey("suggestWhichBrokerId")) {
            ext.put("suggestWhichBrokerId", "0");
        }
        ByteBuf out = body != null ? body : answer.bodyLength() > 0 ? answer.retainedBody() : null;
        exchange.answer(Frames.encode(exchange.alloc(),
            RemotingHeader.response(r.opaque(), answer.code(), brokers.remark()).withExtFields(ext), r.encoding(), out));
    }

    /** The request's fields for the real queue: its queue id, and its broker name where the client sent one (5.x). */
    static Map<String, String> withQueue(VirtualBrokerRequest r, RealQueue real) {
        Map<String, String> ext = withBroker(r, real.brokerName());
        ext.put("queueId", Integer.toString(real.queueId()));
        return ext;
    }

    /** The request's fields with {@code brokerName} where the client sent a broker name (5.x). */
    static Map<String, String> withBroker(VirtualBrokerRequest r, String brokerName) {
        Map<String, String> ext = r.ext() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(r.ext());
        if (ext.containsKey("bname")) {
            ext.put("bname", brokerName);
        }
        return ext;
    }
}
