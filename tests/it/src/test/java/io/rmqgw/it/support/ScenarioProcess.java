package io.rmqgw.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A scenario JVM running in the background: its PID, the JSON lines printed so far, its sampled
 * TCP connections; {@link #await()} turns it into a {@link ScenarioResult}. Closing kills it if it
 * still runs.
 */
public final class ScenarioProcess implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ClientVersion version;
    private final String scenario;
    private final List<String> command;
    private final Path workDir;
    private final Duration limit;
    private final Process process;
    private final long startNanos;
    private final ConnectionSampler sampler;
    private final List<JsonNode> lines = new ArrayList<>();
    private final Thread reader;
    private ScenarioResult result;

    private ScenarioProcess(ClientVersion version, String scenario, List<String> command, Path workDir, Duration limit,
                            Duration sampleInterval) throws IOException {
        this.version = version;
        this.scenario = scenario;
        this.command = List.copyOf(command);
        this.workDir = workDir;
        this.limit = limit;
        ProcessBuilder pb = new ProcessBuilder(command)
            .directory(workDir.toFile())
            .redirectError(workDir.resolve("stderr.log").toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE);
        this.startNanos = System.nanoTime();
        this.process = pb.start();
        this.sampler = ConnectionSampler.start(process.pid(), sampleInterval);
        this.reader = new Thread(this::readStdout, "scenario-stdout-" + process.pid());
        this.reader.setDaemon(true);
        this.reader.start();
    }

    static ScenarioProcess start(ClientVersion version, String scenario, List<String> command, Path workDir,
                                 Duration limit, Duration sampleInterval) throws IOException {
        return new ScenarioProcess(version, scenario, command, workDir, limit, sampleInterval);
    }

    private void readStdout() {
        Path copy = workDir.resolve("stdout.jsonl");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8)); BufferedWriter out = Files.newBufferedWriter(copy, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(line);
                out.newLine();
                out.flush();
                String t = line.trim();
                if (!t.startsWith("{")) {
                    continue;
                }
                try {
                    JsonNode node = JSON.readTree(t);
                    if (node.isObject()) {
                        synchronized (lines) {
                            lines.add(node);
                            lines.notifyAll();
                        }
                    }
                } catch (IOException e) {
                    // not JSON: kept in stdout.jsonl only
                }
            }
        } catch (IOException e) {
            // process gone
        } finally {
            synchronized (lines) {
                lines.notifyAll();
            }
        }
    }

    public long pid() {
        return process.pid();
    }

    public Process process() {
        return process;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public Path workDir() {
        return workDir;
    }

    /** A copy of the JSON lines printed so far. */
    public List<JsonNode> linesSoFar() {
        synchronized (lines) {
            return new ArrayList<>(lines);
        }
    }

    /**
     * Waits until the process printed a line matching {@code condition} (e.g. the first failed
     * send attempt); returns it, or {@code null} if the process ended or {@code timeout} passed first.
     */
    public JsonNode awaitLine(Predicate<JsonNode> condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int checked = 0;
        synchronized (lines) {
            while (true) {
                for (; checked < lines.size(); checked++) {
                    if (condition.test(lines.get(checked))) {
                        return lines.get(checked);
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || (!reader.isAlive() && checked >= lines.size())) {
                    return null;
                }
                lines.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 200)));
            }
        }
    }

    /** Awaits the first line whose "type" is {@code type}. */
    public JsonNode awaitLine(String type, Duration timeout) throws InterruptedException {
        return awaitLine(l -> type.equals(l.path("type").asText()), timeout);
    }

    /** Connections sampled so far. */
    public Set<ProcSockets.TcpConnection> sampledConnections() {
        return sampler.connections();
    }

    /** Connections the process holds right now. */
    public Set<ProcSockets.TcpConnection> connectionsNow() throws IOException {
        return ProcSockets.connectionsOf(pid());
    }

    /** Waits for the exit (killing the process once its limit has passed) and collects the result. */
    public synchronized ScenarioResult await() throws InterruptedException {
        if (result != null) {
            return result;
        }
        long left = limit.toNanos() - (System.nanoTime() - startNanos);
        boolean exited = left > 0 && process.waitFor(left, TimeUnit.NANOSECONDS);
        boolean timedOut = false;
        if (!exited && process.isAlive()) {
            timedOut = true;
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
        sampler.close();
        reader.join(5_000);
        List<JsonNode> all = linesSoFar();
        JsonNode summary = null;
        for (JsonNode l : all) {
            if ("summary".equals(l.path("type").asText())) {
                summary = l;
            }
        }
        int exit = timedOut ? -1 : process.exitValue();
        result = new ScenarioResult(version, scenario, command, pid(), exit, timedOut, elapsed, List.copyOf(all),
            summary, stderrTail(60), workDir, connections(summary));
        return result;
    }

    /**
     * The connections sampled from outside, plus those the process reported itself in its summary
     * (taken while its clients were still open; catches connections shorter than a sample
     * interval). Self-reported ones carry inode 0.
     */
    private Set<ProcSockets.TcpConnection> connections(JsonNode summary) {
        Map<String, ProcSockets.TcpConnection> all = new LinkedHashMap<>();
        for (ProcSockets.TcpConnection c : sampler.connections()) {
            all.put(c.endpoints(), c);
        }
        if (summary != null) {
            for (JsonNode c : summary.path("connections")) {
                String local = c.path("local").asText();
                String remote = c.path("remote").asText();
                int l = local.lastIndexOf(':');
                int r = remote.lastIndexOf(':');
                if (l < 0 || r < 0) {
                    continue;
                }
                ProcSockets.TcpConnection conn = new ProcSockets.TcpConnection(local.substring(0, l),
                    Integer.parseInt(local.substring(l + 1)), remote.substring(0, r),
                    Integer.parseInt(remote.substring(r + 1)), ProcSockets.stateName(c.path("st").asText()), 0);
                all.putIfAbsent(conn.endpoints(), conn);
            }
        }
        return new LinkedHashSet<>(all.values());
    }

    private String stderrTail(int max) {
        Path file = workDir.resolve("stderr.log");
        Deque<String> tail = new ArrayDeque<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                tail.addLast("    " + line);
                if (tail.size() > max) {
                    tail.removeFirst();
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            return "    (stderr unreadable: " + e + ")";
        }
        return String.join("\n", tail);
    }

    /** Kills the process if it is still running. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        sampler.close();
    }

    @Override
    public String toString() {
        return (version == null ? "client-go" : version) + " " + scenario + " pid " + pid();
    }
}
