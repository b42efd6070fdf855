package io.rmqgw.benchmarks;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The send and pull benchmark methods timed by the CPU time of the thread running them instead of
 * the wall clock, for a shared machine: JMH's ops/s fall with whatever else runs, CPU time per
 * operation barely does. Not a JMH harness: no forks per method (one JVM per case, the methods
 * interleaved in rounds), blackholes replaced by a checksum. Use JMH on a quiet machine; use this to
 * compare on a busy one. Runs on a Netty {@link FastThreadLocalThread}, as an event loop does.
 *
 * <pre>
 * java -Xms1g -Xmx1g -Dio.netty.leakDetection.level=disabled -Dio.netty.allocator.useCacheForAllThreads=true -Dio.netty.recycler.batchFastThreadLocalOnly=false \
 *     -cp target/benchmarks.jar io.rmqgw.benchmarks.CpuTime send 0     # or: send 4096, pull JSON, pull ROCKETMQ, answer -, vq -
 * </pre>
 * {@code -Donly=name,...} runs only those methods (to profile one, e.g. under JFR).
 * Prints per method the median and the range (min..max) over {@code rounds} of the CPU nanoseconds
 * per operation, and the bytes allocated per operation.
 */
public final class CpuTime {

    private static final com.sun.management.ThreadMXBean MX =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @FunctionalInterface
    interface Op {
        long run() throws Throwable;
    }

    private CpuTime() {
    }

    public static void main(String[] args) throws Throwable {
        if (args.length < 2) {
            System.err.println("usage: CpuTime send <bodySize> | pull <JSON|ROCKETMQ> | answer - | vq - [rounds]");
            System.exit(2);
        }
        // on a Netty thread, as the gateway's event loops (and a broker's or proxy's) are: its thread-locals
        // (buffer caches, recyclers, the codec's per-thread state) are an array index there, not a ThreadLocal lookup
        Throwable[] failed = new Throwable[1];
        Thread t = new FastThreadLocalThread(() -> {
            try {
                measure(args);
            } catch (Throwable e) {
                failed[0] = e;
            }
        }, "cpu-time");
        t.start();
        t.join();
        if (failed[0] != null) {
            throw failed[0];
        }
    }

    private static void measure(String[] args) throws Throwable {
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 9;
        Map<String, Op> ops = new LinkedHashMap<>();
        int perOp = 1;
        if (args[0].equals("send")) {
            SendV2Benchmark b = new SendV2Benchmark();
            b.bodySize = Integer.parseInt(args[1]);
            b.setUp();
            ops.put("rocketmqRemoting", b::rocketmqRemoting);
            ops.put("rocketmqRemotingFramed", b::rocketmqRemotingFramed);
            ops.put("rocketmqRemoting497", b::rocketmqRemoting497);
            ops.put("rocketmqRemoting497Framed", b::rocketmqRemoting497Framed);
            ops.put("gatewayEnvelope", b::gatewayEnvelope);
            ops.put("gatewayFrame", b::gatewayFrame);
            ops.put("gatewayTyped", b::gatewayTyped);
            ops.put("gatewayUntyped", b::gatewayUntyped);
        } else if (args[0].equals("answer")) {
            SendAnswerBenchmark b = new SendAnswerBenchmark();
            b.setUp();
            ops.put("rocketmqRemoting", b::rocketmqRemoting);
            ops.put("gatewayRebuild", b::gatewayRebuild);
            ops.put("gatewayInPlace", () -> b.gatewayInPlace() ? 1 : 0);
        } else if (args[0].equals("vq")) { // one op is a batch; reported per message
            perOp = VirtualQueueBenchmark.BATCH;
            for (boolean mapBuilt : new boolean[] {false, true}) {
                for (SerializeType type : List.of(SerializeType.ROCKETMQ, SerializeType.JSON)) {
                    VirtualQueueBenchmark b = new VirtualQueueBenchmark();
                    b.encoding = type;
                    b.mapBuilt = mapBuilt;
                    b.setUp();
                    ops.put("deliver" + type + (mapBuilt ? "MapBuilt" : ""), b::deliver);
                }
            }
        } else {
            PullResponseBenchmark b = new PullResponseBenchmark();
            b.from = SerializeType.valueOf(args[1]);
            b.setUp();
            ops.put("rocketmqRemoting", b::rocketmqRemoting);
            ops.put("rocketmqRemotingFramed", b::rocketmqRemotingFramed);
            ops.put("rocketmqRemoting497", b::rocketmqRemoting497);
            ops.put("rocketmqRemoting497Framed", b::rocketmqRemoting497Framed);
            ops.put("gatewayFrame", b::gatewayFrame);
            ops.put("gatewayTyped", b::gatewayTyped);
        }
        String only = System.getProperty("only"); // e.g. -Donly=gatewayFrame, to profile one method
        if (only != null) {
            ops.keySet().retainAll(List.of(only.split(",")));
        }
        long sink = 0;
        Map<String, List<Double>> ns = new LinkedHashMap<>();
        Map<String, Double> bytes = new LinkedHashMap<>();
        for (Map.Entry<String, Op> e : ops.entrySet()) { // warm-up: about 2 s of CPU each
            sink += loop(e.getValue(), 2_000_000_000L);
            ns.put(e.getKey(), new ArrayList<>());
        }
        long thread = Thread.currentThread().getId();
        // CPU time per method per round: 0.3 s by default; shorter slices (-Dslice.ms=20) and more rounds pair the
        // methods closer in time, for a machine whose speed changes within seconds (a busy hyperthread sibling)
        long slice = Long.getLong("slice.ms", 300) * 1_000_000L;
        for (int r = 0; r < rounds; r++) {
            for (Map.Entry<String, Op> e : ops.entrySet()) {
                long allocated = MX.getThreadAllocatedBytes(thread);
                long cpu = MX.getCurrentThreadCpuTime();
                int n = 0;
                while (MX.getCurrentThreadCpuTime() - cpu < slice) {
                    for (int i = 0; i < 1000; i++) {
                        sink += e.getValue().run();
                    }
                    n += 1000;
                }
                ns.get(e.getKey()).add((MX.getCurrentThreadCpuTime() - cpu) / ((double) n * perOp));
                bytes.put(e.getKey(), (MX.getThreadAllocatedBytes(thread) - allocated) / ((double) n * perOp));
            }
        }
        System.out.printf("%s %s: CPU ns/" + (perOp == 1 ? "op" : "message") + ", median (min..max) of %d rounds; B/" + (perOp == 1 ? "op" : "message") + " (last round)   [checksum %d]%n",
            args[0], args[1], rounds, sink & 0xFF);
        for (Map.Entry<String, List<Double>> e : ns.entrySet()) {
            double[] v = e.getValue().stream().mapToDouble(Double::doubleValue).sorted().toArray();
            System.out.printf("  %-26s %8.1f  (%.1f..%.1f)  %8.1f B/op%s%n", e.getKey(), v[v.length / 2], v[0], v[v.length - 1],
                bytes.get(e.getKey()), speedUps(ns, e.getKey()));
        }
    }

    /**
     * How many times faster {@code op} ran than each rocketmq-remoting baseline measured, as the median of
     * the per-round ratios (each round's methods run back to back, so a machine that speeds up or slows
     * down between rounds moves both sides of a ratio alike).
     */
    private static String speedUps(Map<String, List<Double>> ns, String op) {
        if (op.startsWith("rocketmqRemoting")) {
            return "";
        }
        StringBuilder s = new StringBuilder();
        for (String base : List.of("rocketmqRemoting", "rocketmqRemoting497")) {
            List<Double> b = ns.get(base);
            if (b == null) {
                continue;
            }
            List<Double> mine = ns.get(op);
            double[] r = new double[mine.size()];
            for (int i = 0; i < r.length; i++) {
                r[i] = b.get(i) / mine.get(i);
            }
            java.util.Arrays.sort(r);
            s.append(String.format("   %.2fx %s (rounds %.2f..%.2f)", r[r.length / 2], base.equals("rocketmqRemoting") ? "5.4.0" : "4.9.7",
                r[0], r[r.length - 1]));
        }
        return s.toString();
    }

    private static long loop(Op op, long cpuNanos) throws Throwable {
        long sink = 0;
        long start = MX.getCurrentThreadCpuTime();
        while (MX.getCurrentThreadCpuTime() - start < cpuNanos) {
            for (int i = 0; i < 1000; i++) {
                sink += op.run();
            }
        }
        return sink;
    }
}
