package io.rmqgw.metrics;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import java.lang.management.ManagementFactory;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;

/** The per-request methods allocate nothing once their meters exist. */
class HotPathAllocationTest {

    private static final int CALLS = 200_000;
    /** Distinct String objects, as a decoder hands them over; five topics against a limit of two. */
    private static final String[] TOPICS = {
        new String("TopicA"), new String("TopicB"), new String("TopicC"), new String("TopicD"), new String("TopicE")};

    @Test
    void perRequestMethodsDoNotAllocateInSteadyState() {
        java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "allocation counting needs a HotSpot JVM");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
        assumeTrue(threads.isThreadAllocatedMemorySupported());
        threads.setThreadAllocatedMemoryEnabled(true);
        try (GatewayMetrics metrics = GatewayMetrics.prometheus()) {
            metrics.topicLabels(true, 2); // TopicA and TopicB get labels, the other topics count as (other)
            run(metrics, CALLS); // warm-up: meters created, code compiled
            long before = threads.getCurrentThreadAllocatedBytes();
            run(metrics, CALLS);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            // a few stray bytes (JIT, window rotation) are tolerated; one object per call would be >= 3 MB
            assertTrue(allocated < 64 * 1024, "allocated " + allocated + " bytes over " + CALLS + " calls");
        }
    }

    private static void run(GatewayMetrics metrics, int calls) {
        for (int i = 0; i < calls; i++) {
            int code = (i & 1) == 0 ? RequestCode.SEND_MESSAGE_V2 : RequestCode.PULL_MESSAGE;
            metrics.requestCompleted(code, ResponseCode.SUCCESS, 15_000 + (i & 1023), 1_000_000 + i);
            metrics.requestAnswered(code, ResponseCode.SYSTEM_BUSY);
            metrics.requestCompleted(123_456, 98_765, 100, -1);
            metrics.oneway(RequestCode.HEART_BEAT);
            metrics.headerConverted(SerializeType.JSON, SerializeType.ROCKETMQ);
            metrics.topicRequest(TOPICS[i % TOPICS.length], code);
            metrics.decodeError("bad_length");
            metrics.decodeError(MalformedReason.FRAME_TOO_LONG);
            metrics.nameRejected("too_long");
            metrics.nameRejected(NameCheck.ILLEGAL_CHARACTER);
            metrics.connectionClosed(GatewayMetrics.BROKER, CloseReason.MALFORMED_FRAME);
            metrics.connectionClosed(GatewayMetrics.NAMESRV, "upstream_closed");
        }
    }
}
