package io.rmqgw.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Names no other test of this run uses, so tests share brokers (and a store kept between runs) without seeing
 * each other's topics, groups or files: {@code <prefix>_<hint>_<n>_<run>}, {@code n} counting per JVM,
 * {@code run} a number of this JVM ({@link #RUN}). Hints are cleaned to what RocketMQ accepts in a name
 * ({@code [A-Za-z0-9_-]}).
 */
public final class UniqueNames {

    /** This JVM's run: six digits, the same in every name it gives. */
    public static final String RUN = String.format("%06d", Math.floorMod(System.nanoTime(), 1_000_000L));

    private static final AtomicInteger NAMES = new AtomicInteger();

    private UniqueNames() {
    }

    /** A topic name: {@code it_<hint>_<n>_<run>}. */
    public static String topic(String hint) {
        return name("it", hint);
    }

    /** A producer or consumer group name: {@code itg_<hint>_<n>_<run>}. */
    public static String group(String hint) {
        return name("itg", hint);
    }

    /** A client instance name (its own connections in a JVM of clients): {@code rmqgw-it-<hint>-<n>-<run>}. */
    public static String instance(String hint) {
        return "rmqgw-it-" + clean(hint) + "-" + NAMES.incrementAndGet() + "-" + RUN;
    }

    /** {@code <prefix>_<hint>_<n>_<run>}. */
    public static String name(String prefix, String hint) {
        return prefix + "_" + clean(hint) + "_" + NAMES.incrementAndGet() + "_" + RUN;
    }

    /**
     * A new directory {@code <hint>-<n>-<run>} under the run's work directory ({@code -Drmqgw.it.workDir}, else
     * {@code rmqgw-it} in java.io.tmpdir), created.
     */
    public static Path workDir(String hint) {
        Path dir = workRoot().resolve(clean(hint) + "-" + NAMES.incrementAndGet() + "-" + RUN);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dir;
    }

    /** The run's work directory: {@code -Drmqgw.it.workDir}, else {@code rmqgw-it} in java.io.tmpdir. */
    public static Path workRoot() {
        String d = System.getProperty("rmqgw.it.workDir");
        return d != null ? Paths.get(d) : Paths.get(System.getProperty("java.io.tmpdir"), "rmqgw-it");
    }

    private static String clean(String hint) {
        return hint.replaceAll("[^A-Za-z0-9_-]", "_");
    }
}
