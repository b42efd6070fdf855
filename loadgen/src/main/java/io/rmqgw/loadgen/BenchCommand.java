package io.rmqgw.loadgen;

import io.rmqgw.tools.Addresses;
import io.rmqgw.tools.Durations;
import io.rmqgw.tools.JsonLines;
import io.rmqgw.tools.Subcommand;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rmqgw bench}: a load generator on the real RocketMQ client. Self-contained (picocli, the
 * client and the JDK only) so that {@code bench/client-4.9.7} compiles the same source against
 * rocketmq-client 4.9.7.
 */
@Command(name = "bench",
    sortOptions = false,
    usageHelpAutoWidth = true,
    synopsisSubcommandLabel = "MODE",
    header = "Load generator: produce, consume or latency runs through a gateway, a proxy or a name server.",
    description = {
        "Runs the real RocketMQ Java client against --namesrv (a gateway's listen address, Apache RocketMQ's proxy,"
            + " or name servers) and reports throughput, p50/p90/p99/p999/max latency and errors, with a progress"
            + " line every second. The first --warmup is left out of every figure. --json prints the summary"
            + " as one line of JSON instead (--json-file FILE appends that line to FILE). Durations: " + Durations.SYNTAX + ".",
        "Modes: produce (sync or --async with a bounded window, as fast as possible or at --rate), consume (push"
            + " consumers of a new group, --clients of them, drain a backlog from its first offset; --backlog N produces"
            + " it first; --work D makes them slow), latency"
            + " (sends at --rate; send latency, and end-to-end latency through a push consumer).",
        "--queues Q creates or updates the topic with Q read and write queues first (UPDATE_AND_CREATE_TOPIC on every"
            + " broker of the TBW102 route, through --admin-namesrv, default --namesrv: Apache's proxy refuses admin"
            + " requests, so give it the real name server there). Without --queues the topic must exist or the broker"
            + " must auto-create it (autoCreateTopicEnable=true: 4 queues, the producer's default).",
        "Bodies are random bytes, the client's compression is off, failed sends are not retried (--retries).%n"},
    subcommands = {BenchCommand.Produce.class, BenchCommand.Consume.class, BenchCommand.Latency.class},
    footerHeading = "%nExit codes:%n",
    footer = {
        "  0  the run measured at least one success",
        "  1  nothing succeeded, or the run could not start",
        "  2  usage error",
        "  3  the run passed --timeout and was stopped hard",
        "",
        "Examples:",
        "  rmqgw bench produce --namesrv 127.0.0.1:9876 --threads 16 --size 1024 --duration 30s --queues 8",
        "  rmqgw bench produce --async --window 512 --count 200000 --warmup 0s --topic backlog",
        "  rmqgw bench consume --topic backlog --count 200000",
        "  rmqgw bench consume --topic backlog --group G --clients 16 --threads 1 --work 5ms --duration 30s",
        "  rmqgw bench latency --rate 4000 --threads 16 --duration 30s --json-file lat.jsonl"})
public final class BenchCommand implements Callable<Integer>, Subcommand {

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;
    public static final int TIMED_OUT = 3;

    static final int MAX_SIZE = 4 * 1024 * 1024;
    static final int MAX_THREADS = 1024;
    /** Below the push consumer's consume timeout (15 min) by far: a bench message is never given back for slowness. */
    static final Duration MAX_WORK = Duration.ofSeconds(10);
    private static final Pattern NAME = Pattern.compile("^[%|a-zA-Z0-9_-]{1,127}$");

    @Spec
    CommandSpec spec;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("rmqgw bench: a mode is required (produce, consume or latency)");
        spec.commandLine().usage(err);
        return USAGE;
    }

    /** Options every mode has; each mode supplies its defaults. */
    abstract static class Mode implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
        boolean help;

        @Option(names = "--namesrv", paramLabel = "ADDR[;ADDR...]", defaultValue = "127.0.0.1:9876",
            description = "Where the clients connect: a gateway, a proxy's remoting port, or name servers. Default: ${DEFAULT-VALUE}.")
        String namesrv;

        @Option(names = "--admin-namesrv", paramLabel = "ADDR",
            description = "Where --queues creates the topic (default: --namesrv).")
        String adminNamesrv;

        @Option(names = "--topic", paramLabel = "TOPIC", defaultValue = "rmqgw_bench",
            description = "Default: ${DEFAULT-VALUE}.")
        String topic;

        @Option(names = "--size", paramLabel = "BYTES", defaultValue = "1024", description = "Body size. Default: ${DEFAULT-VALUE}.")
        int size;

        @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "5s",
            description = "Left out of every figure. Default: ${DEFAULT-VALUE}.")
        String warmup;

        @Option(names = "--duration", paramLabel = "DURATION",
            description = "Length of the measurement after the warm-up (500ms, 30s, 2m, 1h; the unit is required)."
                + " Default: 20s (produce, latency); consume: until --count messages arrived.")
        String duration;

        @Option(names = "--count", paramLabel = "N",
            description = "produce, latency: measure N sends after the warm-up; consume: stop when N messages arrived"
                + " (with --duration: or when that passed, whichever is first).")
        Long count;

        @Option(names = "--queues", paramLabel = "Q",
            description = "Create or update the topic with Q queues first (see above).")
        Integer queues;

        @Option(names = "--clients", paramLabel = "N", defaultValue = "1",
            description = "Client instances, each its own connections. produce, latency: the sending threads share them;"
                + " consume: push consumers of the group (instance names bench-RUN-0, -1, ...), each with --threads"
                + " consume threads. Default: ${DEFAULT-VALUE}.")
        int clients;

        @Option(names = "--send-timeout", paramLabel = "DURATION", defaultValue = "3s", description = "Default: ${DEFAULT-VALUE}.")
        String sendTimeout;

        @Option(names = "--retries", paramLabel = "N", defaultValue = "0",
            description = "Client retries of a failed send. Default: ${DEFAULT-VALUE}.")
        int retries;

        @Option(names = "--timeout", paramLabel = "DURATION",
            description = "Hard limit of the whole run (default: warm-up + duration + 2m; 10m more in count mode).")
        String timeout;

        @Option(names = "--label", paramLabel = "TEXT", description = "Copied into the summary (e.g. the target's name).")
        String label;

        @Option(names = "--json",
            description = "Print the summary on stdout as one line of JSON instead of text (progress goes to stderr).")
        boolean json;

        @Option(names = "--json-file", paramLabel = "FILE",
            description = "Also append the summary to FILE as one line of JSON (JSON Lines: one run per line).")
        Path jsonFile;

        @Option(names = "--log-dir", paramLabel = "DIR",
            description = "The RocketMQ client's log directory (default: a temporary one, removed after a good run).")
        Path logDir;

        abstract BenchSettings.Mode mode();

        /** Mode-specific values: threads, async, window, rate, consumeThreads, pullBatch, backlog, idle, e2e, group. */
        abstract BenchSettings settings(Base base);

        /** What the common options resolve to. */
        record Base(String namesrv, String adminNamesrv, String topic, int size, Duration warmup, Duration duration,
                    long count, int queues, int clients, Duration sendTimeout, int retries, Duration timeout, String label,
                    Path jsonFile, Path logDir) {
        }

        Base base(Duration defaultDuration) {
            String ns = Addresses.parse("--namesrv", namesrv);
            String admin = adminNamesrv == null ? null : Addresses.parse("--admin-namesrv", adminNamesrv);
            if (!NAME.matcher(topic).matches()) {
                throw usage("--topic: 1 to 127 characters of a-z A-Z 0-9 _ - % |, was '" + topic + "'");
            }
            if (size < 1 || size > MAX_SIZE) {
                throw usage("--size: must be between 1 and " + MAX_SIZE + ", was " + size);
            }
            Duration w = duration("--warmup", warmup);
            if (count != null && duration != null && !countWithDuration()) {
                throw usage("--count and --duration exclude each other");
            }
            Duration d = null;
            long n = 0;
            if (count != null) {
                if (count < 1) {
                    throw usage("--count: must be at least 1, was " + count);
                }
                n = count;
            }
            if (duration != null) {
                d = duration("--duration", duration);
            } else if (count == null) {
                d = defaultDuration;
            }
            if (d != null && d.isZero()) {
                throw usage("--duration: must be positive");
            }
            int q = queues == null ? 0 : queues;
            if (queues != null && (q < 1 || q > 1024)) {
                throw usage("--queues: must be between 1 and 1024, was " + q);
            }
            if (clients < 1 || clients > 64) {
                throw usage("--clients: must be between 1 and 64, was " + clients);
            }
            Duration st = duration("--send-timeout", sendTimeout);
            if (st.isZero()) {
                throw usage("--send-timeout: must be positive");
            }
            if (retries < 0 || retries > 16) {
                throw usage("--retries: must be between 0 and 16, was " + retries);
            }
            Duration t;
            if (timeout != null) {
                t = duration("--timeout", timeout);
                if (t.isZero()) {
                    throw usage("--timeout: must be positive");
                }
            } else {
                t = w.plus(d != null ? d : Duration.ofMinutes(10)).plus(Duration.ofMinutes(d != null && n > 0 ? 4 : 2));
            }
            return new Base(ns, admin, topic, size, w, d, n, q, clients, st, retries, t, label, jsonFile, logDir);
        }

        /** Whether --count and --duration may be given together (consume: expected messages, and a time limit). */
        boolean countWithDuration() {
            return false;
        }

        ParameterException usage(String message) {
            return new ParameterException(spec.commandLine(), message);
        }

        Duration duration(String what, String text) {
            try {
                return Durations.parse(what, text, Durations.TOOL_MAX);
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage());
            }
        }

        int threads(String what, int value) {
            if (value < 1 || value > MAX_THREADS) {
                throw usage(what + ": must be between 1 and " + MAX_THREADS + ", was " + value);
            }
            return value;
        }

        @Override
        public Integer call() throws Exception {
            BenchSettings s;
            try {
                s = settings(base(Duration.ofSeconds(20)));
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage());
            }
            return run(s, spec.commandLine(), json);
        }
    }

    /**
     * Runs {@code s} and reports it ({@link #report}); the exit code. With {@code json} the progress and the
     * text go to stderr, so that stdout carries the JSON line alone.
     */
    static int run(BenchSettings s, picocli.CommandLine commandLine, boolean json) throws Exception {
        PrintWriter stdout = commandLine.getOut();
        PrintWriter out = json ? commandLine.getErr() : stdout;
        boolean temporaryLogs = s.logDir() == null;
        Path logs = temporaryLogs ? Files.createTempDirectory("rmqgw-bench-") : Files.createDirectories(s.logDir());
        Clients.logTo(logs);
        String runId = Long.toString(System.currentTimeMillis(), 36)
            + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
        Thread watchdog = watchdog(s.timeout().plusSeconds(60), out);
        out.printf(Locale.ROOT, "rmqgw bench %s: run %s, client %s, via %s%n", s.mode().label(), runId, Clients.version(),
            s.namesrv());
        out.flush();
        BenchResult result;
        try {
            ProduceRun.prepareTopic(s, runId, out);
            result = switch (s.mode()) {
                case PRODUCE -> new ProduceRun(s, out, runId).run();
                case CONSUME -> new ConsumeRun(s, out, runId).run();
                case LATENCY -> new LatencyRun(s, out, runId).run();
            };
        } finally {
            watchdog.interrupt();
        }
        report(result, s.jsonFile(), json ? stdout : null, out);
        if (temporaryLogs && result.exitCode() == OK) {
            deleteQuietly(logs);
        } else {
            out.println("client log: " + logs.resolve("rocketmq_client.log"));
        }
        out.flush();
        return result.exitCode();
    }

    /**
     * The summary as text on {@code text}, as one JSON line on {@code jsonOut} (when not null) and appended to
     * {@code jsonFile} (when not null).
     */
    static void report(BenchResult result, Path jsonFile, PrintWriter jsonOut, PrintWriter text) throws IOException {
        result.printText(text);
        if (jsonFile != null) {
            JsonLines.append(jsonFile, result.toMap());
        }
        if (jsonOut != null) {
            JsonLines.print(jsonOut, result.toMap());
        }
    }

    /** A daemon that ends the process when a run hangs past its limit (e.g. in a client's shutdown). */
    private static Thread watchdog(Duration limit, PrintWriter out) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(limit.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            out.println("rmqgw bench: the run passed its --timeout (+60s); stopping the process");
            out.flush();
            Runtime.getRuntime().halt(TIMED_OUT);
        }, "bench-watchdog");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // left behind in the temporary directory
                }
            });
        } catch (IOException e) {
            // left behind
        }
    }

    @Command(name = "produce", sortOptions = false, usageHelpAutoWidth = true,
        header = "Send as fast as possible (or at --rate): throughput, send latency, errors.")
    static final class Produce extends Mode {

        @Option(names = "--threads", paramLabel = "N", defaultValue = "16", description = "Sending threads. Default: ${DEFAULT-VALUE}.")
        int threads;

        @Option(names = "--async", description = "Asynchronous sends, at most --window in flight (all threads together).")
        boolean async;

        @Option(names = "--window", paramLabel = "N", defaultValue = "1024",
            description = "In-flight bound of --async. Default: ${DEFAULT-VALUE}.")
        int window;

        @Option(names = "--rate", paramLabel = "MSG/S", defaultValue = "0",
            description = "Target rate, all threads together; 0: as fast as possible. Default: ${DEFAULT-VALUE}.")
        double rate;

        @Option(names = "--fanout", paramLabel = "TOPIC[,TOPIC...]", split = ",",
            description = "Each operation (what throughput and latency count) writes --batch messages spread round"
                + " robin over these topics: one batch send per topic, one after the other, or with --fanout-topic one"
                + " batch to the gateway's fan-out topic. --topic is not used; --queues creates these topics.")
        java.util.List<String> fanout;

        @Option(names = "--batch", paramLabel = "N",
            description = "Messages per --fanout operation (default: one per topic).")
        Integer batch;

        @Option(names = "--fanout-topic", paramLabel = "TOPIC",
            description = "Send each --fanout operation as one batch to this gateway fan-out topic (e.g. RMQGW_FANOUT).")
        String fanoutTopic;

        @Option(names = "--destination-property", paramLabel = "NAME", defaultValue = "RMQGW_DESTINATIONS",
            description = "The user property naming a message's destination with --fanout-topic. Default: ${DEFAULT-VALUE}.")
        String destinationProperty;

        @Override
        BenchSettings.Mode mode() {
            return BenchSettings.Mode.PRODUCE;
        }

        private BenchSettings.FanoutSends fanoutSends() {
            if (fanout == null) {
                if (batch != null || fanoutTopic != null) {
                    throw usage("--batch and --fanout-topic go with --fanout");
                }
                return null;
            }
            for (String t : fanout) {
                if (!NAME.matcher(t).matches()) {
                    throw usage("--fanout: 1 to 127 characters of a-z A-Z 0-9 _ - % |, was '" + t + "'");
                }
            }
            if (fanoutTopic != null && !NAME.matcher(fanoutTopic).matches()) {
                throw usage("--fanout-topic: 1 to 127 characters of a-z A-Z 0-9 _ - % |, was '" + fanoutTopic + "'");
            }
            if (async) {
                throw usage("--fanout sends synchronously: drop --async");
            }
            int n = batch == null ? fanout.size() : batch;
            if (n < fanout.size() || n > 1024) {
                throw usage("--batch: between the number of --fanout topics (" + fanout.size() + ") and 1024, was " + n);
            }
            return new BenchSettings.FanoutSends(fanout, n, fanoutTopic, destinationProperty);
        }

        @Override
        BenchSettings settings(Base b) {
            checkWindowAndRate(async, window, rate);
            return new BenchSettings(BenchSettings.Mode.PRODUCE, b.namesrv(), b.adminNamesrv(), b.topic(), null,
                threads("--threads", threads), b.size(), b.warmup(), b.duration(), b.count(), async, window, b.queues(),
                rate, b.clients(), b.sendTimeout(), b.retries(), 1, 32, 0, Duration.ofSeconds(10), Duration.ZERO, false,
                false, fanoutSends(), b.timeout(), b.label(), b.jsonFile(), b.logDir());
        }

        private void checkWindowAndRate(boolean async, int window, double rate) {
            if (async && (window < 1 || window > 65536)) {
                throw usage("--window: must be between 1 and 65536, was " + window);
            }
            if (!(rate >= 0) || rate > 1e7) {
                throw usage("--rate: must be between 0 and 10000000, was " + rate);
            }
        }
    }

    @Command(name = "consume", sortOptions = false, usageHelpAutoWidth = true,
        header = "Drain a backlog with push consumers of one group: throughput, born-to-receipt latency, messages per consumer.")
    static final class Consume extends Mode {

        @Option(names = "--threads", paramLabel = "N", defaultValue = "20",
            description = "Consume threads of each consumer. Default: ${DEFAULT-VALUE} (the client's).")
        int threads;

        @Option(names = "--pull-batch", paramLabel = "N", defaultValue = "32",
            description = "Messages per pull. Default: ${DEFAULT-VALUE} (the client's).")
        int pullBatch;

        @Option(names = "--group", paramLabel = "GROUP", description = "Consumer group (default: a new one per run).")
        String group;

        @Option(names = "--backlog", paramLabel = "N", defaultValue = "0",
            description = "First produce N messages of --size (asynchronously, 4 threads, not measured; through"
                + " --admin-namesrv when given); then --count defaults to N.")
        long backlog;

        @Option(names = "--work", paramLabel = "DURATION", defaultValue = "0s",
            description = "Time each message's consumption takes: the listener sleeps this long per message after its"
                + " receipt (a slow consumer; with --threads 1 a consumer handles at most 1/DURATION messages a second)."
                + " Default: ${DEFAULT-VALUE}.")
        String work;

        @Option(names = "--idle-timeout", paramLabel = "DURATION", defaultValue = "10s",
            description = "Stop when nothing arrived for this long (3x that before the first message). Default: ${DEFAULT-VALUE}.")
        String idleTimeout;

        @Option(names = "--settle-first",
            description = "Steady state: start the consumers before the --backlog, wait until every consumer holds queues,"
                + " none held twice, and the assignment has not changed for 2 s (at most 60 s), pause them while the backlog is produced,"
                + " then resume them and measure from the first message after that. Needs --backlog.")
        boolean settleFirst;

        @Override
        BenchSettings.Mode mode() {
            return BenchSettings.Mode.CONSUME;
        }

        @Override
        boolean countWithDuration() {
            return true;
        }

        @Override
        public Integer call() throws Exception {
            BenchSettings s;
            try {
                // a consume run ends when the backlog is drained, not after 20 s
                s = settings(base(null));
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage());
            }
            return run(s, spec.commandLine(), json);
        }

        @Override
        BenchSettings settings(Base b) {
            if (pullBatch < 1 || pullBatch > 1024) {
                throw usage("--pull-batch: must be between 1 and 1024, was " + pullBatch);
            }
            if (backlog < 0) {
                throw usage("--backlog: must not be negative");
            }
            if (group != null && !NAME.matcher(group).matches()) {
                throw usage("--group: 1 to 127 characters of a-z A-Z 0-9 _ - % |, was '" + group + "'");
            }
            if (settleFirst && backlog == 0) {
                throw usage("--settle-first needs --backlog N (the backlog is produced while the settled consumers wait)");
            }
            if (b.count() == 0 && b.duration() == null && backlog == 0) {
                throw usage("consume needs --count N, --backlog N or --duration D to know when to stop");
            }
            Duration idle = duration("--idle-timeout", idleTimeout);
            if (idle.isZero()) {
                throw usage("--idle-timeout: must be positive");
            }
            Duration work = duration("--work", this.work);
            if (work.compareTo(MAX_WORK) > 0) {
                throw usage("--work: must be at most " + Durations.format(MAX_WORK) + ", was " + Durations.format(work));
            }
            return new BenchSettings(BenchSettings.Mode.CONSUME, b.namesrv(), b.adminNamesrv(), b.topic(), group, 4,
                b.size(), b.warmup(), b.duration(), b.count(), false, 1024, b.queues(), 0, b.clients(), b.sendTimeout(),
                b.retries(), threads("--threads", threads), pullBatch, backlog, idle, work, settleFirst, false, null, b.timeout(), b.label(),
                b.jsonFile(), b.logDir());
        }
    }

    @Command(name = "latency", sortOptions = false, usageHelpAutoWidth = true,
        header = "Send at --rate: send latency, and end-to-end latency through a push consumer.")
    static final class Latency extends Mode {

        @Option(names = "--rate", paramLabel = "MSG/S", required = true, description = "Target rate, all threads together.")
        double rate;

        @Option(names = "--threads", paramLabel = "N", defaultValue = "16",
            description = "Sending threads (synchronous sends). Default: ${DEFAULT-VALUE}.")
        int threads;

        @Option(names = "--consume-threads", paramLabel = "N", defaultValue = "20", description = "Default: ${DEFAULT-VALUE}.")
        int consumeThreads;

        @Option(names = "--group", paramLabel = "GROUP", description = "Consumer group (default: a new one per run).")
        String group;

        @Option(names = "--no-e2e", description = "Send only: no consumer, no end-to-end latency.")
        boolean noEndToEnd;

        @Override
        BenchSettings.Mode mode() {
            return BenchSettings.Mode.LATENCY;
        }

        @Override
        BenchSettings settings(Base b) {
            if (!(rate > 0) || rate > 1e7) {
                throw usage("--rate: must be above 0 and at most 10000000, was " + rate);
            }
            if (group != null && !NAME.matcher(group).matches()) {
                throw usage("--group: 1 to 127 characters of a-z A-Z 0-9 _ - % |, was '" + group + "'");
            }
            return new BenchSettings(BenchSettings.Mode.LATENCY, b.namesrv(), b.adminNamesrv(), b.topic(), group,
                threads("--threads", threads), b.size(), b.warmup(), b.duration(), b.count(), false, 1, b.queues(), rate,
                b.clients(), b.sendTimeout(), b.retries(), threads("--consume-threads", consumeThreads), 32, 0,
                Duration.ofSeconds(10), Duration.ZERO, false, !noEndToEnd, null, b.timeout(), b.label(), b.jsonFile(), b.logDir());
        }
    }
}
