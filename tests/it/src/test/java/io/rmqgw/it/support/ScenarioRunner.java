package io.rmqgw.it.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a client scenario program ({@code io.rmqgw.scenarios.ScenarioMain}, see tests/client-src)
 * in a forked JVM against one rocketmq-client version:
 *
 * <pre>
 * ScenarioResult r = ScenarioRunner.scenario(ClientVersion.V5_4_0, "sync-send")
 *     .namesrv(addr).topic(topic).count(20).timeout(Duration.ofSeconds(30))
 *     .run()           // or .start() for a ScenarioProcess running in the background
 *     .assertOk();
 * </pre>
 *
 * Each run gets a work directory (under {@code -Drmqgw.it.workDir}, else java.io.tmpdir, then
 * {@code scenarios-HHmmss-<test JVM pid>/NNNN-scenario-version}) holding its
 * stdout.jsonl, stderr.log and the client's logs (user.home and rocketmq.log.root point there).
 * JVM: {@link #DEFAULT_JVM_OPTIONS}, plus {@code -Drocketmq.client.rebalance.waitInterval}
 * ({@link Spec#rebalanceInterval}, 2 s by default instead of the clients' 20 s: 5.x clients
 * otherwise pick up a new %RETRY% topic, and sometimes a first assignment, only at the next
 * periodic rebalance).
 */
public final class ScenarioRunner {

    public static final String MAIN_CLASS = "io.rmqgw.scenarios.ScenarioMain";

    /** Small, quick-starting JVMs: 2 cores run several of them next to the broker. */
    public static final List<String> DEFAULT_JVM_OPTIONS = List.of(
        "-Xmx256m", "-Xss512k", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
        "-Xshare:auto");

    /** Extra time the process gets beyond the scenario's own --timeout-ms (JVM start, bounded shutdown). */
    public static final Duration PROCESS_GRACE = Duration.ofSeconds(20);

    private static final AtomicInteger RUNS = new AtomicInteger();

    private ScenarioRunner() {
    }

    public static Spec scenario(ClientVersion version, String scenario) {
        return new Spec(Objects.requireNonNull(version), scenario);
    }

    /**
     * The Go client's scenario program ({@link GoClient}, tests/client-go: sync-send, batch-send, fanout-send,
     * push-consume) with the same options and result lines; JVM options, system properties and the rebalance
     * interval do not apply (the Go client rebalances every 20 s and when the broker notifies it). Its
     * {@link ScenarioResult#version()} is {@code null}.
     */
    public static Spec goScenario(String scenario) {
        return new Spec(null, scenario);
    }

    /** One directory per test JVM: {@code <rmqgw.it.workDir>/scenarios-HHmmss-<pid>/}. */
    private static final Path WORK_ROOT = (System.getProperty("rmqgw.it.workDir") != null
        ? Paths.get(System.getProperty("rmqgw.it.workDir"))
        : Paths.get(System.getProperty("java.io.tmpdir"), "rmqgw-it"))
        .resolve("scenarios-" + java.time.LocalTime.now().format(java.time.format.DateTimeFormatter.ofPattern("HHmmss"))
            + "-" + ProcessHandle.current().pid());

    static Path workRoot() {
        return WORK_ROOT;
    }

    static String javaBinary() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** What to run; every setter returns this. */
    public static final class Spec {
        private final ClientVersion version;
        private final String scenario;
        private final Map<String, String> args = new LinkedHashMap<>();
        private final List<String> jvmOptions = new ArrayList<>(DEFAULT_JVM_OPTIONS);
        private final Map<String, String> systemProperties = new LinkedHashMap<>();
        private Duration timeout = Duration.ofSeconds(60);
        private Duration sampleInterval = Duration.ofMillis(50);
        private Duration rebalanceInterval = Duration.ofSeconds(2);

        Spec(ClientVersion version, String scenario) {
            this.version = version;
            this.scenario = Objects.requireNonNull(scenario);
        }

        public Spec namesrv(String address) {
            return arg("namesrv", address);
        }

        public Spec topic(String topic) {
            return arg("topic", topic);
        }

        /** Consumer group (--group). */
        public Spec group(String group) {
            return arg("group", group);
        }

        public Spec producerGroup(String group) {
            return arg("producer-group", group);
        }

        public Spec count(int count) {
            return arg("count", count);
        }

        public Spec keyPrefix(String prefix) {
            return arg("key-prefix", prefix);
        }

        /** The scenario's own deadline (--timeout-ms); the process is killed {@link #PROCESS_GRACE} later. */
        public Spec timeout(Duration timeout) {
            this.timeout = timeout;
            return arg("timeout-ms", timeout.toMillis());
        }

        /** Any scenario option, e.g. {@code arg("linger-ms", 500)} for {@code --linger-ms 500}. */
        public Spec arg(String name, Object value) {
            args.put(name, String.valueOf(value));
            return this;
        }

        public Spec jvmOption(String option) {
            jvmOptions.add(option);
            return this;
        }

        public Spec systemProperty(String key, String value) {
            systemProperties.put(key, value);
            return this;
        }

        /** How often /proc is sampled for the process's connections (default 50 ms). */
        public Spec sampleInterval(Duration interval) {
            this.sampleInterval = interval;
            return this;
        }

        /** {@code rocketmq.client.rebalance.waitInterval}; {@code null} keeps the client's default (20 s). */
        public Spec rebalanceInterval(Duration interval) {
            this.rebalanceInterval = interval;
            return this;
        }

        /** The Java client version; {@code null} for the Go client. */
        public ClientVersion version() {
            return version;
        }

        public String scenario() {
            return scenario;
        }

        public Duration timeout() {
            return timeout;
        }

        /** Starts the JVM and returns at once. */
        public ScenarioProcess start() throws IOException {
            if (!args.containsKey("timeout-ms")) {
                timeout(timeout);
            }
            Path workDir = workRoot().resolve(String.format("%04d-%s-%s", RUNS.incrementAndGet(), scenario,
                version == null ? "go" : version.version()));
            Files.createDirectories(workDir.resolve("home"));
            List<String> command = new ArrayList<>();
            if (version == null) {
                command.add(GoClient.binary().toString());
                command.add(scenario);
                command.add("--log-dir");
                command.add(workDir.resolve("logs").toString());
                args.forEach((k, v) -> {
                    command.add("--" + k);
                    command.add(v);
                });
                return ScenarioProcess.start(null, scenario, command, workDir, timeout.plus(PROCESS_GRACE),
                    sampleInterval);
            }
            command.add(javaBinary());
            command.addAll(jvmOptions);
            command.add("-Duser.home=" + workDir.resolve("home"));
            command.add("-Drocketmq.log.root=" + workDir.resolve("logs"));
            command.add("-Drocketmq.client.logRoot=" + workDir.resolve("logs"));
            if (rebalanceInterval != null) {
                command.add("-Drocketmq.client.rebalance.waitInterval=" + rebalanceInterval.toMillis());
            }
            systemProperties.forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.add("-cp");
            command.add(version.classpath());
            command.add(MAIN_CLASS);
            command.add(scenario);
            args.forEach((k, v) -> {
                command.add("--" + k);
                command.add(v);
            });
            return ScenarioProcess.start(version, scenario, command, workDir, timeout.plus(PROCESS_GRACE),
                sampleInterval);
        }

        /** Starts the JVM and waits for it (at most the timeout plus {@link #PROCESS_GRACE}). */
        public ScenarioResult run() throws IOException, InterruptedException {
            try (ScenarioProcess p = start()) {
                return p.await();
            }
        }
    }
}
