package io.rmqgw.probe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import org.apache.rocketmq.common.logging.JoranConfiguratorExt;
import org.apache.rocketmq.logging.ch.qos.logback.classic.LoggerContext;

/**
 * Keeps the RocketMQ client's logs off the probe's stdout and out of {@code ~/logs}: they go to one
 * directory ({@code rocketmq.client.logRoot} / {@code rocketmq.log.root}). The client logs through
 * RocketMQ's shaded logback, whose stock configuration (the first {@code rmq.*.logback.xml} on the
 * class path, here the broker's) writes under {@code ${user.home}/logs/rocketmqlogs}; so unless
 * {@code -Drmq.logback.configurationFile} already chose one (the operator, or an embedded cluster in
 * the same JVM), this writes a small configuration into the directory and selects it.
 */
final class ProbeLogging {

    static final String CONFIG_PROPERTY = "rmq.logback.configurationFile";

    private final Path dir;
    private final boolean temporary;
    private final boolean owned;

    private ProbeLogging(Path dir, boolean temporary, boolean owned) {
        this.dir = dir;
        this.temporary = temporary;
        this.owned = owned;
    }

    /** Sets up logging into {@code dir}, or into a new temporary directory when {@code dir} is null. */
    static synchronized ProbeLogging setUp(Path dir) throws IOException {
        boolean temporary = dir == null;
        Path d = temporary ? Files.createTempDirectory("rmqgw-probe-") : Files.createDirectories(dir);
        String root = d.toAbsolutePath().toString();
        // 4.x clients read rocketmq.client.logRoot, 5.x's stock configurations rocketmq.log.root
        setIfAbsent("rocketmq.client.logRoot", root);
        setIfAbsent("rocketmq.log.root", root);
        if (System.getProperty(CONFIG_PROPERTY) != null) {
            return new ProbeLogging(d, temporary, false);
        }
        Path config = d.resolve("rmqgw-probe-logback.xml");
        Files.writeString(config, configuration(d), StandardCharsets.UTF_8);
        System.setProperty(CONFIG_PROPERTY, config.toString());
        // selects the file if RocketMQ has not logged yet, and reconfigures if it has
        LoggerContext context = (LoggerContext) org.apache.rocketmq.logging.org.slf4j.LoggerFactory.getILoggerFactory();
        context.reset();
        JoranConfiguratorExt configurator = new JoranConfiguratorExt();
        configurator.setContext(context);
        try {
            configurator.doConfigure0(config.toUri().toURL());
        } catch (Exception e) {
            throw new IOException("cannot configure RocketMQ client logging from " + config, e);
        }
        return new ProbeLogging(d, temporary, true);
    }

    Path dir() {
        return dir;
    }

    /** Whether the client's log file is ours (false when another configuration was already chosen). */
    boolean owned() {
        return owned;
    }

    /**
     * Ends the run's logging: a temporary directory is removed when {@code keep} is false (a
     * successful run) and otherwise left for a look.
     *
     * @return the directory that holds the logs, or {@code null} when none is left
     */
    synchronized Path finish(boolean keep) {
        if (owned) {
            ((LoggerContext) org.apache.rocketmq.logging.org.slf4j.LoggerFactory.getILoggerFactory()).stop();
        }
        if (!temporary || (keep && owned)) {
            return owned ? dir : null;
        }
        deleteQuietly(dir);
        return null;
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static String configuration(Path dir) {
        String d = dir.toAbsolutePath().toString().replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\"", "&quot;");
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<!-- written by rmqgw probe: the RocketMQ client's log for this run, nothing on the console -->\n"
            + "<configuration>\n"
            + "  <appender name=\"FILE\" class=\"ch.qos.logback.core.rolling.RollingFileAppender\">\n"
            + "    <file>" + d + "/rocketmq_client.log</file>\n"
            + "    <rollingPolicy class=\"ch.qos.logback.core.rolling.FixedWindowRollingPolicy\">\n"
            + "      <fileNamePattern>" + d + "/rocketmq_client.%i.log.gz</fileNamePattern>\n"
            + "      <minIndex>1</minIndex><maxIndex>2</maxIndex>\n"
            + "    </rollingPolicy>\n"
            + "    <triggeringPolicy class=\"ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy\">\n"
            + "      <maxFileSize>16MB</maxFileSize>\n"
            + "    </triggeringPolicy>\n"
            + "    <encoder><pattern>%d{yyyy-MM-dd HH:mm:ss.SSS} %-5p [%t] %logger{20} - %m%n</pattern></encoder>\n"
            + "  </appender>\n"
            + "  <root level=\"INFO\">\n"
            + "    <appender-ref ref=\"FILE\"/>\n"
            + "  </root>\n"
            + "</configuration>\n";
    }

    private static void deleteQuietly(Path root) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }
}
