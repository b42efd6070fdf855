package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Client connections and their frames: frames that could not be decoded, connections the gateway closed (by
 * listener role and {@link CloseReason}), the bytes held in half-arrived frames and queued to clients, buffers
 * that could not be allocated, large requests streamed through, and the {@link ListenerMeters} of each listener.
 */
public final class ConnectionMeters {

    private final MeterRegistry registry;
    private final LabelledCounters decodeErrors;
    /** By role; each holds every {@link CloseReason} from the start. */
    private final Map<String, LabelledCounters> closedConnections = new ConcurrentHashMap<>();
    private final Counter framesStreamed;
    private final Counter allocationFailures;
    private final Map<String, ListenerMeters> listeners = new ConcurrentHashMap<>();
    private volatile LongSupplier incompleteFrameBytes = () -> 0;
    private volatile LongSupplier incompleteFrameBudget = () -> 0;
    private volatile Supplier<Number> queuedTotal;
    private volatile Supplier<Number> queuedLargest;

    ConnectionMeters(MeterRegistry registry) {
        this.registry = registry;
        framesStreamed = Counter.builder("rmqgw.frames.streamed")
            .description("Large client requests streamed through to their upstream (cut-through), not stored whole")
            .register(registry);
        allocationFailures = Counter.builder("rmqgw.allocation.failures")
            .description("Buffers the gateway could not allocate (direct memory exhausted); each closed the connection"
                + " it was for, and /health/ready answers 503 for 10 s after the last")
            .register(registry);
        decodeErrors = new LabelledCounters(registry, "rmqgw.decode.errors",
            "Connections closed because a frame could not be decoded",
            Tags.empty(), "reason", Arrays.stream(MalformedReason.values()).map(MalformedReason::label).toList());
        for (String role : GatewayMetrics.ROLES) {
            closedConnections(role);
        }
        Gauge.builder("rmqgw.incomplete.frame", this, m -> m.incompleteFrameBytes.getAsLong())
            .description("Bytes client connections hold in frames not yet whole, all connections together")
            .baseUnit("bytes")
            .register(registry);
        Gauge.builder("rmqgw.incomplete.frame.budget", this, m -> m.incompleteFrameBudget.getAsLong())
            .description("Bytes client connections may hold in frames not yet whole (downstream.incomplete-frame-budget)")
            .baseUnit("bytes")
            .register(registry);
    }

    /** A frame that could not be decoded ({@code rmqgw.decode.errors{reason}}). */
    public void decodeError(MalformedReason reason) {
        decodeErrors.counter(reason.label()).increment();
    }

    /**
     * A frame that could not be decoded; {@code reason} is a {@link MalformedReason#label()} (those exist at 0
     * from the start; another value gets its own series on first use).
     */
    public void decodeError(String reason) {
        decodeErrors.counter(reason).increment();
    }

    /**
     * Bytes queued to client connections and not yet taken by their sockets: {@code rmqgw.downstream.queued.bytes}
     * summed over every connection, and {@code rmqgw.downstream.queued.max.bytes} of the connection holding most.
     * Each supplier is read at scrape time; a later call replaces both (a gateway started again on these metrics).
     */
    public synchronized void downstreamQueued(Supplier<Number> total, Supplier<Number> largest) {
        boolean first = queuedTotal == null;
        queuedTotal = total;
        queuedLargest = largest;
        if (!first) {
            return;
        }
        Gauge.builder("rmqgw.downstream.queued.bytes", this, m -> m.queuedTotal.get().doubleValue())
            .description("Bytes queued to client connections and not yet taken by their sockets")
            .baseUnit("bytes")
            .strongReference(true)
            .register(registry);
        Gauge.builder("rmqgw.downstream.queued.max.bytes", this, m -> m.queuedLargest.get().doubleValue())
            .description("Bytes queued to the one client connection that holds most")
            .baseUnit("bytes")
            .strongReference(true)
            .register(registry);
    }

    /**
     * A connection of a listener with {@code role} (one of {@link GatewayMetrics#ROLES}) the gateway closed on its
     * own initiative.
     */
    public void connectionClosed(String role, CloseReason reason) {
        closedConnections(role).counter(reason.label()).increment();
    }

    /**
     * A connection the gateway closed on its own initiative; prefer {@link #connectionClosed(String, CloseReason)}.
     * A {@code reason} that is not a {@link CloseReason#label()} gets its own series on first use.
     */
    public void connectionClosed(String role, String reason) {
        closedConnections(role).counter(reason).increment();
    }

    /** What the incomplete-frame gauges read: bytes held now, and the budget ({@code Long.MAX_VALUE}: none). */
    public void incompleteFrames(LongSupplier heldBytes, LongSupplier budgetBytes) {
        this.incompleteFrameBytes = heldBytes;
        this.incompleteFrameBudget = budgetBytes;
    }

    private LabelledCounters closedConnections(String role) {
        LabelledCounters byReason = closedConnections.get(role);
        if (byReason == null) {
            byReason = closedConnections.computeIfAbsent(role, r -> new LabelledCounters(registry,
                "rmqgw.connections.closed", "Connections closed by the gateway, by listener role and reason",
                Tags.of("role", r), "reason", Arrays.stream(CloseReason.values()).map(CloseReason::label).toList()));
        }
        return byReason;
    }

    /** A buffer could not be allocated (the connection it was for is closed). */
    public void allocationFailed() {
        allocationFailures.increment();
    }

    /** A large client request's head went upstream; its body follows as it arrives. */
    public void frameStreamed() {
        framesStreamed.increment();
    }

    /** The meters of the name-server listener (role {@code namesrv}, upstream {@code namesrv}). */
    public ListenerMeters namesrvListener() {
        return listener(GatewayMetrics.NAMESRV, GatewayMetrics.NAMESRV);
    }

    /** The meters of the listener for the broker at {@code brokerAddress} (its real address, as routes name it). */
    public ListenerMeters brokerListener(String brokerAddress) {
        return listener(GatewayMetrics.BROKER, brokerAddress);
    }

    private ListenerMeters listener(String role, String upstream) {
        ListenerMeters m = listeners.get(upstream);
        if (m == null) {
            m = listeners.computeIfAbsent(upstream, u -> new ListenerMeters(registry, role, u));
        }
        return m;
    }
}
