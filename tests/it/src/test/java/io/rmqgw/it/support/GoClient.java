package io.rmqgw.it.support;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Go client's scenario program (tests/client-go, rocketmq-client-go/v2 pinned by its go.mod and go.sum), built
 * once per test JVM with {@code go build} into {@code <rmqgw.it.workDir>/../client-go/client-go}. Run it through
 * {@link ScenarioRunner#goScenario(String)}.
 *
 * <p>Go is required, not optional: without a {@code go} on PATH (or at /usr/local/go/bin/go) the tests that need it
 * fail, saying so; .ci/run installs one.
 */
public final class GoClient {

    /** Where Go is looked for after PATH: the official tarball's place. */
    static final Path USUAL_GO = Paths.get("/usr/local/go/bin/go");
    /** The first build may download the modules (Go module proxy) and compile the client: generous. */
    private static final long BUILD_TIMEOUT_SECONDS = 300;

    private static Path binary;

    private GoClient() {
    }

    /** {@code tests/client-go}, beside the Java client modules ({@code -Drmqgw.it.clientsDir}, else ..). */
    public static Path sourceDir() {
        String base = System.getProperty("rmqgw.it.clientsDir");
        return (base != null ? Paths.get(base) : Paths.get("..")).resolve("client-go").toAbsolutePath().normalize();
    }

    /** The go command: PATH first, then {@link #USUAL_GO}; an AssertionError naming both when there is none. */
    static Path goCommand() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                Path candidate = Paths.get(dir.isEmpty() ? "." : dir, "go");
                if (Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        if (Files.isExecutable(USUAL_GO)) {
            return USUAL_GO;
        }
        throw new AssertionError("the Go client tests need the Go toolchain: no 'go' on PATH (" + path + ") nor at "
            + USUAL_GO + "; install Go 1.19 or later (Debian: apt-get install golang-go; .ci/run does)");
    }

    /** The built program; builds it on first use (a build failure is an AssertionError with go's output). */
    public static synchronized Path binary() throws IOException {
        if (binary != null) {
            return binary;
        }
        Path source = sourceDir();
        if (!Files.isRegularFile(source.resolve("go.mod"))) {
            throw new IllegalStateException("no Go scenario program at " + source);
        }
        Path outDir = ScenarioRunner.workRoot().getParent().resolve("client-go");
        Files.createDirectories(outDir);
        Path out = outDir.resolve("client-go");
        Path log = outDir.resolve("build.log");
        List<String> command = new ArrayList<>(List.of(goCommand().toString(), "build", "-o", out.toString(), "."));
        ProcessBuilder pb = new ProcessBuilder(command).directory(source.toFile()).redirectErrorStream(true)
            .redirectOutput(log.toFile());
        Map<String, String> env = pb.environment();
        // go.sum is committed: the build must not change go.mod or go.sum; no toolchain download either
        env.put("GOFLAGS", "-mod=readonly -buildvcs=false");
        env.put("GOTOOLCHAIN", "local");
        Process p = pb.start();
        boolean exited;
        try {
            exited = p.waitFor(BUILD_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while building " + source, e);
        }
        if (!exited) {
            p.destroyForcibly();
            throw new AssertionError("go build of " + source + " still running after " + BUILD_TIMEOUT_SECONDS + " s; log "
                + log);
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        if (p.exitValue() != 0 || !Files.isExecutable(out)) {
            throw new AssertionError("go build of " + source + " failed (exit " + p.exitValue() + "): " + command
                + "\n" + output);
        }
        binary = out;
        return out;
    }
}
