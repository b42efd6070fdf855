package io.rmqgw.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A rocketmq-client version the scenario programs are built against: module
 * {@code tests/client-<version>}, whose build leaves {@code target/classes} and
 * {@code target/client.classpath} (maven-dependency-plugin build-classpath).
 */
public enum ClientVersion {
    V4_9_7("4.9.7"),
    V5_4_0("5.4.0");

    private final String version;
    private volatile String classpath;

    ClientVersion(String version) {
        this.version = version;
    }

    public String version() {
        return version;
    }

    /** {@code tests/client-<version>}, from {@code -Drmqgw.it.clientsDir} (set by the it module's pom) or ../ . */
    public Path moduleDir() {
        String base = System.getProperty("rmqgw.it.clientsDir");
        Path root = base != null ? Paths.get(base) : Paths.get("..");
        return root.resolve("client-" + version).toAbsolutePath().normalize();
    }

    /** The scenario classes followed by this client version's runtime dependencies. */
    public String classpath() {
        String cp = classpath;
        if (cp == null) {
            Path classes = moduleDir().resolve("target").resolve("classes");
            Path deps = moduleDir().resolve("target").resolve("client.classpath");
            if (!Files.isDirectory(classes) || !Files.isRegularFile(deps)) {
                throw new IllegalStateException("client " + version + " scenarios are not built: expected " + classes
                    + " and " + deps + "; build them with: mvn -pl tests/client-" + version + " package");
            }
            try {
                cp = classes + java.io.File.pathSeparator + Files.readString(deps, StandardCharsets.UTF_8).trim();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            classpath = cp;
        }
        return cp;
    }

    @Override
    public String toString() {
        return "client-" + version;
    }
}
