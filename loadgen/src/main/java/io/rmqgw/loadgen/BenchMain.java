package io.rmqgw.loadgen;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/**
 * {@code rmqgw bench} without the rest of rmqgw: the entry point of {@code bench/client-4.9.7}, which
 * compiles this package against rocketmq-client 4.9.7 (JSON headers, no broker name).
 */
public final class BenchMain {

    private BenchMain() {
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        CommandLine cl = new CommandLine(new BenchCommand());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, failed, parseResult) -> {
            err.println("rmqgw bench: " + ex);
            return BenchCommand.FAILED;
        });
        int code = cl.execute(args);
        out.flush();
        err.flush();
        System.exit(code);
    }
}
