package io.rmqgw.testing.fuzz;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The seed inputs of a fuzz test class, where Jazzer's JUnit integration looks for them: the test
 * resources directory {@code <package path>/<SimpleName>Inputs}, files directly in it for every fuzz
 * test of the class, files in {@code <method>/} below it for that method only.
 */
public final class SeedCorpus {

    private SeedCorpus() {
    }

    /** Every seed of {@code method} in {@code fuzzClass}'s inputs directory (shared ones first), sorted by name. */
    public static List<Seed> of(Class<?> fuzzClass, String method) {
        Path dir = directory(fuzzClass);
        List<Seed> seeds = new ArrayList<>(filesIn(dir, false));
        Path own = dir.resolve(method);
        if (Files.isDirectory(own)) {
            seeds.addAll(filesIn(own, true));
        }
        if (seeds.isEmpty()) {
            throw new IllegalStateException("no seed inputs for " + fuzzClass.getName() + "#" + method + " in " + dir);
        }
        return seeds;
    }

    /** The inputs directory of {@code fuzzClass} on the test class path. */
    public static Path directory(Class<?> fuzzClass) {
        String name = fuzzClass.getSimpleName() + "Inputs";
        URL url = fuzzClass.getResource(name);
        if (url == null) {
            throw new IllegalStateException("no resource directory " + name + " beside " + fuzzClass.getName());
        }
        try {
            return Paths.get(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(url.toString(), e);
        }
    }

    private static List<Seed> filesIn(Path dir, boolean recursive) {
        try (Stream<Path> files = recursive ? Files.walk(dir) : Files.list(dir)) {
            return files.filter(Files::isRegularFile).sorted()
                .map(f -> new Seed(dir.relativize(f).toString(), read(f))).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One seed file. */
    public record Seed(String name, byte[] bytes) {
    }
}
