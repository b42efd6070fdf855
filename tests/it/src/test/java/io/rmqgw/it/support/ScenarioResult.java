package io.rmqgw.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * A finished scenario JVM: exit status, every JSON line it printed, the summary line, stderr's
 * tail, and the TCP connections sampled while it ran.
 *
 * @param version     the Java client version, {@code null} for the Go client ({@link ScenarioRunner#goScenario})
 * @param exitCode    the process status (0 ok, 1 expectation failed, 2 usage, 3 threw), -1 if killed on timeout
 * @param timedOut    the runner killed it after its limit
 * @param lines       every JSON object line of stdout, in order
 * @param summary     the "summary" line, or {@code null} if none was printed
 * @param stderrTail  the last lines of stderr (all of it is in {@code workDir/stderr.log})
 * @param connections every connection sampled from /proc while it ran, plus those the process
 *                    listed itself when it wrote its summary
 */
public record ScenarioResult(ClientVersion version, String scenario, List<String> command, long pid, int exitCode,
                             boolean timedOut, Duration elapsed, List<JsonNode> lines, JsonNode summary,
                             String stderrTail, Path workDir, Set<ProcSockets.TcpConnection> connections) {

    /** {@code client-<version>}, or {@code client-go}. */
    public String client() {
        return version == null ? "client-go" : version.toString();
    }

    /** Exit status 0 and {@code "ok": true} in the summary. */
    public boolean ok() {
        return exitCode == 0 && summary != null && summary.path("ok").asBoolean(false);
    }

    /** Throws an AssertionError carrying {@link #describe()} unless {@link #ok()}. */
    public ScenarioResult assertOk() {
        if (!ok()) {
            throw new AssertionError("scenario failed: " + describe());
        }
        return this;
    }

    public List<JsonNode> lines(String type) {
        return lines.stream().filter(l -> type.equals(l.path("type").asText())).collect(Collectors.toList());
    }

    /** The "key" field of every line of {@code type} ("sent", "received", ...), in order. */
    public List<String> keys(String type) {
        return field(type, "key");
    }

    /** Distinct "msgId" (client message id, UNIQ_KEY) of the lines of {@code type}. */
    public Set<String> msgIds(String type) {
        return new LinkedHashSet<>(field(type, "msgId"));
    }

    public List<String> field(String type, String field) {
        return lines(type).stream().map(l -> l.path(field)).filter(n -> !n.isMissingNode() && !n.isNull())
            .map(JsonNode::asText).collect(Collectors.toList());
    }

    public long summaryLong(String field) {
        return summary == null ? -1 : summary.path(field).asLong(-1);
    }

    /** Remote ports of every sampled connection. */
    public Set<Integer> remotePorts() {
        return connections.stream().map(ProcSockets.TcpConnection::remotePort)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Local {@code ip:port} of every sampled connection (what servers saw as this client). */
    public Set<String> localEndpoints() {
        return connections.stream().map(ProcSockets.TcpConnection::local)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    /** For assertion messages: command, status, summary and stderr's tail. */
    public String describe() {
        return client() + " " + scenario + " pid " + pid + " exit " + exitCode + (timedOut ? " (TIMED OUT)" : "")
            + " after " + elapsed.toMillis() + " ms\n  summary: " + summary
            + "\n  work dir: " + workDir
            + "\n  command: " + String.join(" ", command.subList(Math.max(0, command.size() - 16), command.size()))
            + "\n  stderr tail:\n" + stderrTail;
    }

    @Override
    public String toString() {
        return client() + " " + scenario + " exit " + exitCode + " " + elapsed.toMillis() + " ms";
    }
}
