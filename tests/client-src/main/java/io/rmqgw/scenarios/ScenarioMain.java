package io.rmqgw.scenarios;

import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.MQVersion;

/**
 * Runs one RocketMQ client scenario and reports it as JSON lines on stdout: a "start" line, one
 * line per message sent or received (and per transaction check, per failed attempt), and a final
 * "summary" line with {@code "ok"}. Exit status: 0 ok, 1 the scenario's expectation failed, 2 bad
 * usage, 3 the scenario threw.
 *
 * <p>Compiled unchanged against rocketmq-client 4.9.7 and 5.4.0 (tests/client-src, shared by
 * tests/client-4.9.7 and tests/client-5.4.0).
 *
 * <pre>
 * java -cp ... io.rmqgw.scenarios.ScenarioMain SCENARIO --namesrv HOST:PORT --topic T [options]
 * </pre>
 */
public final class ScenarioMain {

    static final String USAGE = String.join("\n",
        "usage: ScenarioMain SCENARIO --namesrv HOST:PORT --topic TOPIC [--option value]...",
        "scenarios:",
        "  sync-send           send --count messages with send(), --interval-ms (0) apart",
        "  async-send          send --count messages with send(msg, callback); --max-in-flight (64)",
        "  oneway-send         send --count messages with sendOneway()",
        "  batch-send          send one batch of --count messages",
        "  fanout-send         one batch of --count messages to a gateway's fan-out topic, message i naming",
        "                      the i-th of --destinations \"A|B|A,B\" (cycled) in --destination-property",
        "  push-consume        push consumer (concurrently, --consume-threads 1) until --count distinct",
        "  lite-pull-consume   lite pull consumer until --count distinct",
        "  transaction         commit one message, leave one UNKNOW until the check-back commits it;",
        "                      a push consumer must receive both",
        "  orderly             --count messages over --keys (4) keys, queue selected by key; orderly",
        "                      consumer must see every key's messages in order",
        "  reconsume           --count (1) messages; first delivery RECONSUME_LATER",
        "                      (--retry-delay-level 1), the redelivery must have reconsumeTimes > 0",
        "  send-until-success  sync send until --count (1) sends succeeded, retrying every",
        "                      --interval-ms (200) until the deadline; --prime N sends N messages",
        "                      first (\"primed\" lines), --go-file PATH then waits for PATH to exist",
        "common options: --group G (consumer) --producer-group G --count N (10) --timeout-ms MS (60000)",
        "  --key-prefix P --tag T --body-size B (64) --random-body true (random bytes, consumers check them whole)",
        "  --instance NAME --vip true|false",
        "  --send-timeout-ms MS (5000) --retries N --poll-namesrv-ms MS --linger-ms MS (0)",
        "  --from first|last (first) --create-topic-key TOPIC (producers; default TBW102)",
        "  --access-key AK --secret-key SK (sign every request: RocketMQ ACL, AclClientRPCHook)");

    private ScenarioMain() {
    }

    public static void main(String[] argv) {
        // The result stream is the real stdout; anything a library prints goes to stderr.
        PrintStream results = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        int status = run(argv, new Out(results));
        results.flush();
        System.err.flush();
        // Client threads (non-daemon) must not keep the process alive.
        Runtime.getRuntime().halt(status);
    }

    static int run(String[] argv, Out out) {
        if (argv.length == 0 || "--help".equals(argv[0]) || "-h".equals(argv[0])) {
            System.err.println(USAGE);
            return argv.length == 0 ? 2 : 0;
        }
        String scenario = argv[0];
        Ctx ctx;
        Scenario impl;
        try {
            setLogRoot();
            Args args = new Args(argv, 1);
            int defaultCount = "reconsume".equals(scenario) || "send-until-success".equals(scenario) ? 1 : 10;
            ctx = new Ctx(scenario, args, out, defaultCount);
            impl = create(scenario, ctx, args);
            args.checkAllUsed();
        } catch (Args.UsageException e) {
            out.emit(Json.obj().put("type", "summary").put("scenario", scenario).put("ok", false)
                .put("error", "usage: " + e.getMessage()));
            System.err.println(e.getMessage());
            System.err.println(USAGE);
            return 2;
        } catch (IOException e) {
            out.emit(Json.obj().put("type", "summary").put("scenario", scenario).put("ok", false)
                .put("error", e.toString()));
            return 3;
        }
        out.emit(ctx.line("start")
            .put("scenario", scenario)
            .put("clientVersion", MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION))
            .put("pid", ProcessHandle.current().pid())
            .put("namesrv", ctx.namesrv)
            .put("topic", ctx.topic)
            .put("producerGroup", ctx.producerGroup)
            .put("consumerGroup", ctx.consumerGroup)
            .put("instance", ctx.instance)
            .put("logRoot", System.getProperty("rocketmq.log.root")));
        Json.Obj summary = ctx.line("summary").put("scenario", scenario)
            .put("clientVersion", MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION));
        int status;
        try {
            boolean ok = impl.run(summary);
            summary.put("ok", ok);
            status = ok ? 0 : 1;
        } catch (Throwable t) {
            summary.put("ok", false).put("error", t.toString()).put("stack", stack(t));
            status = 3;
        }
        // The clients are still running: every connection they use is open right now.
        summary.put("connections", SelfSockets.connections());
        summary.put("t", ctx.elapsedMs()).put("elapsedMs", ctx.elapsedMs());
        out.emit(summary);
        // Shut the clients down (consumers persist offsets, everyone unregisters) but do not let a
        // slow shutdown hold the result: at most 5 s.
        shutdownBounded(impl, 5_000);
        return status;
    }

    private static Scenario create(String scenario, Ctx ctx, Args args) {
        switch (scenario) {
            case "sync-send":
                return new ProducerScenarios.Sync(ctx, args.longValue("interval-ms", 0));
            case "async-send":
                return new ProducerScenarios.Async(ctx, args.integer("max-in-flight", 64));
            case "oneway-send":
                return new ProducerScenarios.Oneway(ctx);
            case "batch-send":
                return new ProducerScenarios.Batch(ctx);
            case "fanout-send":
                return new ProducerScenarios.FanoutSend(ctx, args.str("destination-property", "RMQGW_DESTINATIONS"),
                    args.required("destinations"));
            case "send-until-success":
                return new ProducerScenarios.UntilSuccess(ctx, args.longValue("interval-ms", 200),
                    args.integer("prime", 0), args.str("go-file", null));
            case "push-consume":
                return new ConsumerScenarios.Push(ctx, args.integer("consume-threads", 1));
            case "lite-pull-consume":
                return new ConsumerScenarios.LitePull(ctx);
            case "transaction":
                return new TransactionScenario(ctx);
            case "orderly":
                return new OrderlyScenario(ctx, args.integer("keys", 4));
            case "reconsume":
                return new ReconsumeScenario(ctx, args.integer("retry-delay-level", 1));
            default:
                throw new Args.UsageException("unknown scenario '" + scenario + "'");
        }
    }

    /**
     * Client logs go to a temporary directory unless the caller chose one: rocketmq.log.root
     * (5.x), rocketmq.client.logRoot (4.x). Both versions otherwise write to ${user.home}/logs.
     */
    private static void setLogRoot() throws IOException {
        String root = System.getProperty("rocketmq.log.root");
        if (root == null) {
            root = System.getProperty("rocketmq.client.logRoot");
        }
        if (root == null) {
            root = Files.createTempDirectory("rmqgw-client-logs-").toString();
        }
        System.setProperty("rocketmq.log.root", root);
        System.setProperty("rocketmq.client.logRoot", root);
    }

    private static void shutdownBounded(Scenario impl, long millis) {
        CountDownLatch done = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            try {
                impl.shutdown();
            } catch (Throwable e) {
                System.err.println("shutdown: " + e);
            } finally {
                done.countDown();
            }
        }, "scenario-shutdown");
        t.setDaemon(true);
        t.start();
        try {
            if (!done.await(millis, TimeUnit.MILLISECONDS)) {
                System.err.println("client shutdown still running after " + millis + " ms; exiting anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String stack(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        String s = w.toString();
        return s.length() > 4000 ? s.substring(0, 4000) : s;
    }

    /** One scenario: {@link #run} fills the summary and says whether the expectation held. */
    interface Scenario {
        boolean run(Json.Obj summary) throws Exception;

        void shutdown();
    }

    /** Clients a scenario started, shut down in reverse order. */
    static final class Clients {
        private final List<Runnable> stops = new ArrayList<>();

        synchronized void add(Runnable stop) {
            stops.add(stop);
        }

        void shutdownAll() {
            List<Runnable> copy;
            synchronized (this) {
                copy = new ArrayList<>(stops);
                stops.clear();
            }
            for (int i = copy.size() - 1; i >= 0; i--) {
                try {
                    copy.get(i).run();
                } catch (RuntimeException e) {
                    System.err.println("shutdown: " + e);
                }
            }
        }
    }
}
