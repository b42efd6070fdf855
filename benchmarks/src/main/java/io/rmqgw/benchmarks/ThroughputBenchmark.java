package io.rmqgw.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** The JMH settings the codec and queue benchmarks share (JMH reads them from a superclass): one fork, ops/s. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
// jackson's parser and the codec take several seconds of C2 work before they settle on a 2-core machine
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
// netty 4.1.119 gives pooled-buffer thread caches and batched recycling only to event-loop (FastThreadLocal)
// threads by default; the gateway decodes on event loops, so the benchmark thread gets them too (4.9.7's netty
// 4.1.65 gives them anyway)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Dio.netty.recycler.batchFastThreadLocalOnly=false", "-Xms1g", "-Xmx1g"})
public abstract class ThroughputBenchmark {
}
