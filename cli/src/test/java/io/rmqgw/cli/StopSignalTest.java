package io.rmqgw.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rmqgw.testing.Await;
import io.rmqgw.testing.ScriptedPeer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code rmqgw start} in a JVM of its own, stopped by a real signal: a stop that completes exits 0 (what
 * {@code start --help} promises and what systemd counts as success), not the JVM's 143 or 130.
 */
@Timeout(180)
class StopSignalTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT"})
    void aSignalStopsTheGatewayAndTheProcessExitsZero(String signal) throws Exception {
        // a shell starts background jobs with SIGINT ignored (so Ctrl-C spares them), and the gateway inherits it
        assumeFalse("INT".equals(signal) && ignoredHere(2), "SIGINT is ignored by this process (run in the background)");
        try (ScriptedPeer namesrv = ScriptedPeer.nameServer(null)) {
            GatewayFiles files = new GatewayFiles(dir, "  namesrv: " + namesrv.address() + "\n");
            files.write(files.yaml("5s", 127, ""));
            Process process = new ProcessBuilder(javaBinary(), "-cp", testClassPath(),
                "-Dio.netty.leakDetection.level=disabled", Main.class.getName(), "start", "-c", files.file.toString())
                .directory(dir.toFile()).redirectErrorStream(true).start();
            StringBuffer output = new StringBuffer();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        output.append(line).append('\n');
                    }
                } catch (java.io.IOException e) {
                    output.append("(reading stopped: ").append(e).append(")\n");
                }
            }, "gateway-output");
            reader.setDaemon(true);
            reader.start();
            try {
                Await.until(() -> "the gateway running; output so far:\n" + output, Duration.ofSeconds(90),
                    Duration.ofMillis(100), () -> output.indexOf("Stop with Ctrl-C or SIGTERM") >= 0 || !process.isAlive());
                assertTrue(process.isAlive(), output::toString);

                Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
                assertEquals(0, kill.waitFor(), "kill -" + signal);
                assertTrue(process.waitFor(60, TimeUnit.SECONDS), () -> "still running after SIG" + signal + ":\n" + output);
                reader.join(5_000);
                assertEquals(0, process.exitValue(), () -> "exit code after SIG" + signal + ":\n" + output);
                String text = output.toString();
                assertTrue(text.contains("stopping: no new clients"), text);
                assertTrue(text.strip().endsWith("stopped") || text.contains("\nstopped\n"), text);
            } finally {
                process.destroyForcibly();
            }
        }
    }

    /** Whether signal {@code number} is ignored by this JVM, as its children inherit (/proc/self/status SigIgn). */
    private static boolean ignoredHere(int number) throws java.io.IOException {
        Path status = Path.of("/proc/self/status");
        if (!Files.exists(status)) {
            return false;
        }
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("SigIgn:")) {
                long mask = Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16);
                return (mask & (1L << (number - 1))) != 0;
            }
        }
        return false;
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The test class path (surefire passes the real one apart from its booter jar's manifest). */
    private static String testClassPath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

}
