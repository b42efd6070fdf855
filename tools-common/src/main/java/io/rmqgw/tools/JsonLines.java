package io.rmqgw.tools;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * The tools' machine-readable output, JSON Lines: one compact JSON object per line. {@code --json} prints it
 * on stdout (and nothing else there); {@code --json-file FILE} appends it to FILE, so repeated runs (a cron
 * job) build a {@code .jsonl} file that line-oriented tools (jq, Prometheus' file exporters) read as is.
 */
public final class JsonLines {

    private JsonLines() {
    }

    /** {@code value} as one line of compact JSON (no line break inside: strings escape theirs). */
    public static String line(Map<String, ?> value) {
        return Json.write(value);
    }

    /** Prints {@code value} as one line. */
    public static void print(PrintWriter out, Map<String, ?> value) {
        out.println(line(value));
        out.flush();
    }

    /** Appends {@code value} as one line to {@code file}, creating it and its directory when missing. */
    public static void append(Path file, Map<String, ?> value) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        // one write of the whole line: concurrent appenders (two cron jobs) never interleave within a line
        Files.writeString(file, line(value) + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND, StandardOpenOption.WRITE);
    }
}
