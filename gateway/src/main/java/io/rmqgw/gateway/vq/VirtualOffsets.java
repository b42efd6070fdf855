package io.rmqgw.gateway.vq;

import io.netty.channel.Channel;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestHandler;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * The offset requests of the virtual broker, one handler per code: a served group's commits acknowledge its
 * leases and its offset queries start it on a virtual queue at the head; the queue offsets (which name no group)
 * are the virtual queues' own. Other groups' requests go on to the real queue ({@link Bypass#offsets}), each
 * with the answer of an empty queue where no real queue stands behind the virtual one.
 */
final class VirtualOffsets {

    private static final Bypass.EmptyQueue OFFSET_ZERO = (exchange, r, why) -> r.success(exchange, Map.of("offset", "0"));

    private VirtualOffsets() {
    }

    /** UPDATE_CONSUMER_OFFSET. */
    static final class Commits extends VirtualBrokerFamily {
        Commits(VirtualQueues queues, Bypass bypass) {
            super(queues, bypass, "commits");
        }

        @Override
        void serve(Exchange exchange, VirtualBrokerRequest r) {
            String group = r.field("consumerGroup");
            String topic = r.field("topic");
            if (bypass.applies(group, topic)) {
                bypass.offsets(exchange, r, (e, request, why) -> request.success(e, null));
                return;
            }
            VirtualConsumer c = consumerOr(exchange, r, group, topic);
            if (c != null) {
                Channel channel = exchange.client().channel();
                int queue = r.intField("queueId", -1);
                long offset = r.longField("commitOffset", -1);
                queues.loop().execute(() -> c.commit(channel, queue, offset));
                r.success(exchange, null);
            }
        }
    }

    /** QUERY_CONSUMER_OFFSET: a client starts (over) on a virtual queue. */
    static final class Queries extends VirtualBrokerFamily {
        Queries(VirtualQueues queues, Bypass bypass) {
            super(queues, bypass, "offset queries");
        }

        @Override
        void serve(Exchange exchange, VirtualBrokerRequest r) {
            String group = r.field("consumerGroup");
            String topic = r.field("topic");
            VirtualConsumer c = queues.consumer(group, topic);
            if (c == null && bypass.applies(group, topic)) {
                bypass.offsets(exchange, r, (e, request, why) -> request.error(e, ResponseCode.QUERY_NOT_FOUND, why));
            } else if (c == null) {
                r.error(exchange, ResponseCode.QUERY_NOT_FOUND, notServed(group, topic));
            } else {
                int queue = r.intField("queueId", -1);
                Channel channel = exchange.client().channel();
                queues.loop().execute(() -> r.success(exchange,
                    Map.of("offset", Long.toString(c.startOver(channel, queue)))));
            }
        }
    }

    /** How a served group's queue offset request is answered. */
    @FunctionalInterface
    private interface Served {
        void answer(VirtualQueues queues, Exchange exchange, VirtualBrokerRequest r);
    }

    /**
     * GET_MAX_OFFSET, GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME: these name no group, so
     * the connection's registrations tell whether a bypass group asks.
     */
    private static final class QueueOffsets extends VirtualBrokerFamily {
        private final Served served;
        private final Bypass.EmptyQueue empty;

        QueueOffsets(VirtualQueues queues, Bypass bypass, String name, Served served, Bypass.EmptyQueue empty) {
            super(queues, bypass, name);
            this.served = served;
            this.empty = empty;
        }

        @Override
        void serve(Exchange exchange, VirtualBrokerRequest r) {
            if (bypass.connectionBypasses(exchange.client().channel(), r.field("topic"))) {
                bypass.offsets(exchange, r, empty);
            } else {
                served.answer(queues, exchange, r);
            }
        }
    }

    /** GET_MAX_OFFSET: the highest head of the topic's virtual queue over its served groups. */
    static RequestHandler max(VirtualQueues queues, Bypass bypass) {
        return new QueueOffsets(queues, bypass, "max offsets", VirtualOffsets::maxOffset, OFFSET_ZERO);
    }

    /** GET_MIN_OFFSET: every virtual queue starts at 0. */
    static RequestHandler min(VirtualQueues queues, Bypass bypass) {
        return new QueueOffsets(queues, bypass, "min offsets", (q, exchange, r) -> r.success(exchange,
            Map.of("offset", "0")), OFFSET_ZERO);
    }

    /** SEARCH_OFFSET_BY_TIMESTAMP: not served on virtual queues. */
    static RequestHandler search(VirtualQueues queues, Bypass bypass) {
        return new QueueOffsets(queues, bypass, "offset searches", VirtualOffsets::notServedHere, OFFSET_ZERO);
    }

    /** GET_EARLIEST_MSG_STORETIME: not served on virtual queues; an empty real queue has no such time. */
    static RequestHandler storeTimes(VirtualQueues queues, Bypass bypass) {
        return new QueueOffsets(queues, bypass, "store times", VirtualOffsets::notServedHere,
            (exchange, r, why) -> r.error(exchange, RemotingSysResponseCode.SYSTEM_ERROR, why));
    }

    private static void maxOffset(VirtualQueues queues, Exchange exchange, VirtualBrokerRequest r) {
        String topic = r.field("topic");
        int queue = r.intField("queueId", -1);
        queues.loop().execute(() -> {
            long max = 0;
            for (VirtualConsumer c : queues.consumers()) {
                if (c.config().topic().equals(topic)) {
                    max = Math.max(max, c.head(queue));
                }
            }
            r.success(exchange, Map.of("offset", Long.toString(max)));
        });
    }

    private static void notServedHere(VirtualQueues queues, Exchange exchange, VirtualBrokerRequest r) {
        r.error(exchange, RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED, "request code " + r.code()
            + " is not served on virtual queues (served groups start where their virtual queue's head is)");
    }
}
