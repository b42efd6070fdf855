package io.rmqgw.forked;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The protocol of a server JVM a test forks (ForkedBroker's brokers, ForkedGateway): {@code --key value}
 * arguments, one line {@code READY ...} or {@code FAILED ...} on stdout once started or not, and a life as long as
 * the parent's, whose end closes stdin. Compiled into the it module's tests and into tests/broker-4.9.7, which has
 * RocketMQ 4.9.7 on its class path: it uses the JDK only.
 */
public final class ForkedMain {

    private ForkedMain() {
    }

    /** {@code --key value} pairs, keys without the dashes. */
    public static Map<String, String> options(String[] argv) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            options.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        }
        return options;
    }

    /** The properties file {@code --overrides} names; empty without one. */
    public static Properties overrides(Map<String, String> options) throws IOException {
        Properties overrides = new Properties();
        if (options.containsKey("overrides")) {
            try (InputStream file = Files.newInputStream(Paths.get(options.get("overrides")))) {
                overrides.load(file);
            }
        }
        return overrides;
    }

    /** Tells the parent the start failed, why (the stack trace on stderr), and ends the JVM with status 1. */
    public static void failed(Throwable t) {
        t.printStackTrace();
        System.out.println("FAILED " + t);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }

    /** Tells the parent the server is up: {@code READY}, then {@code details} if any. */
    public static void ready(String details) {
        System.out.println(details.isEmpty() ? "READY" : "READY " + details);
        System.out.flush();
    }

    /** Returns when stdin closes: the parent ended or let go of this JVM. */
    public static void awaitParentGone() throws IOException {
        InputStream in = System.in;
        byte[] buffer = new byte[256];
        while (in.read(buffer) >= 0) {
            // ignore input
        }
    }
}
