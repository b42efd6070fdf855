package io.rmqgw.gateway.discovery;

import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.metrics.GatewayMetrics;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Name-server discovery over HTTP ({@code upstream.namesrv-address-url}): polls an address server on a daemon
 * thread of its own, as RocketMQ clients do, and hands every good answer to a listener (the gateway swaps its
 * upstream name servers, see {@code Gateway.namesrvUpdater()}). A failed poll (HTTP error, timeout, empty or
 * malformed body, unreachable) keeps the last good list; every poll is counted in
 * {@code rmqgw.namesrv.discovery{result}}.
 *
 * <p>Once the URL has answered, its list is the one in force and the static {@code upstream.namesrv} list is
 * only the fallback before that. {@link #configure} applies (reloaded) settings: a new URL is asked at once.
 */
public final class NamesrvDiscovery implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NamesrvDiscovery.class);

    public static final String CHANGED = "changed";
    public static final String UNCHANGED = "unchanged";

    private final GatewayMetrics metrics;
    private final AddressServerClient client = new AddressServerClient();
    private final ScheduledExecutorService scheduler;

    // guarded by this
    private URI url;
    private Duration interval = UpstreamConfig.DEFAULT_NAMESRV_ADDRESS_POLL_INTERVAL;
    private Duration timeout = UpstreamConfig.DEFAULT_NAMESRV_ADDRESS_TIMEOUT;
    private List<HostPort> lastGood;
    private String failing;
    private ScheduledFuture<?> polling;
    private Consumer<List<HostPort>> listener;
    private boolean closed;

    public NamesrvDiscovery(GatewayMetrics metrics) {
        this.metrics = Objects.requireNonNull(metrics);
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rmqgw-namesrv-discovery");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Applies upstream settings (at start, and on each reload): no URL stops polling and forgets the
     * discovered list; a new URL is fetched once now (bounded by its timeout) and polled from then on; a new
     * interval reschedules. Blocks for at most the timeout.
     *
     * @return the name servers to use now: the discovered list once a URL answered, else {@code upstream.namesrv()}
     */
    public synchronized List<HostPort> configure(UpstreamConfig upstream) {
        URI next = upstream.namesrvAddressUri();
        boolean urlChanged = !Objects.equals(next, url);
        boolean intervalChanged = !interval.equals(upstream.namesrvAddressPollInterval());
        url = next;
        interval = upstream.namesrvAddressPollInterval();
        timeout = upstream.namesrvAddressTimeout();
        if (next == null) {
            if (polling != null) {
                polling.cancel(false);
                polling = null;
                log.info("name-server address URL removed: using upstream.namesrv {}", upstream.namesrv());
            }
            lastGood = null;
            failing = null;
            return upstream.namesrv();
        }
        if (urlChanged) {
            failing = null;
            log.info("name-server address URL {}: polled every {}, timeout {}", next,
                ConfigLoader.formatDuration(interval), ConfigLoader.formatDuration(timeout));
            pollLocked();
        }
        if ((urlChanged || intervalChanged || polling == null) && listener != null) {
            schedule();
        }
        return lastGood != null ? lastGood : upstream.namesrv();
    }

    /** Starts polling (when a URL is configured); every good answer goes to {@code onList}, changed or not. */
    public void start(Consumer<List<HostPort>> onList) {
        List<HostPort> current;
        synchronized (this) {
            listener = Objects.requireNonNull(onList);
            if (url != null) {
                schedule();
            }
            current = lastGood;
        }
        if (current != null) {
            onList.accept(current);
        }
    }

    /** The list the URL last answered, or null (no URL, or it never answered). */
    public synchronized List<HostPort> lastGood() {
        return lastGood;
    }

    /** The URL polled, or null. */
    public synchronized URI url() {
        return url;
    }

    /** Hands the last good list to the listener again (after a reload replaced the upstream settings). */
    public void reapply() {
        List<HostPort> current;
        Consumer<List<HostPort>> target;
        synchronized (this) {
            current = url == null ? null : lastGood;
            target = listener;
        }
        if (current != null && target != null) {
            target.accept(current);
        }
    }

    /** Polls once now, on the calling thread; returns the metric label of the result. For tests and tools. */
    public String pollNow() {
        String result;
        List<HostPort> current;
        Consumer<List<HostPort>> target;
        synchronized (this) {
            if (url == null) {
                throw new IllegalStateException("no name-server address URL configured");
            }
            result = pollLocked();
            current = lastGood;
            target = listener;
        }
        if (current != null && target != null && isSuccess(result)) {
            target.accept(current);
        }
        return result;
    }

    private void schedule() {
        if (closed) {
            return;
        }
        if (polling != null) {
            polling.cancel(false);
        }
        long millis = interval.toMillis();
        polling = scheduler.scheduleWithFixedDelay(this::pollQuietly, millis, millis, TimeUnit.MILLISECONDS);
    }

    private void pollQuietly() {
        try {
            synchronized (this) {
                if (closed || url == null) {
                    return;
                }
            }
            pollNow();
        } catch (RuntimeException e) {
            // a scheduled task that throws is never run again
            log.warn("name-server address poll failed", e);
        }
    }

    /** One fetch; updates the last good list; counts and logs. Holds the lock: bounded by the timeout. */
    private String pollLocked() {
        AddressServerClient.Fetch fetch = client.fetch(url, timeout);
        String result;
        if (fetch instanceof AddressServerClient.Fetch.Ok ok) {
            result = ok.namesrv().equals(lastGood) ? UNCHANGED : CHANGED;
            if (failing != null) {
                log.info("name-server address URL {} answers again", url);
                failing = null;
            }
            if (result.equals(CHANGED)) {
                log.info("name servers from {}: {}{}", url, ConfigLoader.formatAddressList(ok.namesrv()),
                    lastGood == null ? "" : " (were " + ConfigLoader.formatAddressList(lastGood) + ")");
                lastGood = ok.namesrv();
            }
        } else {
            AddressServerClient.Fetch.Failed failed = (AddressServerClient.Fetch.Failed) fetch;
            result = failed.result();
            String keeping = lastGood == null ? "no list from it yet" : "keeping " + ConfigLoader.formatAddressList(lastGood);
            if (failing == null || !failing.equals(result)) {
                log.warn("name-server address URL {}: {} ({}); {}", url, failed.reason(), result, keeping);
            } else {
                log.debug("name-server address URL {}: {} ({}); {}", url, failed.reason(), result, keeping);
            }
            failing = result;
        }
        metrics.namesrvDiscovery().poll(result);
        return result;
    }

    private static boolean isSuccess(String result) {
        return CHANGED.equals(result) || UNCHANGED.equals(result);
    }

    /** Stops polling; waits at most about a second for a poll in progress. */
    @Override
    public void close() {
        scheduler.shutdownNow(); // interrupts a poll in progress
        synchronized (this) {
            closed = true;
            polling = null;
        }
        try {
            scheduler.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
