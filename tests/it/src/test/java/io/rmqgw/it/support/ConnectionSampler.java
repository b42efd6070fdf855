package io.rmqgw.it.support;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Samples a process's TCP connections every {@code interval} while it runs and keeps the union
 * (by endpoints; the last state seen wins). Connections shorter than the interval can be missed.
 */
public final class ConnectionSampler implements AutoCloseable {

    private final long pid;
    private final Map<String, ProcSockets.TcpConnection> seen = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean stopped;
    private volatile int samples;
    private volatile IOException lastError;

    private ConnectionSampler(long pid, Duration interval) {
        this.pid = pid;
        // One thread per sampled process, so that several processes never delay each other's samples.
        this.thread = new Thread(() -> {
            while (!stopped) {
                sampleQuietly();
                try {
                    Thread.sleep(interval.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "connection-sampler-" + pid);
        thread.setDaemon(true);
        thread.start();
    }

    /** Starts sampling {@code pid} now. */
    public static ConnectionSampler start(long pid, Duration interval) {
        return new ConnectionSampler(pid, interval);
    }

    /** Takes one sample now (also useful right before the process is expected to exit). */
    public void sample() throws IOException {
        for (ProcSockets.TcpConnection c : ProcSockets.connectionsOf(pid)) {
            seen.put(c.endpoints(), c);
        }
        samples++;
    }

    private void sampleQuietly() {
        try {
            sample();
        } catch (IOException e) {
            lastError = e;
        }
    }

    public Set<ProcSockets.TcpConnection> connections() {
        return new LinkedHashSet<>(seen.values());
    }

    public Set<Integer> remotePorts() {
        return seen.values().stream().map(ProcSockets.TcpConnection::remotePort)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    /** {@code ip:port} of the local ends: what a server sees as this process's remote addresses. */
    public Set<String> localEndpoints() {
        return seen.values().stream().map(ProcSockets.TcpConnection::local)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    public int samples() {
        return samples;
    }

    public IOException lastError() {
        return lastError;
    }

    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
    }
}
