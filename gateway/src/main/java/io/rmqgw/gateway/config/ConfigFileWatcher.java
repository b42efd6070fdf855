package io.rmqgw.gateway.config;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a configuration file and calls back when its content changed. It watches the file's directory
 * (a {@link WatchService}), so editors that write a new file and rename it over the old one, {@code sed -i},
 * and Kubernetes ConfigMap volumes (which swap a {@code ..data} symlink) are seen as well as writes in place.
 * Events are debounced: the callback runs once the directory has been quiet for the debounce time, and only
 * when the content differs from what was seen last (a {@code touch} or a save without changes does nothing).
 * A file that disappears is left alone (the running configuration stays) until it is back.
 */
public final class ConfigFileWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConfigFileWatcher.class);

    /** How long the directory must be quiet before the file is read. */
    public static final Duration DEFAULT_DEBOUNCE = Duration.ofMillis(500);

    private final Path file;
    private final Duration debounce;
    private final Runnable onChange;
    private final WatchService watcher;
    private final Thread thread;
    private byte[] lastSeen;
    private boolean reportedMissing;
    private volatile boolean closed;

    private ConfigFileWatcher(Path file, Duration debounce, Runnable onChange, WatchService watcher) {
        this.file = file;
        this.debounce = debounce;
        this.onChange = onChange;
        this.watcher = watcher;
        this.lastSeen = fingerprint(file);
        this.thread = new Thread(this::run, "rmqgw-config-watch");
        this.thread.setDaemon(true);
    }

    /**
     * Starts watching {@code file}; {@code onChange} runs on the watch thread (hand long work to another one).
     *
     * @throws IOException when the directory cannot be watched
     */
    public static ConfigFileWatcher start(Path file, Duration debounce, Runnable onChange) throws IOException {
        Path absolute = file.toAbsolutePath().normalize();
        Path dir = absolute.getParent();
        if (dir == null) {
            throw new IOException("cannot watch " + file + ": it has no directory");
        }
        WatchService service = dir.getFileSystem().newWatchService();
        try {
            dir.register(service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                StandardWatchEventKinds.ENTRY_DELETE);
        } catch (IOException | RuntimeException e) {
            service.close();
            throw e;
        }
        ConfigFileWatcher w = new ConfigFileWatcher(absolute, debounce, Objects.requireNonNull(onChange), service);
        w.thread.start();
        log.info("watching {} for changes", absolute);
        return w;
    }

    public Path file() {
        return file;
    }

    private void run() {
        long deadline = -1;
        try {
            while (!closed) {
                long wait = deadline < 0 ? 1000 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                WatchKey key = watcher.poll(wait, TimeUnit.MILLISECONDS);
                if (key != null) {
                    boolean relevant = false;
                    for (WatchEvent<?> event : key.pollEvents()) {
                        relevant |= relevant(event);
                    }
                    if (!key.reset()) {
                        log.warn("{} can no longer be watched (its directory is gone); reload with SIGHUP or"
                            + " POST /reload", file);
                        return;
                    }
                    if (relevant) {
                        deadline = System.nanoTime() + debounce.toNanos();
                    }
                    continue;
                }
                if (deadline >= 0 && System.nanoTime() - deadline >= 0) {
                    deadline = -1;
                    check();
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closing
        } catch (RuntimeException e) {
            log.warn("watching {} stopped", file, e);
        }
    }

    private boolean relevant(WatchEvent<?> event) {
        if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
            return true;
        }
        Object context = event.context();
        if (!(context instanceof Path name)) {
            return true;
        }
        String n = name.toString();
        // the file itself, or a ConfigMap-style "..data" symlink swap
        return name.equals(file.getFileName()) || n.startsWith("..");
    }

    private void check() {
        byte[] now = fingerprint(file);
        if (now == null) {
            if (!reportedMissing) {
                log.warn("{} is gone or unreadable; the running configuration stays until it is back", file);
                reportedMissing = true;
            }
            return;
        }
        reportedMissing = false;
        if (Arrays.equals(now, lastSeen)) {
            log.debug("{} touched without changes", file);
            return;
        }
        lastSeen = now;
        log.info("{} changed: reloading", file);
        try {
            onChange.run();
        } catch (RuntimeException e) {
            log.warn("reload after a change of {} failed", file, e);
        }
    }

    private static byte[] fingerprint(Path file) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
        } catch (IOException e) {
            return null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Stops watching; waits at most about a second for the watch thread. */
    @Override
    public void close() {
        closed = true;
        try {
            watcher.close();
        } catch (IOException e) {
            // nothing to do
        }
        thread.interrupt();
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
