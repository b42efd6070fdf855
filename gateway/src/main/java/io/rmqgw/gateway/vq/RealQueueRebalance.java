package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBufInputStream;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.routing.ClusterView;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's share of a served group's real queues among the gateways that serve it (RocketMQ's
 * {@code RebalanceImpl} with the averaging allocation): the group's members as the brokers know them, the queues
 * that fall to this gateway, taken from the real group's committed offset and given up with a last commit.
 * On the virtual queues' loop.
 */
final class RealQueueRebalance {

    private static final Logger log = LoggerFactory.getLogger(RealQueueRebalance.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long ROUTE_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final VirtualConsumer consumer;
    private final VirtualQueueGroup group;
    /** Real queues being taken (their start offset asked), not owned yet. */
    private final Set<RealQueue> adding = new HashSet<>();
    private boolean rebalancing;
    private long routeRefreshedNanos;

    RealQueueRebalance(VirtualConsumer consumer) {
        this.consumer = consumer;
        this.group = consumer.group();
    }

    void rebalance() {
        if (consumer.closed() || rebalancing) {
            return;
        }
        VirtualQueues owner = consumer.owner();
        String topic = consumer.config().topic();
        ClusterView cluster = owner.context().cluster();
        long now = System.nanoTime();
        if (!cluster.knowsTopic(topic) || now - routeRefreshedNanos > ROUTE_REFRESH_NANOS) {
            routeRefreshedNanos = now;
            rebalancing = true;
            owner.routes().refresh(topic, owner.loop()).addListener(f -> {
                rebalancing = false;
                if (!f.isSuccess()) {
                    log.warn("virtual queues: route of {} not refreshed: {}", topic, f.cause().getMessage());
                } else if (cluster.knowsTopic(topic)) {
                    rebalance();
                }
            });
            return;
        }
        List<RealQueue> all = new ArrayList<>();
        for (ClusterView.QueueRef q : cluster.readableQueues(topic)) {
            all.add(new RealQueue(q.brokerName(), q.queueId()));
        }
        all.sort((a, b) -> a.brokerName().equals(b.brokerName()) ? Integer.compare(a.queueId(), b.queueId())
            : a.brokerName().compareTo(b.brokerName()));
        Optional<String> master = all.stream().map(q -> cluster.masterAddress(q.brokerName()))
            .flatMap(Optional::stream).findFirst();
        if (master.isEmpty()) {
            return;
        }
        rebalancing = true;
        consumer.brokers().request(master.get(), RequestCode.GET_CONSUMER_LIST_BY_GROUP,
            Map.of("consumerGroup", consumer.config().group())).addListener(f -> {
                rebalancing = false;
                if (!f.isSuccess()) {
                    log.debug("virtual queues: members of {} not read: {}", consumer.config().group(),
                        f.cause().getMessage());
                    return;
                }
                List<String> members = consumerIds((RemotingFrame) f.getNow());
                if (!members.contains(owner.clientId())) {
                    // not registered there yet (first round, or the broker restarted): heartbeat, then next round
                    owner.heartbeatAll();
                    return;
                }
                members.sort(String::compareTo);
                assign(allocate(all, members, owner.clientId()));
            });
    }

    /** The consumerIdList of a GET_CONSUMER_LIST_BY_GROUP answer (empty unless SUCCESS); releases the answer. */
    private static List<String> consumerIds(RemotingFrame answer) {
        try {
            List<String> ids = new ArrayList<>();
            if (answer.code() != ResponseCode.SUCCESS || answer.bodyLength() == 0) {
                return ids;
            }
            JsonNode body = JSON.readTree(new ByteBufInputStream(answer.bodySlice()));
            body.path("consumerIdList").forEach(id -> ids.add(id.asText()));
            return ids;
        } catch (IOException e) {
            return new ArrayList<>();
        } finally {
            answer.release();
        }
    }

    /** The averaging allocation every gateway computes alike: contiguous shares, the first ones one larger. */
    static List<RealQueue> allocate(List<RealQueue> all, List<String> members, String me) {
        int index = members.indexOf(me);
        List<RealQueue> mine = new ArrayList<>();
        if (index < 0 || all.isEmpty()) {
            return mine;
        }
        int n = members.size();
        int base = all.size() / n;
        int extra = all.size() % n;
        int start = index * base + Math.min(index, extra);
        int size = base + (index < extra ? 1 : 0);
        for (int i = 0; i < size; i++) {
            mine.add(all.get(start + i));
        }
        return mine;
    }

    private void assign(List<RealQueue> mine) {
        if (consumer.closed()) {
            return;
        }
        for (RealQueue owned : List.copyOf(group.realQueues())) {
            if (!mine.contains(owned)) {
                log.info("virtual queues: {} on {} gives up {} (another gateway takes it)", consumer.config().group(),
                    consumer.config().topic(), owned);
                consumer.giveUp(owned);
            }
        }
        for (RealQueue q : mine) {
            if (!group.realQueues().contains(q) && adding.add(q)) {
                startQueue(q);
            }
        }
        consumer.virtualQueuesChanged();
    }

    /**
     * Starts owning {@code q} from the real group's committed offset, or, where it never committed, from where its
     * clients ask to start ({@link StartPoint}).
     */
    private void startQueue(RealQueue q) {
        RealBrokers brokers = consumer.brokers();
        Optional<String> master = brokers.master(q.brokerName());
        if (master.isEmpty()) {
            adding.remove(q);
            return;
        }
        String topic = consumer.config().topic();
        Map<String, String> ext = Map.of("consumerGroup", consumer.config().group(), "topic", topic,
            "queueId", Integer.toString(q.queueId()));
        brokers.askOffset(master.get(), RequestCode.QUERY_CONSUMER_OFFSET, ext, (code, offset) -> {
            if (offset >= 0) {
                own(q, offset);
            } else if (code == ResponseCode.QUERY_NOT_FOUND) {
                // the group never committed: start where its clients would have started on the broker
                StartPoint from = consumer.startPoint();
                Map<String, String> where = new HashMap<>(Map.of("topic", topic,
                    "queueId", Integer.toString(q.queueId())));
                if (from == StartPoint.TIMESTAMP) {
                    where.put("timestamp", Long.toString(StartPoint.timestamp(System.currentTimeMillis())));
                }
                brokers.askOffset(master.get(), from.requestCode, where, (foundCode, found) -> {
                    if (found >= 0) {
                        own(q, found);
                    } else {
                        adding.remove(q);
                    }
                });
            } else {
                adding.remove(q);
            }
        }, () -> adding.remove(q));
    }

    private void own(RealQueue q, long offset) {
        adding.remove(q);
        if (consumer.closed() || !group.addRealQueue(q, offset)) {
            return;
        }
        consumer.virtualQueuesChanged();
        log.info("virtual queues: {} on {} owns {} from offset {} ({} virtual queues)", consumer.config().group(),
            consumer.config().topic(), q, offset, consumer.virtualQueueCount());
        consumer.fetcher().fetch(q);
    }
}
