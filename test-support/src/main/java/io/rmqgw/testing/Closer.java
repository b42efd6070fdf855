package io.rmqgw.testing;

import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Closes what a test started, last started first, so a test class needs no null-checking teardown. Register it
 * with {@code @RegisterExtension}: {@link #eachTest()} in an instance field closes after each test,
 * {@link #allTests()} in a static field after the class. A failing close does not stop the others; the first
 * failure is thrown at the end with the later ones suppressed. Also usable as a plain try-with-resources.
 */
public final class Closer implements AutoCloseable, AfterEachCallback, AfterAllCallback {

    private final boolean perTest;
    private final Deque<AutoCloseable> open = new ArrayDeque<>();

    private Closer(boolean perTest) {
        this.perTest = perTest;
    }

    /** Closes after each test (an instance field). */
    public static Closer eachTest() {
        return new Closer(true);
    }

    /** Closes after all the class's tests (a static field). */
    public static Closer allTests() {
        return new Closer(false);
    }

    /** {@code resource}, to be closed before everything added earlier. */
    public synchronized <T extends AutoCloseable> T add(T resource) {
        open.push(resource);
        return resource;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        if (perTest) {
            close();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        close();
    }

    @Override
    public void close() throws Exception {
        Throwable first = null;
        while (true) {
            AutoCloseable next;
            synchronized (this) {
                next = open.poll();
            }
            if (next == null) {
                break;
            }
            try {
                next.close();
            } catch (Exception | Error e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first instanceof Error error) {
            throw error;
        }
        if (first != null) {
            throw (Exception) first;
        }
    }
}
