package io.rmqgw.gateway.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The configuration file watch: which changes call back, debounced, once per content change. */
@Timeout(30)
class ConfigFileWatcherTest {

    private static final Duration DEBOUNCE = Duration.ofMillis(200);
    /** Long enough for the watch service to report and the debounce to pass. */
    private static final long SETTLE_MILLIS = 800;

    @TempDir
    Path dir;

    private Path file;
    private final AtomicInteger changes = new AtomicInteger();
    private ConfigFileWatcher watcher;

    @BeforeEach
    void start() throws Exception {
        file = Files.writeString(dir.resolve("gateway.yaml"), "listen: 127.0.0.1:9876\n");
        watcher = ConfigFileWatcher.start(file, DEBOUNCE, changes::incrementAndGet);
    }

    @AfterEach
    void stop() {
        watcher.close();
    }

    private void awaitChanges(int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (changes.get() < expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        Thread.sleep(SETTLE_MILLIS); // and no more than that
        assertEquals(expected, changes.get());
    }

    @Test
    void aWriteInPlaceCallsBackOnce() throws Exception {
        Files.writeString(file, "listen: 127.0.0.1:9000\n");
        awaitChanges(1);
    }

    @Test
    void aFileRenamedOverItCallsBack() throws Exception {
        Path tmp = dir.resolve("gateway.yaml.swp");
        Files.writeString(tmp, "listen: 127.0.0.1:9001\n");
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        awaitChanges(1);
    }

    @Test
    void aBurstOfWritesIsOneChange() throws Exception {
        for (int i = 0; i < 10; i++) {
            Files.writeString(file, "listen: 127.0.0.1:" + (9100 + i) + "\n");
            Thread.sleep(20);
        }
        awaitChanges(1);
    }

    @Test
    void touchingOrRewritingTheSameContentDoesNothing() throws Exception {
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
        Files.writeString(file, "listen: 127.0.0.1:9876\n");
        Thread.sleep(SETTLE_MILLIS);
        assertEquals(0, changes.get());
    }

    @Test
    void otherFilesInTheDirectoryDoNothing() throws Exception {
        Files.writeString(dir.resolve("prometheus.yml"), "x: 1\n");
        Thread.sleep(SETTLE_MILLIS);
        assertEquals(0, changes.get());
    }

    @Test
    void aDeletedFileIsLeftAloneUntilItIsBack() throws Exception {
        Files.delete(file);
        Thread.sleep(SETTLE_MILLIS);
        assertEquals(0, changes.get(), "a missing file is no reason to reload");
        Files.writeString(file, "listen: 127.0.0.1:9876\n");
        Thread.sleep(SETTLE_MILLIS);
        assertEquals(0, changes.get(), "back with the same content");
        Files.writeString(file, "listen: 127.0.0.1:9002\n");
        awaitChanges(1);
    }

    @Test
    void aConfigMapStyleSymlinkSwapCallsBack() throws Exception {
        // Kubernetes: gateway.yaml -> ..data/gateway.yaml, ..data -> ..v1; an update swaps ..data to ..v2
        watcher.close();
        Path v1 = Files.createDirectory(dir.resolve("..v1"));
        Path v2 = Files.createDirectory(dir.resolve("..v2"));
        Files.writeString(v1.resolve("gateway.yaml"), "listen: 127.0.0.1:9876\n");
        Files.writeString(v2.resolve("gateway.yaml"), "listen: 127.0.0.1:9003\n");
        Path data = Files.createSymbolicLink(dir.resolve("..data"), Path.of("..v1"));
        Path link = dir.resolve("link.yaml");
        Files.createSymbolicLink(link, Path.of("..data/gateway.yaml"));
        watcher = ConfigFileWatcher.start(link, DEBOUNCE, changes::incrementAndGet);
        Path tmp = Files.createSymbolicLink(dir.resolve("..data_tmp"), Path.of("..v2"));
        Files.move(tmp, data, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        awaitChanges(1);
        assertTrue(Files.readString(link).contains("9003"));
    }
}
