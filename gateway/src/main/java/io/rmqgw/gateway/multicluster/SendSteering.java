package io.rmqgw.gateway.multicluster;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.gateway.config.LogicalTopicConfig;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.pool.UpstreamException;
import io.rmqgw.routing.RouteUnion;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Sends to a logical topic, on the role of one broker of its union: taken by the gateway and sent on its pooled
 * connection to the broker the topic's health picks, which is the producer's own unless that broker's share is low
 * ({@link ClusterHealth#choose}). The answer is the broker's, with its queue id and offset, and ids that lead back
 * through the gateway. A send its broker refuses for load (SYSTEM_BUSY, flow control, SYSTEM_ERROR) or could not be
 * sent to (no connection, connection lost) is sent once more to another broker, within the request's time; a lost
 * connection may have stored it, so a consumer may see it twice, never zero times. Oneway sends, half messages of
 * transactions (their END_TRANSACTION and check-back need the broker the producer chose) and {@code ordered} topics
 * pass as they are.
 */
final class SendSteering implements RequestFilter {

    /** MessageSysFlag's TRANSACTION_PREPARED_TYPE and TRANSACTION_ROLLBACK_TYPE bits: any transaction state. */
    private static final int TRANSACTION_BITS = 0x0C;

    private final LogicalTopics feature;
    private final String upstream;

    /** @param upstream the address of the broker whose role this filter is on */
    SendSteering(LogicalTopics feature, String upstream) {
        this.feature = feature;
        this.upstream = upstream;
    }

    @Override
    public RemotingFrame filter(Exchange exchange, RemotingFrame request) {
        if (!feature.active() || request.isOneway()) {
            return request;
        }
        SendRequestHeader header = exchange.header(request, SendRequestHeader.class);
        if (header == null) {
            return request;
        }
        LogicalTopicConfig topic = feature.topic(header.topic());
        if (topic == null || !topic.redirectable() || (header.sysFlag() & TRANSACTION_BITS) != 0) {
            return request;
        }
        UnionRoute route = feature.routes().latest(topic.topic());
        RouteUnion.Broker here = route == null ? null : route.broker(upstream);
        if (here == null) {
            if (route == null) {
                feature.refreshSoon(topic);
            }
            return request;
        }
        Send send;
        try {
            // the header's fields are copied before the body is retained: nothing after the retain can throw
            RemotingHeader fields = header.toRemotingHeader();
            send = new Send(exchange, fields, header.isV2(), request.bodySlice().retain(), route, here);
        } finally {
            request.release();
        }
        send.attempt(header.queueId(), null);
        return null;
    }

    /** It takes the body of the sends it steers. */
    @Override
    public boolean readsBody() {
        return feature.active();
    }

    @Override
    public String toString() {
        return "logical-topics sends";
    }

    /** One steered send: its header fields, its body (held until answered) and where it was tried. */
    private final class Send {
        final Exchange exchange;
        final int code;
        final RemotingHeader request;
        final boolean v2;
        final ByteBuf body;
        final UnionRoute route;
        final RouteUnion.Broker here;
        final long arrival;
        final long deadline;
        int attempts;

        Send(Exchange exchange, RemotingHeader request, boolean v2, ByteBuf body, UnionRoute route,
             RouteUnion.Broker here) {
            this.exchange = exchange;
            this.code = exchange.code();
            this.request = request;
            this.v2 = v2;
            this.body = body;
            this.route = route;
            this.here = here;
            this.arrival = System.nanoTime();
            this.deadline = arrival + feature.requestTimeoutNanos();
        }

        /** Sends to where health points, {@code failed} the broker address that just failed it (null: none). */
        void attempt(int queueId, String failed) {
            long now = System.nanoTime();
            ClusterHealth.Target target = feature.health().choose(route, here, queueId,
                ThreadLocalRandom.current().nextDouble(), failed, now);
            if (target == null || now - deadline >= 0) {
                finish(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] send to logical topic " + route.topic()
                    + " failed at broker " + failed + " and no other broker of clusters " + route.clusters()
                    + " can take it now");
                return;
            }
            RouteUnion.Broker broker = target.broker();
            if (target.reason() != null) {
                feature.meters().redirected(here.cluster(), broker.cluster(), target.reason());
            }
            Map<String, String> ext = new HashMap<>(request.extFields());
            ext.put(v2 ? "e" : "queueId", Integer.toString(target.queueId()));
            String brokerNameKey = v2 ? "n" : "bname";
            if (ext.containsKey(brokerNameKey)) {
                ext.put(brokerNameKey, broker.realName()); // the name the broker knows, not the one clients see
            }
            RemotingHeader out = new RemotingHeader(request.code(), request.language(), request.version(), 0, 0,
                request.remark(), ext);
            String address = broker.master();
            BrokerHealth health = feature.health().of(broker.cluster(), address, now);
            health.sent(now);
            attempts++;
            long sent = now;
            feature.pool().broker(address).request(out, body.retainedDuplicate(), deadline - now, exchange.loop())
                .addListener(f -> {
                    long answered = System.nanoTime();
                    if (f.isSuccess()) {
                        onAnswer((RemotingFrame) f.getNow(), health, sent, answered);
                    } else {
                        onFailure(f.cause(), health, address);
                    }
                });
        }

        private void onFailure(Throwable cause, BrokerHealth health, String address) {
            long now = System.nanoTime();
            UpstreamException.Reason reason = cause instanceof UpstreamException u ? u.reason()
                : UpstreamException.Reason.CONNECTION_LOST;
            switch (reason) {
                case CONNECT_FAILED, CONNECTION_LOST -> health.failed(BrokerHealth.Failure.UNREACHABLE, now, true);
                case TIMEOUT -> health.failed(BrokerHealth.Failure.TIMEOUT, now, true);
                case BUSY, CLOSED -> health.failed(null, now, true);
            }
            boolean retry = reason == UpstreamException.Reason.CONNECT_FAILED
                || reason == UpstreamException.Reason.CONNECTION_LOST || reason == UpstreamException.Reason.BUSY;
            if (retry && attempts == 1) {
                attempt(0, address);
                return;
            }
            finish(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] send to logical topic " + route.topic() + ": "
                + cause.getMessage());
        }

        private void onAnswer(RemotingFrame response, BrokerHealth health, long sent, long answered) {
            int answer = response.code();
            if (stores(answer)) {
                health.answered(answered - sent, answered, true);
            } else if (answer == ResponseCode.SYSTEM_BUSY || answer == ResponseCode.SYSTEM_ERROR) {
                health.failed(BrokerHealth.Failure.REFUSED, answered, true);
                if (attempts == 1) {
                    response.release();
                    attempt(0, health.address);
                    return;
                }
            } else {
                health.answered(answered - sent, answered, true); // the broker is well; the send was refused
            }
            try {
                CommandHeader header = HeaderTranscoder.decodeResponse(response, code);
                try {
                    String ids = header instanceof SendResponseHeader s ? s.msgId() : header.get("msgId");
                    String rewritten = ids == null ? null : MessageIds.rewriteList(ids, feature.storeHosts());
                    if (rewritten != null && !rewritten.equals(ids)) {
                        header.put("msgId", rewritten);
                    }
                    header.setOpaque(exchange.opaque());
                    SerializeType target = header.canEncode(exchange.answerEncoding()) ? exchange.answerEncoding()
                        : header.sourceEncoding();
                    ByteBuf answerBody = response.bodyLength() > 0 ? response.bodySlice().retain() : null;
                    exchange.metrics().requestCompleted(code, answer, (System.nanoTime() - arrival)
                        - (answered - sent), answered - sent);
                    exchange.answer(HeaderTranscoder.encodeFrame(exchange.alloc(), header, target, answerBody));
                } finally {
                    header.release();
                }
            } catch (RuntimeException e) {
                exchange.answerError(RemotingSysResponseCode.SYSTEM_ERROR, "[rmqgw] unreadable answer from broker "
                    + health.address + " to a send to " + route.topic() + ": " + e.getMessage());
            } finally {
                response.release();
                body.release();
            }
        }

        private void finish(int answer, String remark) {
            body.release();
            exchange.metrics().requestAnswered(code, answer);
            exchange.answerError(answer, remark);
        }
    }

    /** Answers whose message the broker stored (flush or replica timeouts included, as clients count them). */
    static boolean stores(int code) {
        return code == ResponseCode.SUCCESS || code == ResponseCode.FLUSH_DISK_TIMEOUT
            || code == ResponseCode.FLUSH_SLAVE_TIMEOUT || code == ResponseCode.SLAVE_NOT_AVAILABLE;
    }

    /** The send codes it takes. */
    static final int[] CODES = {RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE};
}
