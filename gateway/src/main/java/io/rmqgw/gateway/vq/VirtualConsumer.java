package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.PullResponseEncoder;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.relay.Exchange;
import io.rmqgw.routing.ClusterView;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One group on one topic served on virtual queues: the gateway consumes the real queues it owns as a
 * clustering member of the real group (its own heartbeats, rebalance, pulls and commits over the pooled
 * upstream connections) and leases what it fetched to the group's clients through a {@link VirtualQueueGroup}.
 * Every method runs on the owner's event loop ({@link VirtualQueues#loop}).
 *
 * <p>Consumption starts when the first client of the group registers on the virtual broker (its heartbeat
 * says what it subscribes to), and goes on while the gateway runs: the real commits only ever cover what
 * clients acknowledged, so a stop or crash costs redelivery of at most the window, never a loss.
 */
public final class VirtualConsumer {

    private static final Logger log = LoggerFactory.getLogger(VirtualConsumer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AttributeKey<Long> HOLDER = AttributeKey.valueOf("rmqgw.vq.holder");
    private static final AtomicLong HOLDERS = new AtomicLong();

    // PullSysFlag
    private static final int FLAG_COMMIT_OFFSET = 1;
    private static final int FLAG_SUSPEND = 1 << 1;
    private static final int FLAG_SUBSCRIPTION = 1 << 2;

    /** Messages one fetch asks for: the brokers' default transfer limit of one pull from memory. */
    private static final int FETCH_BATCH = 32;
    /**
     * Fetches in flight at once per real queue while the broker holds more: one at a time would cap a queue at one
     * batch per round trip, which clients then wait for (their pulls held) while the broker has a backlog.
     */
    private static final int FETCH_PIPELINE = 4;
    private static final long BROKER_SUSPEND_MILLIS = 15_000;
    private static final long MAX_CLIENT_HOLD_MILLIS = 20_000;
    /**
     * A client whose pulls on a virtual queue are refused for this long, while the queue's owner neither pulled nor
     * committed there, becomes its owner: the owner's start was a late one from a rebalance that then dropped the
     * queue again (two clients' starts crossing), and the refused client is the one the queue belongs to. A pull in
     * flight from a client that dropped the queue is a single pull, never a second of them.
     */
    static final long CLAIM_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * While a window waits for acknowledgements, a pull held from a client that holds leases on its queue is
     * answered after this long: the client's next pull carries its commit offset, which acknowledges what it
     * consumed meanwhile. Otherwise acknowledgements would wait for its offset persist (every 5 s), and a full
     * window would stall that long each time. Short, since a full window stalls every consumer until then; the
     * cost is one pull a client makes again at most this often per virtual queue, only while a window is full.
     */
    private static final long ACK_REFRESH_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long REBALANCE_MILLIS = 3_000;
    private static final long ROUTE_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long TICK_MILLIS = 100;
    private static final long RETRY_MILLIS = 1_000;
    /** How often the brokers' max offsets of queues not being fetched are asked (the lag gauge's age). */
    private static final long BROKER_END_MILLIS = 5_000;

    /** A client's pull with nothing to lease yet, answered when messages arrive or its hold ends. */
    private record HeldPull(Exchange exchange, int opaque, SerializeType encoding, int virtualQueue, long holder,
                            long offset, int maxMessages, long sinceNanos, long deadlineNanos) {
    }

    private final VirtualQueueConfig config;
    private final VirtualQueues owner;
    private final VirtualQueueGroup group;
    private final VirtualQueueMeters meters;
    private final ArrayDeque<HeldPull> held = new ArrayDeque<>();
    /** The fetches of each owned real queue. */
    private final Map<RealQueue, Fetches> fetches = new HashMap<>();
    private final Set<RealQueue> adding = new HashSet<>();
    private final Set<Long> watched = new HashSet<>();
    private final FlowCounters flow = new FlowCounters();
    /**
     * Virtual queue to the holder that last started on it (QUERY_CONSUMER_OFFSET, which a client sends when a
     * rebalance makes the queue its own): only its pulls lease there. None before any start (a client that kept
     * its queues across a gateway restart pulls without asking again).
     */
    private final Map<Integer, Long> owners = new HashMap<>();
    /** Virtual queue to when its owner last started, pulled or committed there (System.nanoTime()). */
    private final Map<Integer, Long> ownerSeen = new HashMap<>();
    /** Virtual queue to the client whose pulls there are refused (not its owner), since its first refusal. */
    private final Map<Integer, Claim> claims = new HashMap<>();
    private Subscription subscription = Subscription.ALL;
    /**
     * The group's retry topic as its clients subscribe it, the newest version any of them sent: they pull the retry
     * topic from the brokers themselves, and a broker refuses a pull whose subscription version is newer than the
     * one it holds for the group (SUBSCRIPTION_NOT_LATEST), which comes from the gateway's heartbeats.
     */
    private Subscription retrySubscription = Subscription.ALL;
    /** Where a real queue the group never committed on starts: as its clients' heartbeats ask. */
    private StartPoint startPoint = StartPoint.LAST;
    private volatile int virtualQueueCount;
    private boolean started;
    private boolean draining;
    /** Fetches in flight over all queues, readable from the stopping thread. */
    private volatile int fetchesInFlight;
    private boolean rebalancing;
    private boolean ackRefreshScheduled;
    private boolean closed;
    private long routeRefreshedNanos;
    private long ticks;
    private ScheduledFuture<?> tick;
    private ScheduledFuture<?> rebalance;

    VirtualConsumer(VirtualQueueConfig config, VirtualQueues owner) {
        this.config = config;
        this.owner = owner;
        this.group = new VirtualQueueGroup(config, System::nanoTime, PooledByteBufAllocator.DEFAULT);
        this.meters = new VirtualQueueMeters(owner.context().metrics().registry(), config.group(), config.topic(),
            group.stats());
    }

    public VirtualQueueConfig config() {
        return config;
    }

    /** The virtual queues offered now (per-real-queue times the real queues owned); readable from any thread. */
    public int virtualQueueCount() {
        return virtualQueueCount;
    }

    /** A snapshot of the window and leases (on the owner's loop). */
    public VirtualQueueStats stats() {
        return group.stats();
    }

    /** Breaks of the state machine's rules (on the owner's loop): must be empty. */
    public List<String> checkInvariants() {
        return group.checkInvariants();
    }

    Subscription subscription() {
        return subscription;
    }

    Subscription retrySubscription() {
        return retrySubscription;
    }

    StartPoint startPoint() {
        return startPoint;
    }

    // ---------------------------------------------------------------- clients

    /**
     * A client of the group registered (heartbeat on the virtual broker) with {@code s} on the topic and
     * {@code retry} on the group's retry topic (either null when it sent none), starting new queues from
     * {@code from}: consumption starts.
     */
    void member(Subscription s, Subscription retry, StartPoint from) {
        if (closed) {
            return;
        }
        if (s != null && !s.equals(subscription)) {
            subscription = s;
        }
        if (retry != null && retry.version() > retrySubscription.version()) {
            retrySubscription = retry;
            owner.heartbeatSoon();
        }
        startPoint = from;
        if (!started) {
            started = true;
            log.info("virtual queues: {} on {} starts consuming as {} (subscription {})", config.group(), config.topic(),
                owner.clientId(), subscription.expression());
            tick = owner.loop().scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
            rebalance = owner.loop().scheduleWithFixedDelay(this::rebalance, 0, REBALANCE_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** The connection's holder id: one per client connection, for the life of the connection. */
    static long holderOf(Channel channel) {
        Long id = channel.attr(HOLDER).get();
        if (id == null) {
            Long fresh = HOLDERS.incrementAndGet();
            id = channel.attr(HOLDER).setIfAbsent(fresh);
            id = id == null ? fresh : id;
        }
        return id;
    }

    /** Ends a holder's leases when its connection closes. */
    private void watch(long holder, Channel channel) {
        if (watched.add(holder)) {
            channel.closeFuture().addListener(f -> owner.loop().execute(() -> holderGone(holder)));
        }
    }

    /** PULL_MESSAGE on a virtual queue: leases and answers now, or holds the pull (long polling). */
    void pull(Exchange exchange, int opaque, SerializeType encoding, int virtualQueue, long offset, int maxMessages,
              int sysFlag, long commitOffset, long suspendMillis) {
        Channel channel = exchange.client().channel();
        long holder = holderOf(channel);
        watch(holder, channel);
        if (closed) {
            answerNotFound(exchange, opaque, encoding, offset);
            return;
        }
        if ((sysFlag & FLAG_COMMIT_OFFSET) != 0 && commitOffset >= 0) {
            acknowledged(group.commit(virtualQueue, holder, commitOffset));
        }
        Long owner = owners.get(virtualQueue);
        if (!draining && owner != null && owner != holder && claimed(virtualQueue, holder, owner)) {
            log.info("vq {} {}: virtual queue {} passes to the client that kept pulling it; its owner by a later start"
                + " was quiet for {} ms", config.group(), config.topic(), virtualQueue,
                TimeUnit.NANOSECONDS.toMillis(CLAIM_AFTER_NANOS));
            owners.put(virtualQueue, holder);
            owner = holder;
            flow.claims++;
        }
        if (owner != null && owner == holder) {
            ownerSeen.put(virtualQueue, System.nanoTime());
        }
        if (draining || (owner != null && owner != holder)) {
            // a pull from a client the queue was taken from (in flight when the rebalance moved it): it has
            // dropped the queue and would throw the messages away
            flow.pullsRefused++;
            answerNotFound(exchange, opaque, encoding, Math.max(offset, group.headOffset(virtualQueue)));
            return;
        }
        Pull p = group.pull(virtualQueue, holder, offset, batch(maxMessages));
        if (p.status() == Pull.Status.FOUND) {
            answerFound(exchange, opaque, encoding, p);
        } else if (p.status() == Pull.Status.OFFSET_INVALID || (sysFlag & FLAG_SUSPEND) == 0 || suspendMillis <= 0) {
            answerNotFound(exchange, opaque, encoding, p.nextOffset());
        } else {
            long hold = Math.min(suspendMillis, MAX_CLIENT_HOLD_MILLIS);
            long now = System.nanoTime();
            flow.pullsHeld++;
            held.addLast(new HeldPull(exchange, opaque, encoding, virtualQueue, holder, Math.max(offset, p.nextOffset()),
                maxMessages, now, now + TimeUnit.MILLISECONDS.toNanos(hold)));
            if (group.waitsForAcknowledgements()) {
                scheduleAckRefresh();
            }
        }
    }

    /** UPDATE_CONSUMER_OFFSET on a virtual queue: acknowledges the connection's leases below {@code offset}. */
    void commit(Channel channel, int virtualQueue, long offset) {
        long holder = holderOf(channel);
        watch(holder, channel);
        if (!closed) {
            if (Long.valueOf(holder).equals(owners.get(virtualQueue))) {
                ownerSeen.put(virtualQueue, System.nanoTime());
            }
            acknowledged(group.commit(virtualQueue, holder, offset));
        }
    }

    /**
     * A pull from {@code holder}, not the queue's owner: whether it now takes the queue over ({@link #CLAIM_AFTER_NANOS}
     * of refused pulls while the owner was quiet there, no pull of the owner's held).
     */
    private boolean claimed(int virtualQueue, long holder, long owner) {
        long now = System.nanoTime();
        Claim claim = claims.get(virtualQueue);
        if (claim == null || claim.holder() != holder) {
            claims.put(virtualQueue, new Claim(holder, now));
            return false;
        }
        Long seen = ownerSeen.get(virtualQueue);
        boolean ownerQuiet = (seen == null || now - seen >= CLAIM_AFTER_NANOS)
            && held.stream().noneMatch(h -> h.virtualQueue() == virtualQueue && h.holder() == owner);
        if (now - claim.sinceNanos() >= CLAIM_AFTER_NANOS && ownerQuiet) {
            claims.remove(virtualQueue);
            return true;
        }
        return false;
    }

    private record Claim(long holder, long sinceNanos) {
    }

    /** The head of a virtual queue (GET_MAX_OFFSET). */
    long head(int virtualQueue) {
        return closed ? 0 : group.headOffset(virtualQueue);
    }

    /**
     * QUERY_CONSUMER_OFFSET: the connection starts (over) on a virtual queue at its head; leases it still held
     * there were dropped by the client with its earlier ownership and are delivered again.
     */
    long startOver(Channel channel, int virtualQueue) {
        if (closed) {
            return 0;
        }
        long holder = holderOf(channel);
        watch(holder, channel);
        Long previous = owners.put(virtualQueue, holder);
        flow.starts++;
        if (previous != null && previous != holder) {
            flow.ownerChanges++;
        }
        ownerSeen.put(virtualQueue, System.nanoTime());
        claims.remove(virtualQueue);
        // pulls waiting on the queue belong to ownerships this rebalance ended: their clients dropped the queue
        // and throw answers away, so they must not lease anything
        for (Iterator<HeldPull> it = held.iterator(); it.hasNext(); ) {
            HeldPull h = it.next();
            if (h.virtualQueue() == virtualQueue) {
                it.remove();
                answerNotFound(h.exchange(), h.opaque(), h.encoding(), Math.max(h.offset(), group.headOffset(virtualQueue)));
            }
        }
        if (group.restart(virtualQueue, holder) > 0) {
            wakeHeld();
        }
        return group.headOffset(virtualQueue);
    }

    /** A broker's answer to a request the gateway sent on for a client: its code and remark. */
    @FunctionalInterface
    interface Answer {
        void accept(int code, String remark);
    }

    /**
     * CONSUMER_SEND_MSG_BACK for a message leased to the connection (its consumer answered RECONSUME_LATER): sent
     * on to the broker that stores the message, with the client's fields, so that broker puts it in the group's
     * retry topic with the delay level asked, or in its DLQ past maxReconsumeTimes, exactly as for a client of its
     * own. The lease stays: the client drops the message once its send-back succeeded, so its next commit
     * acknowledges it; after a refusal the client sends the message to the retry topic itself, as RocketMQ clients
     * do. A message not leased to the connection (its lease already ended: it is delivered again anyway) is
     * answered SUCCESS at once; with no broker address known it is given back (delivered again at once).
     */
    void sendBack(Channel channel, Map<String, String> clientFields, Answer answer) {
        long holder = holderOf(channel);
        long commitLogOffset;
        try {
            commitLogOffset = Long.parseLong(clientFields.getOrDefault("offset", "-1").trim());
        } catch (NumberFormatException e) {
            commitLogOffset = -1;
        }
        Delivery lease = closed ? null : group.leaseOf(holder, commitLogOffset);
        if (lease == null) {
            answer.accept(ResponseCode.SUCCESS, null);
            return;
        }
        Optional<String> master = owner.context().cluster().masterAddress(lease.realQueue().brokerName());
        if (master.isEmpty()) {
            giveBack(channel, commitLogOffset);
            answer.accept(ResponseCode.SUCCESS, null);
            return;
        }
        Map<String, String> ext = new HashMap<>(clientFields);
        ext.remove("bname"); // the virtual broker's name means nothing to the real one
        ext.put("group", config.group());
        owner.pool().broker(master.get()).request(RequestCode.CONSUMER_SEND_MSG_BACK, ext, null,
            owner.context().upstream().requestTimeoutNanos(), owner.loop()).addListener(f -> {
                if (!f.isSuccess()) {
                    answer.accept(ResponseCode.SYSTEM_ERROR, "send-back to broker " + lease.realQueue().brokerName()
                        + " through the gateway failed: " + f.cause().getMessage());
                    return;
                }
                RemotingFrame brokerAnswer = (RemotingFrame) f.getNow();
                try {
                    answer.accept(brokerAnswer.code(), HeaderCodec.decodeHeader(brokerAnswer).remark());
                } finally {
                    brokerAnswer.release();
                }
            });
    }

    /** Gives a leased message back: delivered again at once (or dead-lettered). */
    boolean giveBack(Channel channel, long commitLogOffset) {
        if (closed) {
            return false;
        }
        boolean found = group.giveBack(holderOf(channel), commitLogOffset);
        if (found) {
            sendDeadLetters();
            wakeHeld();
        }
        return found;
    }

    /** The connection closed (or unregistered the group): its leases end, its held pulls go. */
    void holderGone(long holder) {
        watched.remove(holder);
        owners.values().removeIf(h -> h == holder);
        ownerSeen.keySet().retainAll(owners.keySet());
        claims.values().removeIf(c -> c.holder() == holder);
        held.removeIf(h -> h.holder() == holder);
        if (!closed && group.holderGone(holder) > 0) {
            sendDeadLetters();
            wakeHeld();
        }
    }

    /** What a pull takes: up to its maxMsgNums of what is available, at least one message. */
    private int batch(int maxMessages) {
        return Math.max(1, Math.min(maxMessages, group.available()));
    }

    private void acknowledged(int count) {
        if (count > 0) {
            fetchAll(); // the windows may have room again
            wakeHeld(); // lease limits may have lifted
        }
    }

    /**
     * Answers held pulls while messages are available, longest waiting first, each with a whole batch (up to its
     * maxMsgNums): answers stay as large as what arrived (few, full answers under high rates; a single message is
     * answered at once under low rates), and a client answered pulls again at the back of the line.
     */
    private void wakeHeld() {
        if (held.isEmpty() || closed) {
            return;
        }
        Iterator<HeldPull> it = held.iterator();
        while (it.hasNext() && group.hasAvailable()) {
            HeldPull h = it.next();
            Pull p = group.pull(h.virtualQueue(), h.holder(), h.offset(), batch(h.maxMessages()));
            if (p.status() == Pull.Status.FOUND) {
                it.remove();
                flow.heldWoken++;
                flow.heldWokenNanos += System.nanoTime() - h.sinceNanos();
                answerFound(h.exchange(), h.opaque(), h.encoding(), p);
            } else if (p.status() == Pull.Status.OFFSET_INVALID) {
                it.remove();
                answerNotFound(h.exchange(), h.opaque(), h.encoding(), p.nextOffset());
            }
        }
    }

    private void answerFound(Exchange exchange, int opaque, SerializeType encoding, Pull p) {
        flow.pullsFound++;
        flow.pulledMessages += p.deliveries().size();
        ByteBuf records = p.records();
        StoreHostMapper storeHosts = owner.storeHosts();
        if (storeHosts != null) {
            StoredRecords.rewriteStoreHosts(records, storeHosts);
        }
        exchange.answer(PullResponseEncoder.encode(exchange.alloc(), encoding, opaque,
            ResponseCode.SUCCESS, null, p.nextOffset(), records));
    }

    private void answerNotFound(Exchange exchange, int opaque, SerializeType encoding, long next) {
        exchange.answer(PullResponseEncoder.encode(exchange.alloc(), encoding, opaque,
            ResponseCode.PULL_NOT_FOUND, "no new message on the virtual queue", next, null));
    }

    // ---------------------------------------------------------------- timers

    /** Runs {@link #refreshAcknowledgements} {@link #ACK_REFRESH_NANOS} from now, unless it is already due. */
    private void scheduleAckRefresh() {
        if (!ackRefreshScheduled && !closed) {
            ackRefreshScheduled = true;
            owner.loop().schedule(() -> {
                ackRefreshScheduled = false;
                refreshAcknowledgements();
            }, ACK_REFRESH_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * While a window waits for acknowledgements: answers (no new message) the pulls held at least
     * {@link #ACK_REFRESH_NANOS} from clients that hold leases on their queue, so their next pulls bring their
     * commits; comes back for those held more recently.
     */
    private void refreshAcknowledgements() {
        if (closed || held.isEmpty() || !group.waitsForAcknowledgements()) {
            return;
        }
        long now = System.nanoTime();
        boolean more = false;
        for (Iterator<HeldPull> it = held.iterator(); it.hasNext(); ) {
            HeldPull h = it.next();
            if (!group.holdsLeases(h.virtualQueue(), h.holder())) {
                continue;
            }
            if (now - h.sinceNanos() >= ACK_REFRESH_NANOS) {
                it.remove();
                flow.heldRefreshed++;
                answerNotFound(h.exchange(), h.opaque(), h.encoding(), Math.max(h.offset(), group.headOffset(h.virtualQueue())));
            } else {
                more = true;
            }
        }
        if (more) {
            scheduleAckRefresh();
        }
    }

    private void tick() {
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        refreshAcknowledgements();
        for (Iterator<HeldPull> it = held.iterator(); it.hasNext(); ) {
            HeldPull h = it.next();
            if (now - h.deadlineNanos() >= 0) {
                it.remove();
                flow.heldExpired++;
                answerNotFound(h.exchange(), h.opaque(), h.encoding(), Math.max(h.offset(), group.headOffset(h.virtualQueue())));
            }
        }
        if (++ticks % (1000 / TICK_MILLIS) == 0) {
            if (group.expireLeases() > 0) {
                wakeHeld();
            }
            sendDeadLetters();
            pushCommits();
            fetchAll();
            if (ticks % (BROKER_END_MILLIS / TICK_MILLIS) == 0) {
                askBrokerEnds();
            }
            meters.update(group.stats(), flow.copy());
        }
    }

    // ---------------------------------------------------------------- rebalance among gateways

    private void rebalance() {
        if (closed || rebalancing) {
            return;
        }
        ClusterView cluster = owner.context().cluster();
        long now = System.nanoTime();
        if (!cluster.knowsTopic(config.topic()) || now - routeRefreshedNanos > ROUTE_REFRESH_NANOS) {
            routeRefreshedNanos = now;
            rebalancing = true;
            owner.routes().refresh(config.topic(), owner.loop()).addListener(f -> {
                rebalancing = false;
                if (!f.isSuccess()) {
                    log.warn("virtual queues: route of {} not refreshed: {}", config.topic(), f.cause().getMessage());
                } else if (cluster.knowsTopic(config.topic())) {
                    rebalance();
                }
            });
            return;
        }
        List<RealQueue> all = new ArrayList<>();
        for (ClusterView.QueueRef q : cluster.readableQueues(config.topic())) {
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
        owner.pool().broker(master.get()).request(RequestCode.GET_CONSUMER_LIST_BY_GROUP,
            Map.of("consumerGroup", config.group()), null, owner.context().upstream().requestTimeoutNanos(), owner.loop())
            .addListener(f -> {
                rebalancing = false;
                if (!f.isSuccess()) {
                    log.debug("virtual queues: members of {} not read: {}", config.group(), f.cause().getMessage());
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
        if (closed) {
            return;
        }
        for (RealQueue owned : List.copyOf(group.realQueues())) {
            if (!mine.contains(owned)) {
                RealCommit last = group.removeRealQueue(owned);
                stopFetching(owned);
                log.info("virtual queues: {} on {} gives up {} (another gateway takes it)", config.group(),
                    config.topic(), owned);
                if (last != null) {
                    pushCommit(last);
                }
            }
        }
        for (RealQueue q : mine) {
            if (!group.realQueues().contains(q) && adding.add(q)) {
                startQueue(q);
            }
        }
        virtualQueueCount = group.virtualQueueCount();
    }

    /**
     * Starts owning {@code q} from the real group's committed offset, or, where it never committed, from where its
     * clients ask to start ({@link StartPoint}).
     */
    private void startQueue(RealQueue q) {
        Optional<String> master = owner.context().cluster().masterAddress(q.brokerName());
        if (master.isEmpty()) {
            adding.remove(q);
            return;
        }
        Map<String, String> ext = Map.of("consumerGroup", config.group(), "topic", config.topic(),
            "queueId", Integer.toString(q.queueId()));
        askOffset(master.get(), RequestCode.QUERY_CONSUMER_OFFSET, ext, (code, offset) -> {
            if (offset >= 0) {
                own(q, offset);
            } else if (code == ResponseCode.QUERY_NOT_FOUND) {
                // the group never committed: start where its clients would have started on the broker
                StartPoint from = startPoint;
                Map<String, String> where = new HashMap<>(Map.of("topic", config.topic(),
                    "queueId", Integer.toString(q.queueId())));
                if (from == StartPoint.TIMESTAMP) {
                    where.put("timestamp", Long.toString(StartPoint.timestamp(System.currentTimeMillis())));
                }
                askOffset(master.get(), from.requestCode, where, (foundCode, found) -> {
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

    /** What an offset request answered: its code and its {@code offset} field (-1 unless SUCCESS). */
    @FunctionalInterface
    private interface OffsetAnswer {
        void accept(int code, long offset);
    }

    private void askOffset(String master, int code, Map<String, String> ext, OffsetAnswer then) {
        askOffset(master, code, ext, then, () -> then.accept(-1, -1));
    }

    private void askOffset(String master, int code, Map<String, String> ext, OffsetAnswer then, Runnable failed) {
        owner.pool().broker(master).request(code, ext, null, owner.context().upstream().requestTimeoutNanos(),
            owner.loop()).addListener(f -> {
                if (!f.isSuccess()) {
                    failed.run();
                    return;
                }
                RemotingFrame answer = (RemotingFrame) f.getNow();
                int answered;
                long offset;
                try {
                    answered = answer.code();
                    offset = answered == ResponseCode.SUCCESS ? longField(answer, "offset", -1) : -1;
                } finally {
                    answer.release();
                }
                then.accept(answered, offset);
            });
    }

    private void own(RealQueue q, long offset) {
        adding.remove(q);
        if (closed || !group.addRealQueue(q, offset)) {
            return;
        }
        virtualQueueCount = group.virtualQueueCount();
        log.info("virtual queues: {} on {} owns {} from offset {} ({} virtual queues)", config.group(), config.topic(),
            q, offset, virtualQueueCount);
        fetch(q);
    }

    // ---------------------------------------------------------------- fetching the real queues

    private void fetchAll() {
        for (RealQueue q : group.realQueues()) {
            fetch(q);
        }
    }

    /**
     * Tops up {@code q}'s fetches: the first one long-polls from the fetch offset; while the broker is known to hold
     * more messages and the last answer was full, further ones ask for the next batches at once (up to
     * {@link #FETCH_PIPELINE} in flight), each within the window's room left by those in flight.
     */
    private void fetch(RealQueue q) {
        if (closed || draining || group.fetchOffset(q) < 0) {
            return;
        }
        Fetches state = fetches.computeIfAbsent(q, k -> new Fetches());
        while (!state.resting && state.inFlight.size() < FETCH_PIPELINE) {
            Fetch last = state.inFlight.peekLast();
            long from = last == null ? group.fetchOffset(q) : last.offset + last.asked;
            if (last != null && (!state.full || from >= group.knownEnd(q))) {
                return; // the broker may have nothing more: the long-polling fetch in flight waits for it
            }
            int room = group.fetchRoom(q) - state.asked();
            if (room <= 0) {
                if (last == null) {
                    if (state.pausedSince < 0) {
                        state.pausedSince = System.nanoTime();
                    }
                    scheduleAckRefresh(); // the window is full: ask the holders for their acknowledgements
                }
                return; // resumed once acknowledgements make room
            }
            Optional<String> master = owner.context().cluster().masterAddress(q.brokerName());
            if (master.isEmpty()) {
                return; // tried again on the next tick
            }
            send(q, state, master.get(), from, Math.min(room, FETCH_BATCH), last == null);
        }
    }

    private void send(RealQueue q, Fetches state, String master, long from, int asked, boolean longPoll) {
        Map<String, String> ext = new HashMap<>();
        ext.put("consumerGroup", config.group());
        ext.put("topic", config.topic());
        ext.put("queueId", Integer.toString(q.queueId()));
        ext.put("queueOffset", Long.toString(from));
        ext.put("maxMsgNums", Integer.toString(asked));
        ext.put("sysFlag", Integer.toString(longPoll ? FLAG_SUSPEND | FLAG_SUBSCRIPTION : FLAG_SUBSCRIPTION));
        ext.put("commitOffset", "0");
        ext.put("suspendTimeoutMillis", Long.toString(longPoll ? BROKER_SUSPEND_MILLIS : 0));
        ext.put("subscription", subscription.expression());
        ext.put("subVersion", Long.toString(subscription.version()));
        ext.put("expressionType", subscription.type());
        Fetch fetch = new Fetch(from, asked, System.nanoTime());
        state.inFlight.addLast(fetch);
        fetchesInFlight++;
        if (state.pausedSince >= 0) {
            flow.windowFullNanos += fetch.sentNanos - state.pausedSince;
            state.pausedSince = -1;
        }
        flow.fetches++;
        long timeout = (longPoll ? TimeUnit.MILLISECONDS.toNanos(BROKER_SUSPEND_MILLIS) : 0)
            + owner.context().upstream().requestTimeoutNanos();
        owner.pool().broker(master).request(RequestCode.PULL_MESSAGE, ext, null, timeout, owner.loop())
            .addListener(f -> {
                fetch.done = true;
                fetchesInFlight--;
                if (f.isSuccess()) {
                    fetch.answer = (RemotingFrame) f.getNow();
                } else {
                    log.debug("virtual queues: fetch of {} failed: {}", q, f.cause().getMessage());
                }
                if (fetches.get(q) != state) {
                    fetch.release(); // the queue was given up (or closed) meanwhile
                    return;
                }
                takeAnswers(q, state);
            });
    }

    /** Takes the fetches answered so far into the window, in the order they were sent. */
    private void takeAnswers(RealQueue q, Fetches state) {
        assert owner.loop().inEventLoop() : "fetch answers taken off the virtual queues' loop"; // they count there
        while (!state.inFlight.isEmpty() && state.inFlight.peekFirst().done) {
            Fetch fetch = state.inFlight.pollFirst();
            RemotingFrame answer = fetch.answer;
            fetch.answer = null;
            if (closed) {
                if (answer != null) {
                    answer.release();
                }
                continue;
            }
            if (answer == null) {
                state.full = false;
                rest(q, state);
            } else if (fetch.offset > group.fetchOffset(q)) {
                // an earlier answer ended short of where this one starts: the gap is fetched again
                answer.release();
                state.full = false;
            } else {
                fetched(q, state, fetch, answer);
            }
        }
        fetch(q);
    }

    private void fetched(RealQueue q, Fetches state, Fetch fetch, RemotingFrame answer) {
        int code = answer.code();
        long next;
        boolean progressed = false;
        int accepted = 0;
        try {
            Map<String, String> fields = HeaderCodec.decodeHeader(answer).extFields();
            next = longField(fields, "nextBeginOffset", -1);
            group.brokerEnd(q, longField(fields, "maxOffset", -1));
            if (code == ResponseCode.SUCCESS) {
                Appended appended = group.append(q, answer.bodySlice().retain(), next);
                if (appended.malformed()) {
                    log.warn("virtual queues: {} answered records that are not of {}; fetching again", q, q);
                }
                accepted = appended.accepted();
                progressed = accepted > 0 || appended.duplicates() > 0 || appended.overflow() > 0;
            }
        } finally {
            answer.release();
        }
        if (code == ResponseCode.SUCCESS) {
            flow.fetchNanos += System.nanoTime() - fetch.sentNanos;
            flow.fetchedMessages += accepted;
            if (accepted == 0) {
                flow.fetchesEmpty++;
            } else if (accepted < fetch.asked) {
                flow.fetchesShort++;
            }
        }
        state.full = code == ResponseCode.SUCCESS && accepted >= fetch.asked;
        if (accepted > 0) {
            wakeHeld();
        }
        switch (code) {
            // a FOUND that brought nothing (an upstream that is not a broker) must not become a busy loop
            case ResponseCode.SUCCESS -> {
                if (!progressed) {
                    rest(q, state);
                }
            }
            case ResponseCode.PULL_RETRY_IMMEDIATELY -> { }
            case ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_OFFSET_MOVED -> {
                if (next >= 0 && group.fetchOffset(q) >= 0) {
                    group.skipFetchTo(q, next);
                }
            }
            default -> {
                log.debug("virtual queues: fetch of {} answered code {}", q, code);
                rest(q, state);
            }
        }
    }

    /** GET_MAX_OFFSET of each owned queue with no fetch in flight (a fetch answer carries it otherwise). */
    private void askBrokerEnds() {
        for (RealQueue q : group.realQueues()) {
            Optional<String> master = owner.context().cluster().masterAddress(q.brokerName());
            Fetches state = fetches.get(q);
            if ((state != null && !state.inFlight.isEmpty()) || master.isEmpty()) {
                continue;
            }
            askOffset(master.get(), RequestCode.GET_MAX_OFFSET,
                Map.of("topic", config.topic(), "queueId", Integer.toString(q.queueId())), (code, max) -> {
                    if (!closed) {
                        group.brokerEnd(q, max);
                    }
                });
        }
    }

    /** A fetch failed or brought nothing usable: {@code q} is fetched again {@link #RETRY_MILLIS} from now. */
    private void rest(RealQueue q, Fetches state) {
        if (!closed && !state.resting) {
            state.resting = true;
            owner.loop().schedule(() -> {
                state.resting = false;
                if (fetches.get(q) == state) {
                    fetch(q);
                }
            }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** {@code q} is no longer owned: answers still to come are released as they arrive. */
    private void stopFetching(RealQueue q) {
        Fetches state = fetches.remove(q);
        if (state != null) {
            for (Fetch fetch : state.inFlight) {
                if (fetch.done) {
                    fetch.release();
                }
            }
            state.inFlight.clear();
        }
    }

    /** A fetch sent to a broker for one real queue; its answer waits here until the earlier ones were taken. */
    private static final class Fetch {
        final long offset;
        final int asked;
        final long sentNanos;
        boolean done;
        /** The broker's answer once done; null when the request failed. */
        RemotingFrame answer;

        Fetch(long offset, int asked, long sentNanos) {
            this.offset = offset;
            this.asked = asked;
            this.sentNanos = sentNanos;
        }

        void release() {
            if (answer != null) {
                answer.release();
                answer = null;
            }
        }
    }

    /** The fetches of one real queue. */
    private static final class Fetches {
        /** In the order sent, so by offset. */
        final ArrayDeque<Fetch> inFlight = new ArrayDeque<>();
        /** After a failed or unproductive fetch, until {@link #RETRY_MILLIS} passed. */
        boolean resting;
        /** The last answer brought all it asked for: the next batch may be asked at once. */
        boolean full;
        /** Since when the window was too full to fetch (System.nanoTime()), -1 while it is not. */
        long pausedSince = -1;

        int asked() {
            int n = 0;
            for (Fetch f : inFlight) {
                n += f.asked;
            }
            return n;
        }
    }

    // ---------------------------------------------------------------- commits and dead letters

    private void pushCommits() {
        for (RealCommit c : group.takeCommits()) {
            pushCommit(c);
        }
    }

    private void pushCommit(RealCommit c) {
        Optional<String> master = owner.context().cluster().masterAddress(c.queue().brokerName());
        if (master.isEmpty()) {
            return;
        }
        Map<String, String> ext = Map.of("consumerGroup", config.group(), "topic", config.topic(),
            "queueId", Integer.toString(c.queue().queueId()), "commitOffset", Long.toString(c.offset()));
        owner.pool().broker(master.get()).request(RequestCode.UPDATE_CONSUMER_OFFSET, ext, null,
            owner.context().upstream().requestTimeoutNanos(), owner.loop()).addListener(f -> {
                if (f.isSuccess()) {
                    ((RemotingFrame) f.getNow()).release();
                } else {
                    // handed out again by the next takeCommits, a second later
                    log.debug("virtual queues: commit {} not pushed: {}", c, f.cause().getMessage());
                    if (!closed) {
                        group.commitNotPushed(c);
                    }
                }
            });
    }

    private void sendDeadLetters() {
        for (DeadLetter d : group.takeDeadLetters()) {
            Optional<String> master = owner.context().cluster().masterAddress(d.queue().brokerName());
            if (master.isEmpty()) {
                group.deadLetterFailed(d.queue(), d.queueOffset());
                continue;
            }
            Map<String, String> ext = Map.of("offset", Long.toString(d.commitLogOffset()), "group", config.group(),
                "delayLevel", "-1", "originTopic", config.topic(), "unitMode", "false",
                "maxReconsumeTimes", Integer.toString(config.maxDeliveries()));
            owner.pool().broker(master.get()).request(RequestCode.CONSUMER_SEND_MSG_BACK, ext, null,
                owner.context().upstream().requestTimeoutNanos(), owner.loop()).addListener(f -> {
                    boolean ok = false;
                    if (f.isSuccess()) {
                        RemotingFrame answer = (RemotingFrame) f.getNow();
                        ok = answer.code() == ResponseCode.SUCCESS;
                        answer.release();
                    }
                    if (closed) {
                        return;
                    }
                    if (ok) {
                        group.deadLettered(d.queue(), d.queueOffset());
                    } else {
                        log.warn("virtual queues: dead letter {}@{} not taken by the broker; tried again", d.queue(),
                            d.queueOffset());
                        group.deadLetterFailed(d.queue(), d.queueOffset());
                    }
                });
        }
    }

    private static long longField(RemotingFrame frame, String name, long fallback) {
        return longField(HeaderCodec.decodeHeader(frame).extFields(), name, fallback);
    }

    private static long longField(Map<String, String> ext, String name, long fallback) {
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

    /** The gateway stops: held pulls answered now, no more leases or fetches, acknowledged commits pushed. */
    void drain() {
        if (closed || draining) {
            return;
        }
        draining = true;
        while (!held.isEmpty()) {
            HeldPull h = held.pollFirst();
            answerNotFound(h.exchange(), h.opaque(), h.encoding(), Math.max(h.offset(), group.headOffset(h.virtualQueue())));
        }
        pushCommits();
    }

    int fetchesInFlight() {
        return fetchesInFlight;
    }

    /** Stops: held pulls answered, real commits pushed, every buffer released. */
    void close() {
        assert owner.loop().inEventLoop() : "closed off the virtual queues' loop"; // the windows' buffers count there
        if (closed) {
            return;
        }
        pushCommits();
        for (RealQueue q : List.copyOf(group.realQueues())) {
            RealCommit last = group.removeRealQueue(q);
            stopFetching(q);
            if (last != null) {
                pushCommit(last);
            }
        }
        closed = true;
        if (tick != null) {
            tick.cancel(false);
        }
        if (rebalance != null) {
            rebalance.cancel(false);
        }
        while (!held.isEmpty()) {
            HeldPull h = held.pollFirst();
            answerNotFound(h.exchange(), h.opaque(), h.encoding(), h.offset());
        }
        meters.update(group.stats(), flow.copy());
        group.close();
        meters.close();
        virtualQueueCount = 0;
    }
}
