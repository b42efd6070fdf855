package io.rmqgw.benchmarks;

import io.rmqgw.codec.name.NameValidator;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Topic name check: the 128-entry bitmap (NameValidator) vs the regex {@code ^[%|a-zA-Z0-9_-]+$} it
 * replaces, both with the 127 length limit, over a mix of realistic names (one op = one name).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class NameCheckBenchmark {

    private static final Pattern PATTERN = Pattern.compile("^[%|a-zA-Z0-9_-]+$");

    private final String[] names = {
        "TopicTest",
        "please_rename_unique_group_name_4",
        "%RETRY%please_rename_unique_group_name_4",
        "%DLQ%order-consumer",
        "BenchmarkTest",
        "trade|order_created-v2",
        "OrderEvents_2024_Q3_shard-17",
        "bad topic name",
    };

    @Benchmark
    @OperationsPerInvocation(8)
    public int bitmap() {
        int valid = 0;
        for (String name : names) {
            if (NameValidator.DEFAULT.checkTopic(name).isValid()) {
                valid++;
            }
        }
        return valid;
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public int regex() {
        int valid = 0;
        for (String name : names) {
            if (name.length() <= 127 && PATTERN.matcher(name).matches()) {
                valid++;
            }
        }
        return valid;
    }
}
