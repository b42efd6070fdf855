package io.rmqgw.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty's {@link ResourceLeakDetector} reports a leak while it runs.
 *
 * <p>Registered through {@code META-INF/services/org.junit.jupiter.api.extension.Extension}; JUnit
 * loads it when {@code junit.jupiter.extensions.autodetection.enabled=true} (the parent pom sets it
 * for surefire, together with {@code -Dio.netty.leakDetection.level=PARANOID}). Modules get it by
 * depending on the codec test-jar.
 *
 * <p>How: the static initializer installs a {@link ResourceLeakDetectorFactory} whose detectors
 * record every leak report into a global queue (and still log it). JUnit instantiates autodetected
 * extensions when the Jupiter engine starts, before any test class runs, so the detectors that
 * Netty creates in its static initializers (the one for every {@link ByteBuf} among them) are ours.
 * Should {@link ByteBuf}'s detector have been created before that, a leak listener is attached to
 * it instead. After each test class, {@link #afterAll} collects garbage, makes every detector poll
 * its reference queue (a leak is only reported on a later allocation), and fails the class with
 * every report recorded since the previous class.
 *
 * <p>A report is attributed to the class that was running when it surfaced: a leak left by a
 * previous class whose buffers were only collected later can show up one class late.
 *
 * <p>Netty tracks pooled buffers and direct buffers; unpooled heap buffers ({@code Unpooled.buffer},
 * {@code Unpooled.wrappedBuffer(byte[])}) are never tracked, so a test that wants its buffers
 * checked allocates them from {@code PooledByteBufAllocator.DEFAULT} or as direct buffers.
 * Without {@code io.netty.leakDetection.level} set (an IDE run), the level is raised to PARANOID.
 */
public final class LeakCheckExtension implements AfterAllCallback {

    private static final System.Logger LOG = System.getLogger(LeakCheckExtension.class.getName());

    private static final Queue<String> REPORTS = new ConcurrentLinkedQueue<>();
    private static final List<RecordingLeakDetector<?>> DETECTORS = new CopyOnWriteArrayList<>();
    private static final int GC_ROUNDS = 4;
    private static final boolean BYTE_BUF_HOOKED;

    static {
        if (System.getProperty("io.netty.leakDetection.level") == null
            && System.getProperty("io.netty.leakDetectionLevel") == null) {
            // run from an IDE without the surefire argLine: still check every buffer
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
        BYTE_BUF_HOOKED = hookByteBufDetector();
    }

    public LeakCheckExtension() {
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            StringBuilder message = new StringBuilder()
                .append(leaks.size()).append(" Netty resource leak report(s) while running ")
                .append(context.getDisplayName())
                .append(" (or a class before it whose leaked objects were collected late):");
            for (String leak : leaks) {
                message.append("\n\n").append(leak);
            }
            throw new AssertionError(message.toString());
        }
    }

    /**
     * Collects garbage, makes every detector report what it found, and returns (and forgets) every
     * report recorded so far.
     */
    public static List<String> collectLeaks() {
        for (int round = 0; round < GC_ROUNDS; round++) {
            System.gc();
            try {
                // the reference handler thread enqueues collected referents asynchronously
                Thread.sleep(round == 0 ? 20 : 10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            triggerReporting();
        }
        List<String> drained = new ArrayList<>();
        for (String report; (report = REPORTS.poll()) != null; ) {
            if (!rocketmqEncoderBuffer(report)) {
                drained.add(report);
            }
        }
        return drained;
    }

    /**
     * Whether {@code report} is the one known leak of an embedded Apache RocketMQ 5.4.0 broker, not ours: its
     * commit log keeps one direct encoder buffer per sending thread in a ThreadLocal
     * ({@code MessageExtEncoder$PutMessageThreadLocal}) and drops it unreleased when the broker stops, so a test
     * that stops an in-process broker after sends would see it. It is still logged by Netty; it does not fail.
     */
    static boolean rocketmqEncoderBuffer(String report) {
        return report.contains("org.apache.rocketmq.store.MessageExtEncoder$PutMessageThreadLocal.<init>");
    }

    /** Whether leaks of {@link ByteBuf}s reach this extension (through its factory or a listener). */
    public static boolean byteBufDetectorHooked() {
        return BYTE_BUF_HOOKED;
    }

    /**
     * A detector like the ones the installed factory makes, reporting into {@code sink} only (it does not
     * log, and its reports do not fail the running class); for testing the mechanism itself.
     */
    public static <T> ResourceLeakDetector<T> newRecordingDetector(Class<T> resource, Consumer<String> sink) {
        return new RecordingLeakDetector<>(resource, 1, sink, false);
    }

    /** Detectors report on a later tracked allocation: make one on every detector, and some real ones. */
    private static void triggerReporting() {
        for (RecordingLeakDetector<?> detector : DETECTORS) {
            detector.poll();
        }
        allocateAndRelease(UnpooledByteBufAllocator.DEFAULT);
        allocateAndRelease(PooledByteBufAllocator.DEFAULT);
    }

    private static void allocateAndRelease(ByteBufAllocator alloc) {
        alloc.heapBuffer(8).release();
        alloc.directBuffer(8).release();
    }

    private static boolean hookByteBufDetector() {
        try {
            Class<?> type = Class.forName("io.netty.buffer.AbstractByteBuf", true, ByteBuf.class.getClassLoader());
            Field field = type.getDeclaredField("leakDetector");
            field.setAccessible(true);
            Object detector = field.get(null);
            if (detector instanceof RecordingLeakDetector) {
                return true;
            }
            if (detector instanceof ResourceLeakDetector<?> other) {
                LOG.log(System.Logger.Level.WARNING, "ByteBuf leak detector was created before "
                    + LeakCheckExtension.class.getSimpleName() + " was loaded; listening to it instead");
                other.setLeakListener((resourceType, records) -> REPORTS.add(describe(resourceType, records)));
                return true;
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot check the ByteBuf leak detector", e);
        }
        return false;
    }

    static String describe(String resourceType, String records) {
        return "LEAK: " + resourceType + ".release() was not called before it was garbage-collected."
            + (records.isEmpty() ? " (no access records)" : records);
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {

        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval) {
            RecordingLeakDetector<T> detector = new RecordingLeakDetector<>(resource, samplingInterval, REPORTS::add, true);
            DETECTORS.add(detector);
            return detector;
        }

        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                   long maxActive) {
            return newResourceLeakDetector(resource, samplingInterval);
        }
    }

    /** Records each report into a sink, then logs it as Netty does. */
    static final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {

        private final Consumer<String> sink;
        private final boolean log;

        RecordingLeakDetector(Class<T> resource, int samplingInterval, Consumer<String> sink, boolean log) {
            super(resource, samplingInterval);
            this.sink = sink;
            this.log = log;
        }

        /** Report even when the leak logger is switched off: the report is what fails the test. */
        @Override
        protected boolean needReport() {
            return true;
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            sink.accept(describe(resourceType, records));
            if (log) {
                super.reportTracedLeak(resourceType, records);
            }
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            sink.accept(describe(resourceType, ""));
            if (log) {
                super.reportUntracedLeak(resourceType);
            }
        }

        /** Polls the reference queue (reporting what it holds) with a tracker that is closed at once. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        void poll() {
            Object probe = new Object();
            ResourceLeakTracker tracker = ((ResourceLeakDetector) this).trackForcibly(probe);
            tracker.close(probe);
        }
    }
}
