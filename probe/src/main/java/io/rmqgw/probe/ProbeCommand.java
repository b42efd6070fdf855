package io.rmqgw.probe;

import io.rmqgw.tools.Addresses;
import io.rmqgw.tools.Durations;
import io.rmqgw.tools.JsonLines;
import io.rmqgw.tools.Subcommand;
import io.rmqgw.tools.VersionProvider;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code rmqgw probe}: an end-to-end check through a gateway or any name server. */
@Command(name = "probe",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    header = "Send and receive test messages end to end; report loss, duplicates and latency.",
    description = {
        "Sends messages to a probe topic at a fixed rate through the given name server (a gateway, or any RocketMQ"
            + " name server), receives them with a push consumer, and reports how many were sent, received, lost"
            + " (sent but not received within --timeout after the last send) and duplicated, and the end-to-end"
            + " latency (born timestamp to receipt, both on this host's clock) at p50, p90, p99 and max.",
        "The topic must exist, or the broker must auto-create topics (autoCreateTopicEnable=true): then the first"
            + " run creates it with one warm-up message. Each run uses its own consumer group, rmqgw_probe_RUNID"
            + " (the broker must auto-create subscription groups, the default), started from the latest offset"
            + " before anything is sent, and deletes it (with its retry topic) afterwards; with --group a fixed"
            + " group is used and kept. Every message carries the run id and its sequence number in properties"
            + " and keys; messages of other runs on the topic are ignored.",
        "The RocketMQ client logs to a temporary directory, removed after a successful run and named in the"
            + " report after a failed one; stdout carries the report only.%n"},
    footerHeading = "%nExit codes:%n",
    footer = {
        "  0  every message sent arrived, no send failed, the latency budget held",
        "  1  loss, a send failure or a latency budget breach; or the probe could not",
        "     run (name server unreachable, no topic, consumer not ready in time)",
        "  2  usage error",
        "",
        "Examples:",
        "  rmqgw probe --namesrv gw.example.com:9876 --rate 50 --duration 30s \\",
        "      --latency-budget 'p99<=500ms'",
        "  rmqgw probe --count 100 --json",
        "  rmqgw probe --duration 30s --json-file /var/log/rmqgw/probe.jsonl"})
public final class ProbeCommand implements Callable<Integer>, Subcommand {

    /** The most messages one run may send (the tally keeps a few bytes per message). */
    public static final int MAX_COUNT = 1_000_000;
    /** The largest body: RocketMQ's default maximum message size, 4 MiB. */
    public static final int MAX_SIZE = 4 * 1024 * 1024;
    public static final double MAX_RATE = 100_000;

    private static final Pattern NAME = Pattern.compile("^[%|a-zA-Z0-9_-]+$");
    private static final int TOPIC_MAX_LENGTH = 127;
    private static final int GROUP_MAX_LENGTH = 255;

    private final Function<ProbeSettings, ProbeResult> runner;

    @Spec
    CommandSpec spec;

    @Option(names = "--namesrv", paramLabel = "ADDR[;ADDR...]", defaultValue = ProbeSettings.DEFAULT_NAMESRV,
        description = "Where the clients connect: a gateway's listen address or name servers, host:port, several"
            + " separated by ';'. Default: ${DEFAULT-VALUE}.")
    String namesrv;

    @Option(names = "--topic", paramLabel = "TOPIC", defaultValue = ProbeSettings.DEFAULT_TOPIC,
        description = "The probe topic; it must exist or the broker must auto-create topics. Default: ${DEFAULT-VALUE}.")
    String topic;

    @Option(names = "--group", paramLabel = "GROUP",
        description = "Use this consumer (and producer) group instead of a new one per run; it is not deleted."
            + " Needed when brokers do not auto-create subscription groups. Never run two probes with the same"
            + " group at once: they would split the queues and each see loss.")
    String group;

    @Option(names = "--rate", paramLabel = "MSG/S", defaultValue = "10",
        description = "Messages per second (decimals allowed, e.g. 0.5). Default: ${DEFAULT-VALUE}.")
    double rate;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "256",
        description = "Body size of each message, random bytes. Default: ${DEFAULT-VALUE}.")
    int size;

    @Option(names = "--count", paramLabel = "N",
        description = "Send N messages (at --rate). Excludes --duration.")
    Integer count;

    @Option(names = "--duration", paramLabel = "DURATION",
        description = "Send for this long (at --rate, so rate x duration messages): 500ms, 30s, 2m (the unit is"
            + " required). Excludes --count. Default: 10s.")
    String duration;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10s",
        description = "After the last send, how long to wait for every sent message to arrive; whatever has not"
            + " arrived by then is lost. Default: ${DEFAULT-VALUE}.")
    String timeout;

    @Option(names = "--latency-budget", paramLabel = "BUDGET",
        description = "Fail (exit 1) when an end-to-end latency percentile exceeds its bound: PERCENTILE<=DURATION,"
            + " several separated by commas, e.g. 'p99<=500ms' or 'p50<=50ms,p99<=500ms,max<=2s'.")
    String latencyBudget;

    @Option(names = "--json",
        description = "Print the report on stdout as one line of JSON instead of text.")
    boolean json;

    @Option(names = "--json-file", paramLabel = "FILE",
        description = "Also append the report to FILE as one line of JSON (JSON Lines: one run per line, for cron).")
    Path jsonFile;

    @Option(names = "--send-timeout", paramLabel = "DURATION", defaultValue = "3s",
        description = "Timeout of each send, the client's retries included. Default: ${DEFAULT-VALUE}.")
    String sendTimeout;

    @Option(names = "--ready-timeout", paramLabel = "DURATION", defaultValue = "30s",
        description = "How long to wait for the topic's route and for the consumer to own the topic's queues"
            + " before sending. Default: ${DEFAULT-VALUE}.")
    String readyTimeout;

    @Option(names = "--keep-group",
        description = "Do not delete the run's consumer group and retry topic afterwards.")
    boolean keepGroup;

    @Option(names = "--log-dir", paramLabel = "DIR",
        description = "Write the RocketMQ client's log here (kept) instead of a temporary directory.")
    Path logDir;

    /** The real thing: RocketMQ clients against {@code --namesrv}. */
    public ProbeCommand() {
        this(settings -> new ProbeRunner(settings).run());
    }

    /** With another runner (tests). */
    public ProbeCommand(Function<ProbeSettings, ProbeResult> runner) {
        this.runner = runner;
    }

    @Override
    public Integer call() {
        ProbeSettings settings = settings();
        ProbeResult result = runner.apply(settings);
        PrintWriter out = spec.commandLine().getOut();
        if (jsonFile != null) {
            try {
                JsonLines.append(jsonFile, result.toMap());
            } catch (IOException e) {
                spec.commandLine().getErr().println("rmqgw probe: cannot append to --json-file " + jsonFile + ": " + e);
                return ProbeResult.FAILED;
            }
        }
        if (json) {
            JsonLines.print(out, result.toMap());
        } else {
            result.printText(out);
        }
        return result.exitCode();
    }

    /** The options as settings; malformed values are usage errors (exit 2). */
    ProbeSettings settings() {
        String namesrvList;
        try {
            namesrvList = Addresses.parse("--namesrv", namesrv);
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
        checkName("--topic", topic, TOPIC_MAX_LENGTH);
        if (group != null) {
            checkName("--group", group, GROUP_MAX_LENGTH);
        }
        if (!(rate > 0) || rate > MAX_RATE || Double.isNaN(rate)) {
            throw usage("--rate: must be above 0 and at most " + (long) MAX_RATE + " messages per second, was " + rate);
        }
        if (size < 1 || size > MAX_SIZE) {
            throw usage("--size: must be between 1 and " + MAX_SIZE + " bytes, was " + size);
        }
        if (count != null && duration != null) {
            throw usage("--count and --duration exclude each other");
        }
        int n;
        if (count != null) {
            if (count < 1 || count > MAX_COUNT) {
                throw usage("--count: must be between 1 and " + MAX_COUNT + ", was " + count);
            }
            n = count;
        } else {
            Duration d = duration("--duration", duration == null ? "10s" : duration);
            if (d.isZero()) {
                throw usage("--duration: must be positive");
            }
            double messages = Math.floor(rate * d.toNanos() / 1e9 + 1e-9);
            if (messages > MAX_COUNT) {
                throw usage("--duration: " + duration + " at " + rate + "/s is more than " + MAX_COUNT + " messages");
            }
            n = (int) Math.max(1, messages);
        }
        LatencyBudget budget;
        try {
            budget = LatencyBudget.parse(latencyBudget);
        } catch (IllegalArgumentException e) {
            throw usage("--latency-budget: " + e.getMessage());
        }
        Duration send = duration("--send-timeout", sendTimeout);
        if (send.toMillis() < 1) {
            throw usage("--send-timeout: must be at least 1ms");
        }
        return new ProbeSettings(namesrvList, topic, group, rate, size, n, send,
            duration("--timeout", timeout), duration("--ready-timeout", readyTimeout), budget, !keepGroup, logDir);
    }

    private Duration duration(String option, String text) {
        try {
            return Durations.parse(option, text, Durations.TOOL_MAX);
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
    }

    private void checkName(String option, String name, int maxLength) {
        if (name == null || name.isEmpty()) {
            throw usage(option + ": must not be empty");
        }
        if (name.length() > maxLength) {
            throw usage(option + ": at most " + maxLength + " characters, was " + name.length());
        }
        if (!NAME.matcher(name).matches()) {
            throw usage(option + ": only letters, digits, '_', '-', '%' and '|' are allowed, was '" + name + "'");
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
