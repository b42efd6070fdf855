package io.rmqgw.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakTracker;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

class LeakCheckExtensionTest {

    private static volatile boolean selfTestRunning;

    @Test
    void byteBufLeaksReachTheExtension() {
        assertTrue(LeakCheckExtension.byteBufDetectorHooked());
    }

    @Test
    void recordingDetectorRecordsAnUnreleasedResource() throws InterruptedException {
        List<String> sink = Collections.synchronizedList(new ArrayList<>());
        ResourceLeakDetector<Object> detector = LeakCheckExtension.newRecordingDetector(Object.class, sink::add);
        trackWithoutClosing(detector);
        for (int i = 0; i < 50 && sink.isEmpty(); i++) {
            System.gc();
            Thread.sleep(10);
            Object probe = new Object();
            detector.trackForcibly(probe).close(probe);
        }
        assertEquals(1, sink.size(), "one report for the one unclosed tracker");
        assertTrue(sink.get(0).startsWith("LEAK: Object.release() was not called"), sink.get(0));
        assertTrue(sink.get(0).contains("deliberately-leaked"), "access records are kept: " + sink.get(0));
    }

    private static void trackWithoutClosing(ResourceLeakDetector<Object> detector) {
        Object resource = new Object();
        ResourceLeakTracker<Object> tracker = detector.trackForcibly(resource);
        tracker.record("deliberately-leaked");
    }

    @Test
    void onlyRocketmqsOwnEncoderBufferIsExempt() {
        assertTrue(LeakCheckExtension.rocketmqEncoderBuffer(LeakCheckExtension.describe("ByteBuf", "\n#1:\n\t"
            + "org.apache.rocketmq.store.MessageExtEncoder$PutMessageThreadLocal.<init>(MessageExtEncoder.java:406)")));
        assertFalse(LeakCheckExtension.rocketmqEncoderBuffer(LeakCheckExtension.describe("ByteBuf", "\n#1:\n\t"
            + "io.rmqgw.gateway.core.RelaySession.forward(RelaySession.java:1)")));
    }

    @Test
    void aTestClassThatLeaksABufferFails() {
        assumeTrue(ResourceLeakDetector.getLevel() == ResourceLeakDetector.Level.PARANOID,
            "needs every buffer tracked");
        EngineExecutionResults results;
        selfTestRunning = true;
        try {
            results = EngineTestKit.engine("junit-jupiter")
                .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "true")
                .selectors(selectClass(LeakingSample.class))
                .execute();
        } finally {
            selfTestRunning = false;
        }
        results.testEvents().assertStatistics(stats -> stats.started(1).succeeded(1));
        List<Event> failed = results.containerEvents().failed().list();
        assertEquals(1, failed.size(), "the leaking class fails");
        Throwable failure = failed.get(0).getPayload(org.junit.platform.engine.TestExecutionResult.class)
            .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable).orElseThrow();
        assertInstanceOf(AssertionError.class, failure);
        assertTrue(failure.getMessage().contains("LEAK: "), failure.getMessage());
        assertTrue(failure.getMessage().contains("leakOneBuffer"), "the report shows where: " + failure.getMessage());
        assertTrue(failure.getMessage().contains("DELIBERATE LEAK"), "with the hints: " + failure.getMessage());
        assertTrue(LeakCheckExtension.collectLeaks().isEmpty(), "the sample's report was consumed by its own class");
    }

    static boolean selfTestRunning() {
        return selfTestRunning;
    }

    /** Runs only inside {@link #aTestClassThatLeaksABufferFails()}. */
    @EnabledIf("io.rmqgw.testing.LeakCheckExtensionTest#selfTestRunning")
    static class LeakingSample {

        @Test
        void leakOneBuffer() {
            // pooled: Netty tracks pooled and direct buffers (unpooled heap buffers are not tracked)
            ByteBuf leaked = PooledByteBufAllocator.DEFAULT.buffer(16);
            leaked.touch("DELIBERATE LEAK by LeakCheckExtensionTest: this report is expected");
            leaked.writeLong(42);
            assertEquals(1, leaked.refCnt());
        }
    }
}
