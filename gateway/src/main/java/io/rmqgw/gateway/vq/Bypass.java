package io.rmqgw.gateway.vq;

import io.micrometer.core.instrument.Counter;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The virtual broker's requests from groups that are not served on a virtual-queue topic (any group not listed
 * for it: clustering, orderly or broadcasting): their virtual queues are the topic's real queues, one to one
 * ({@link BypassMap}), read and committed with real offsets on the real brokers. Each request goes on to the broker
 * of its real queue ({@link BypassRelay}), and the broker's answer comes back with the client's opaque. Here: who
 * bypasses, the maps, offsets and members; pulls, locks and send-backs have their own parts, which each family
 * handler of the virtual broker picks. Called on the client connection's event loop, where every answer of the pool
 * arrives too.
 */
final class Bypass {

    private static final Logger log = LoggerFactory.getLogger(Bypass.class);
    /** The topics a connection registered (HEART_BEAT) bypass groups for: offset requests name no group. */
    private static final AttributeKey<Set<String>> TOPICS = AttributeKey.valueOf("rmqgw.vq.bypass.topics");

    /** How an offset request is answered on a virtual queue with no real queue behind it ({@code why} says so). */
    @FunctionalInterface
    interface EmptyQueue {
        void answer(Exchange exchange, VirtualBrokerRequest r, String why);
    }

    private final VirtualQueues queues;
    private final Map<Integer, Counter> counters = new ConcurrentHashMap<>();
    /** Each virtual-queue topic's bypass map as last used. */
    private final Map<String, BypassMap> maps = new ConcurrentHashMap<>();
    private final BypassRelay relay;
    private final BypassPulls pulls;
    private final BypassLocks locks;
    private final BypassSendBacks sendBacks;

    Bypass(VirtualQueues queues) {
        this.queues = queues;
        this.relay = new BypassRelay(queues);
        this.pulls = new BypassPulls(queues, this);
        this.locks = new BypassLocks(this);
        this.sendBacks = new BypassSendBacks(this);
    }

    VirtualQueues queues() {
        return queues;
    }

    BypassRelay relay() {
        return relay;
    }

    BypassPulls pulls() {
        return pulls;
    }

    BypassLocks locks() {
        return locks;
    }

    BypassSendBacks sendBacks() {
        return sendBacks;
    }

    // ---------------------------------------------------------------- who bypasses

    /**
     * Whether {@code group}'s requests on {@code topic} bypass: the topic is on virtual queues and the group is served
     * on none. A group served on another topic is kept from the brokers' heartbeats, so the brokers do not know it as
     * a consumer of this one: it stays refused.
     */
    boolean applies(String group, String topic) {
        return group != null && topic != null && queues.servesTopic(topic) && !queues.isServed(group);
    }

    /** A heartbeat on the virtual broker named {@code group} consuming {@code topic}: remembered when it bypasses. */
    void registered(Channel connection, String group, String topic) {
        if (applies(group, topic)) {
            Set<String> topics = connection.attr(TOPICS).get();
            if (topics == null) {
                Set<String> fresh = ConcurrentHashMap.newKeySet();
                topics = connection.attr(TOPICS).setIfAbsent(fresh);
                topics = topics == null ? fresh : topics;
            }
            topics.add(topic);
        }
    }

    /**
     * Whether offset requests on {@code topic}, which name no group (GET_MAX_OFFSET, GET_MIN_OFFSET,
     * SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME), come from a bypass group: its connection registered
     * one for the topic.
     */
    boolean connectionBypasses(Channel connection, String topic) {
        Set<String> topics = connection.attr(TOPICS).get();
        return topics != null && topic != null && topics.contains(topic) && queues.servesTopic(topic);
    }

    // ---------------------------------------------------------------- offsets and members

    /**
     * QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP,
     * GET_EARLIEST_MSG_STORETIME: on to the real queue's broker, answered as it answers; {@code empty} answers where
     * no real queue stands behind the virtual one.
     */
    void offsets(Exchange exchange, VirtualBrokerRequest r, EmptyQueue empty) {
        counted(r);
        int virtualQueue = r.intField("queueId", -1);
        withRoute(exchange, r, r.field("topic"), map -> {
            RealQueue real = map.real(virtualQueue);
            if (real == null) {
                empty.answer(exchange, r, "virtual queue " + virtualQueue + " has no real queue behind it (topic "
                    + r.field("topic") + " has " + map.size() + " readable queues)");
            } else {
                relay.send(exchange, r, real.brokerName(), BypassRelay.withQueue(r, real), null,
                    relay.requestTimeoutNanos(), BypassRelay.relayed(exchange, r));
            }
        });
    }

    /**
     * GET_CONSUMER_LIST_BY_GROUP: the members the brokers know (the group's clients heartbeat the real brokers
     * themselves), from the first broker of a virtual-queue topic the connection consumes in bypass (any such
     * topic when it registered none).
     */
    void members(Exchange exchange, VirtualBrokerRequest r) {
        counted(r);
        Set<String> mine = exchange.client().channel().attr(TOPICS).get();
        String topic = mine == null || mine.isEmpty() ? null : new TreeSet<>(mine).first();
        if (topic == null) {
            topic = queues.settings().isEmpty() ? null : queues.settings().get(0).topic();
        }
        withRoute(exchange, r, topic, map -> {
            if (map.size() == 0) {
                r.error(exchange, RemotingSysResponseCode.SYSTEM_ERROR, "no readable queue on a virtual-queue topic: "
                    + "no broker to ask for the members of " + r.field("consumerGroup"));
                return;
            }
            relay.send(exchange, r, map.real(0).brokerName(), r.ext(), null, relay.requestTimeoutNanos(),
                BypassRelay.relayed(exchange, r));
        });
    }

    // ---------------------------------------------------------------- routes

    /** Runs {@code then} with the topic's bypass map, asking the name servers first when the gateway knows no route. */
    void withRoute(Exchange exchange, VirtualBrokerRequest r, String topic, Consumer<BypassMap> then) {
        ClusterView cluster = queues.context().cluster();
        if (topic == null) {
            r.error(exchange, ResponseCode.SYSTEM_ERROR, "the request names no topic");
            return;
        }
        if (cluster.knowsTopic(topic)) {
            then.accept(mapOf(topic));
            return;
        }
        queues.routes().refresh(topic, exchange.loop()).addListener(f -> {
            if (cluster.knowsTopic(topic)) {
                then.accept(mapOf(topic));
            } else {
                // an empty answer here would make a client start over from its consumeFromWhere
                r.error(exchange, ResponseCode.SYSTEM_ERROR, "the route of topic " + topic + " is not known to the "
                    + "gateway" + (f.isSuccess() ? "" : " (name servers: " + f.cause().getMessage() + ")"));
            }
        });
    }

    /**
     * The bypass map of {@code topic} (its route known): what the route says, with every real queue this gateway saw
     * before keeping its place ({@link BypassMap#with}), so a broker that drops out of the route while it restarts
     * renames no virtual queue; its own are answered with errors meanwhile (no master known, or not reachable). A
     * change that still renames (a new broker whose name sorts before a known one) is logged and counted
     * ({@code rmqgw_vq_bypass_remaps_total}): the clients of bypassing groups holding those virtual queues read and
     * commit another real queue's offsets until they restart.
     */
    BypassMap mapOf(String topic) {
        BypassMap routed = BypassMap.of(queues.context().cluster().queues(topic));
        BypassMap before = maps.get(topic);
        BypassMap map = before == null ? routed : before.with(routed);
        if (map.equals(before)) {
            return before;
        }
        maps.put(topic, map);
        if (before != null && before.renamedBy(map)) {
            log.warn("virtual queues of topic {} now stand for other real queues for groups that bypass ({} -> {}): "
                + "restart those groups' consumers", topic, before.queues(), map.queues());
            Counter.builder("rmqgw.vq.bypass.remaps").description("Route changes that put other real queues behind "
                + "the virtual queues of groups that bypass").tag("topic", topic)
                .register(queues.context().metrics().registry()).increment();
        }
        return map;
    }

    /** Counts a request sent on for a bypass group, by code. */
    void counted(VirtualBrokerRequest r) {
        counters.computeIfAbsent(r.code(), code -> Counter.builder("rmqgw.vq.bypass.requests")
            .description("Virtual-broker requests of groups not served on the topic, sent on to its real queues")
            .tag("code", GatewayMetrics.requestCodeLabel(code)).register(queues.context().metrics().registry()))
            .increment();
    }
}
