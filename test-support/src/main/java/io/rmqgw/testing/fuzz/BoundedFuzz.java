package io.rmqgw.testing.fuzz;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * A short, coverage-blind fuzz run for the regular test suite: feeds a fuzz target {@code count}
 * inputs mutated from its seed corpus by a {@link Mutator} with a fixed random seed, so every build
 * tries the same inputs beyond the seeds and a failure reproduces. The first input the target
 * throws on fails the run; it is written to {@code target/fuzz-failures/} so it can be copied into
 * the corpus as a regression input (Jazzer runs every file there).
 */
public final class BoundedFuzz {

    /** Inputs longer than this are cut, as libFuzzer's default -max_len for such seeds would. */
    public static final int MAX_LENGTH = 64 * 1024;

    private BoundedFuzz() {
    }

    /**
     * Runs the seeds themselves, then {@code count} mutated inputs.
     *
     * @return how many inputs were run
     */
    public static int run(Class<?> fuzzClass, String method, long seed, int count, Consumer<byte[]> target) {
        List<byte[]> seeds = SeedCorpus.of(fuzzClass, method).stream().map(SeedCorpus.Seed::bytes).toList();
        for (byte[] s : seeds) {
            runOne(fuzzClass, method, "seed", -1, s, target);
        }
        Mutator mutator = new Mutator(new Random(seed), MAX_LENGTH);
        for (int i = 0; i < count; i++) {
            runOne(fuzzClass, method, "seed " + seed, i, mutator.next(seeds), target);
        }
        return seeds.size() + count;
    }

    private static void runOne(Class<?> fuzzClass, String method, String origin, int index, byte[] input,
                               Consumer<byte[]> target) {
        try {
            target.accept(input);
        } catch (Throwable t) {
            Path saved = save(fuzzClass, method, input);
            String hex = HexFormat.of().formatHex(input, 0, Math.min(input.length, 256));
            throw new AssertionError(fuzzClass.getSimpleName() + "#" + method + " failed on input " + index + " ("
                + origin + ", " + input.length + " bytes" + (saved == null ? "" : ", saved to " + saved) + "): "
                + hex + (input.length > 256 ? "..." : ""), t);
        }
    }

    private static Path save(Class<?> fuzzClass, String method, byte[] input) {
        try {
            Path dir = Paths.get("target", "fuzz-failures", fuzzClass.getSimpleName(), method);
            Files.createDirectories(dir);
            Path file = dir.resolve("crash-" + Integer.toHexString(java.util.Arrays.hashCode(input)));
            Files.write(file, input);
            return file.toAbsolutePath();
        } catch (IOException e) {
            return null;
        }
    }
}
