package io.rmqgw.scenarios;

import java.io.PrintStream;

/**
 * The result stream: one JSON object per line on the process's original stdout. Everything else
 * a library prints to {@code System.out} is redirected to stderr by {@link ScenarioMain}.
 */
final class Out {

    private final PrintStream stream;

    Out(PrintStream stream) {
        this.stream = stream;
    }

    synchronized void emit(Json.Obj line) {
        stream.println(line);
        stream.flush();
    }
}
