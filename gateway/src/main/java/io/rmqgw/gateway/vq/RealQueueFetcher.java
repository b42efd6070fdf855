package io.rmqgw.gateway.vq;

import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches a served group's owned real queues into its windows (RocketMQ's {@code PullAPIWrapper} and
 * {@code PullMessageService}): PULL_MESSAGE to each queue's master, long polling while the broker has nothing,
 * pipelined while it has a backlog, always within the window's room. On the virtual queues' loop.
 */
final class RealQueueFetcher {

    private static final Logger log = LoggerFactory.getLogger(RealQueueFetcher.class);

    // PullSysFlag
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
    private static final long RETRY_MILLIS = 1_000;

    private final VirtualConsumer consumer;
    private final VirtualQueueGroup group;
    private final FlowCounters flow;
    /** The fetches of each owned real queue. */
    private final Map<RealQueue, Fetches> fetches = new HashMap<>();
    /** Fetches in flight over all queues, readable from the stopping thread. */
    private volatile int inFlight;

    RealQueueFetcher(VirtualConsumer consumer) {
        this.consumer = consumer;
        this.group = consumer.group();
        this.flow = consumer.flow();
    }

    int inFlight() {
        return inFlight;
    }

    void fetchAll() {
        for (RealQueue q : group.realQueues()) {
            fetch(q);
        }
    }

    /**
     * Tops up {@code q}'s fetches: the first one long-polls from the fetch offset; while the broker is known to hold
     * more messages and the last answer was full, further ones ask for the next batches at once (up to
     * {@link #FETCH_PIPELINE} in flight), each within the window's room left by those in flight.
     */
    void fetch(RealQueue q) {
        if (consumer.closed() || consumer.draining() || group.fetchOffset(q) < 0) {
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
                    consumer.pulls().scheduleAckRefresh(); // the window is full: ask the holders for acknowledgements
                }
                return; // resumed once acknowledgements make room
            }
            Optional<String> master = consumer.brokers().master(q.brokerName());
            if (master.isEmpty()) {
                return; // tried again on the next tick
            }
            send(q, state, master.get(), from, Math.min(room, FETCH_BATCH), last == null);
        }
    }

    private void send(RealQueue q, Fetches state, String master, long from, int asked, boolean longPoll) {
        Subscription subscription = consumer.subscription();
        Map<String, String> ext = new HashMap<>();
        ext.put("consumerGroup", consumer.config().group());
        ext.put("topic", consumer.config().topic());
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
        inFlight++;
        if (state.pausedSince >= 0) {
            flow.windowFullNanos += fetch.sentNanos - state.pausedSince;
            state.pausedSince = -1;
        }
        flow.fetches++;
        VirtualQueues owner = consumer.owner();
        long timeout = (longPoll ? TimeUnit.MILLISECONDS.toNanos(BROKER_SUSPEND_MILLIS) : 0)
            + owner.context().upstream().requestTimeoutNanos();
        owner.pool().broker(master).request(RequestCode.PULL_MESSAGE, ext, null, timeout, owner.loop())
            .addListener(f -> {
                fetch.done = true;
                inFlight--;
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
        assert consumer.owner().loop().inEventLoop() : "fetch answers taken off the virtual queues' loop"; // counted there
        while (!state.inFlight.isEmpty() && state.inFlight.peekFirst().done) {
            Fetch fetch = state.inFlight.pollFirst();
            RemotingFrame answer = fetch.answer;
            fetch.answer = null;
            if (consumer.closed()) {
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
            next = RealBrokers.longField(fields, "nextBeginOffset", -1);
            group.brokerEnd(q, RealBrokers.longField(fields, "maxOffset", -1));
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
            consumer.pulls().wake();
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
    void askBrokerEnds() {
        for (RealQueue q : group.realQueues()) {
            Optional<String> master = consumer.brokers().master(q.brokerName());
            Fetches state = fetches.get(q);
            if ((state != null && !state.inFlight.isEmpty()) || master.isEmpty()) {
                continue;
            }
            consumer.brokers().askOffset(master.get(), RequestCode.GET_MAX_OFFSET,
                Map.of("topic", consumer.config().topic(), "queueId", Integer.toString(q.queueId())), (code, max) -> {
                    if (!consumer.closed()) {
                        group.brokerEnd(q, max);
                    }
                });
        }
    }

    /** A fetch failed or brought nothing usable: {@code q} is fetched again {@link #RETRY_MILLIS} from now. */
    private void rest(RealQueue q, Fetches state) {
        if (!consumer.closed() && !state.resting) {
            state.resting = true;
            consumer.owner().loop().schedule(() -> {
                state.resting = false;
                if (fetches.get(q) == state) {
                    fetch(q);
                }
            }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** {@code q} is no longer owned: answers still to come are released as they arrive. */
    void stop(RealQueue q) {
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
}
