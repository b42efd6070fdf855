package io.rmqgw.gateway.vq;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.core.Exchange;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One group on one topic served on virtual queues: the gateway consumes the real queues it owns as a
 * clustering member of the real group and leases what it fetched to the group's clients through a
 * {@link VirtualQueueGroup}. This class ties the parts together and keeps the timers; the parts follow the
 * RocketMQ client's: {@link RealQueueRebalance} (which real queues), {@link RealQueueFetcher} (their messages),
 * {@link CommitPusher} (offsets to the brokers), {@link SendBacks} (dead letters and send-backs), and on the
 * clients' side {@link VirtualQueueOwners} and {@link HeldPulls} (their long polls). Every method runs on the
 * owner's event loop ({@link VirtualQueues#loop}).
 *
 * <p>Consumption starts when the first client of the group registers on the virtual broker (its heartbeat
 * says what it subscribes to), and goes on while the gateway runs: the real commits only ever cover what
 * clients acknowledged, so a stop or crash costs redelivery of at most the window, never a loss.
 */
public final class VirtualConsumer {

    private static final Logger log = LoggerFactory.getLogger(VirtualConsumer.class);
    private static final AttributeKey<Long> HOLDER = AttributeKey.valueOf("rmqgw.vq.holder");
    private static final AtomicLong HOLDERS = new AtomicLong();

    /** PullSysFlag's commit-offset bit: the pull carries the client's commit. */
    private static final int FLAG_COMMIT_OFFSET = 1;
    private static final long REBALANCE_MILLIS = 3_000;
    private static final long TICK_MILLIS = 100;
    /** How often the brokers' max offsets of queues not being fetched are asked (the lag gauge's age). */
    private static final long BROKER_END_MILLIS = 5_000;

    private final VirtualQueueConfig config;
    private final VirtualQueues owner;
    private final VirtualQueueGroup group;
    private final VirtualQueueMeters meters;
    private final FlowCounters flow = new FlowCounters();
    private final RealBrokers brokers;
    private final HeldPulls pulls;
    private final VirtualQueueOwners owners;
    private final RealQueueFetcher fetcher;
    private final RealQueueRebalance rebalance;
    private final CommitPusher commits;
    private final SendBacks sendBacks;
    private final Set<Long> watched = new HashSet<>();
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
    private boolean closed;
    private long ticks;
    private ScheduledFuture<?> tick;
    private ScheduledFuture<?> rebalancing;

    VirtualConsumer(VirtualQueueConfig config, VirtualQueues owner) {
        this.config = config;
        this.owner = owner;
        this.group = new VirtualQueueGroup(config, System::nanoTime, PooledByteBufAllocator.DEFAULT);
        this.meters = new VirtualQueueMeters(owner.context().metrics().registry(), config.group(), config.topic(),
            group.stats());
        this.brokers = new RealBrokers(owner);
        this.pulls = new HeldPulls(this);
        this.owners = new VirtualQueueOwners(this);
        this.fetcher = new RealQueueFetcher(this);
        this.rebalance = new RealQueueRebalance(this);
        this.commits = new CommitPusher(this);
        this.sendBacks = new SendBacks(this);
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

    // the parts' shared state

    VirtualQueues owner() {
        return owner;
    }

    VirtualQueueGroup group() {
        return group;
    }

    FlowCounters flow() {
        return flow;
    }

    RealBrokers brokers() {
        return brokers;
    }

    HeldPulls pulls() {
        return pulls;
    }

    RealQueueFetcher fetcher() {
        return fetcher;
    }

    boolean closed() {
        return closed;
    }

    boolean draining() {
        return draining;
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
            rebalancing = owner.loop().scheduleWithFixedDelay(rebalance::rebalance, 0, REBALANCE_MILLIS,
                TimeUnit.MILLISECONDS);
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

    /** The connection's holder id, its leases ended when the connection closes. */
    private long watchedHolder(Channel channel) {
        long holder = holderOf(channel);
        if (watched.add(holder)) {
            channel.closeFuture().addListener(f -> owner.loop().execute(() -> holderGone(holder)));
        }
        return holder;
    }

    /** PULL_MESSAGE on a virtual queue: leases and answers now, or holds the pull (long polling). */
    void pull(Exchange exchange, int opaque, SerializeType encoding, int virtualQueue, long offset, int maxMessages,
              int sysFlag, long commitOffset, long suspendMillis) {
        long holder = watchedHolder(exchange.client().channel());
        if (closed) {
            HeldPulls.answerNotFound(exchange, opaque, encoding, offset);
            return;
        }
        if ((sysFlag & FLAG_COMMIT_OFFSET) != 0 && commitOffset >= 0) {
            acknowledged(group.commit(virtualQueue, holder, commitOffset));
        }
        if (!owners.admits(virtualQueue, holder, draining, pulls)) {
            flow.pullsRefused++;
            HeldPulls.answerNotFound(exchange, opaque, encoding, Math.max(offset, group.headOffset(virtualQueue)));
            return;
        }
        pulls.pull(exchange, opaque, encoding, virtualQueue, holder, offset, maxMessages, sysFlag, suspendMillis);
    }

    /** UPDATE_CONSUMER_OFFSET on a virtual queue: acknowledges the connection's leases below {@code offset}. */
    void commit(Channel channel, int virtualQueue, long offset) {
        long holder = watchedHolder(channel);
        if (!closed) {
            owners.committed(virtualQueue, holder);
            acknowledged(group.commit(virtualQueue, holder, offset));
        }
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
        long holder = watchedHolder(channel);
        owners.started(virtualQueue, holder);
        pulls.endOn(virtualQueue);
        if (group.restart(virtualQueue, holder) > 0) {
            pulls.wake();
        }
        return group.headOffset(virtualQueue);
    }

    /** CONSUMER_SEND_MSG_BACK of a message leased to the connection ({@link SendBacks#sendBack}). */
    void sendBack(Channel channel, Map<String, String> clientFields, SendBacks.Answer answer) {
        sendBacks.sendBack(channel, clientFields, answer);
    }

    /** Gives a leased message back: delivered again at once (or dead-lettered). */
    boolean giveBack(Channel channel, long commitLogOffset) {
        if (closed) {
            return false;
        }
        boolean found = group.giveBack(holderOf(channel), commitLogOffset);
        if (found) {
            sendBacks.sendDeadLetters();
            pulls.wake();
        }
        return found;
    }

    /** The connection closed (or unregistered the group): its leases end, its held pulls go. */
    void holderGone(long holder) {
        watched.remove(holder);
        owners.gone(holder);
        pulls.holderGone(holder);
        if (!closed && group.holderGone(holder) > 0) {
            sendBacks.sendDeadLetters();
            pulls.wake();
        }
    }

    private void acknowledged(int count) {
        if (count > 0) {
            fetcher.fetchAll(); // the windows may have room again
            pulls.wake(); // lease limits may have lifted
        }
    }

    // ---------------------------------------------------------------- real queues

    /** {@code q} goes to another gateway: its window is dropped, its fetches end, its last commit is pushed. */
    void giveUp(RealQueue q) {
        RealCommit last = group.removeRealQueue(q);
        fetcher.stop(q);
        if (last != null) {
            commits.push(last);
        }
    }

    /** The real queues owned changed: the count the route offers follows. */
    void virtualQueuesChanged() {
        virtualQueueCount = group.virtualQueueCount();
    }

    // ---------------------------------------------------------------- timers and stopping

    private void tick() {
        if (closed) {
            return;
        }
        pulls.refreshAcknowledgements();
        pulls.expire();
        if (++ticks % (1000 / TICK_MILLIS) == 0) {
            if (group.expireLeases() > 0) {
                pulls.wake();
            }
            sendBacks.sendDeadLetters();
            commits.pushMoved();
            fetcher.fetchAll();
            if (ticks % (BROKER_END_MILLIS / TICK_MILLIS) == 0) {
                fetcher.askBrokerEnds();
            }
            meters.update(group.stats(), flow.copy());
        }
    }

    /** The gateway stops: held pulls answered now, no more leases or fetches, acknowledged commits pushed. */
    void drain() {
        if (closed || draining) {
            return;
        }
        draining = true;
        pulls.answerAll(true);
        commits.pushMoved();
    }

    int fetchesInFlight() {
        return fetcher.inFlight();
    }

    /** Stops: held pulls answered, real commits pushed, every buffer released. */
    void close() {
        assert owner.loop().inEventLoop() : "closed off the virtual queues' loop"; // the windows' buffers count there
        if (closed) {
            return;
        }
        commits.pushMoved();
        for (RealQueue q : List.copyOf(group.realQueues())) {
            giveUp(q);
        }
        closed = true;
        if (tick != null) {
            tick.cancel(false);
        }
        if (rebalancing != null) {
            rebalancing.cancel(false);
        }
        pulls.answerAll(false);
        meters.update(group.stats(), flow.copy());
        group.close();
        meters.close();
        virtualQueueCount = 0;
    }
}
