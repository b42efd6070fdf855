package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Gauge;
import io.rmqgw.gateway.config.DownstreamConfig;
import io.rmqgw.it.fixture.ClusterTopic;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.UniqueNames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.filter.ExpressionType;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.sysflag.PullSysFlag;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader;
import org.junit.jupiter.api.Test;

/**
 * Memory a client can pin (issue 17, item 1), against the real 5.4.0 broker: one raw socket pipelines
 * tens of thousands of long-polling PULL_MESSAGE requests through the gateway and reads nothing. The
 * broker holds the pulls, the gateway answers each with its own SYSTEM_BUSY when its long-poll timeout
 * passes; those answers queued to the socket stay within {@code downstream.max-pending-writes} /
 * {@code -bytes} and the connection is closed, counted {@code write_backlog}, while a real producer on
 * another connection sends without a failure.
 */
@RocketMqCluster
class SlowReaderIT {

    private static final int PULLS = 20_000;
    private static final int MAX_PENDING_WRITES = 2_000;
    private static final int MAX_PENDING_WRITE_BYTES = 512 * 1024;

    @Test
    void aClientThatNeverReadsPinsBoundedMemoryAndIsClosedWhileAProducerKeepsSending(ClusterUnderTest cluster,
        @ClusterTopic(queues = 1, hint = "slow_reader") String topic,
        @ClusterTopic(queues = 4, hint = "slow_reader_healthy") String busyTopic) throws Exception {
        DownstreamConfig downstream = new DownstreamConfig(null, null, null, null, null, MAX_PENDING_WRITE_BYTES,
            MAX_PENDING_WRITES, null);
        try (GatewayFixture gateway = GatewayFixture.on(cluster).longPollTimeout(Duration.ofSeconds(3))
            .downstream(downstream).start()) {
            GatewayMetrics metrics = gateway.metrics();
            int port = gateway.brokerPort(cluster.brokerAddress());
            byte[] pipelined = pulls(topic, UniqueNames.group("slow_reader"));

            DefaultMQProducer producer = new DefaultMQProducer(UniqueNames.group("slow_reader_p"));
            producer.setNamesrvAddr(gateway.namesrvAddress());
            producer.setInstanceName(UniqueNames.instance("slow-reader"));
            // the broker, the gateway and this test share one JVM and two cores with 20,000 pulls in flight:
            // latency is not what this test is about, a failure is. Retries stay at the client's default (2):
            // a saturated broker may answer SYSTEM_BUSY from its own flow control, which clients retry
            producer.setSendMsgTimeout(10_000);
            AtomicInteger sent = new AtomicInteger();
            AtomicInteger failures = new AtomicInteger();
            AtomicReference<String> firstFailure = new AtomicReference<>();
            AtomicBoolean stop = new AtomicBoolean();
            producer.start();
            Thread sender = new Thread(() -> {
                for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
                    try {
                        if (producer.send(new Message(busyTopic, ("healthy " + i).getBytes(StandardCharsets.UTF_8)))
                            .getSendStatus() == SendStatus.SEND_OK) {
                            sent.incrementAndGet();
                        } else {
                            failures.incrementAndGet();
                        }
                    } catch (Exception e) {
                        failures.incrementAndGet();
                        StringBuilder chain = new StringBuilder();
                        for (Throwable t = e; t != null && chain.length() < 2000; t = t.getCause()) {
                            chain.append(" <- ").append(t);
                        }
                        firstFailure.compareAndSet(null, chain.toString());
                    }
                }
            }, "healthy-producer");
            try (Socket silent = new Socket()) {
                silent.setReceiveBufferSize(4096);
                silent.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                sender.start();
                Runtime rt = Runtime.getRuntime();
                System.gc();
                long heapBefore = rt.totalMemory() - rt.freeMemory();
                long start = System.nanoTime();
                Thread writer = new Thread(() -> {
                    try {
                        OutputStream out = silent.getOutputStream();
                        out.write(pipelined);
                        out.flush();
                    } catch (IOException closedMeanwhile) {
                        // the gateway stopped reading, then closed the connection
                    }
                }, "silent-writer");
                writer.setDaemon(true);
                writer.start();

                long largest = 0;
                long heapPeak = 0;
                long deadline = start + TimeUnit.SECONDS.toNanos(60);
                while (MeterReadings.of(metrics).connectionsClosed(GatewayMetrics.BROKER, CloseReason.WRITE_BACKLOG) == 0
                    && System.nanoTime() < deadline) {
                    largest = Math.max(largest, (long) gauge(metrics, "rmqgw.downstream.queued.max.bytes"));
                    heapPeak = Math.max(heapPeak, rt.totalMemory() - rt.freeMemory());
                    Thread.sleep(20);
                }
                long closedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                double closed = MeterReadings.of(metrics).connectionsClosed(GatewayMetrics.BROKER, CloseReason.WRITE_BACKLOG);
                double busyPulls = MeterReadings.of(metrics).requests(RequestCode.PULL_MESSAGE, 2);
                long read = readUntilClosed(silent);
                stop.set(true);
                sender.join(30_000);
                System.err.println("[it] slow reader: " + PULLS + " pulls pipelined (" + pipelined.length
                    + " bytes); closed for its backlog after " + closedAfterMillis + " ms; the gateway answered "
                    + (long) busyPulls + " pulls SYSTEM_BUSY; largest queue to one connection "
                    + largest + " bytes (bound " + MAX_PENDING_WRITE_BYTES + " bytes / " + MAX_PENDING_WRITES
                    + " answers); test JVM heap before " + heapBefore / (1 << 20) + " MiB, peak "
                    + heapPeak / (1 << 20) + " MiB; the socket then read " + read + " bytes; the producer sent "
                    + sent.get() + " with " + failures.get() + " failures"
                    + (firstFailure.get() == null ? "" : " (first: " + firstFailure.get() + ")"));

                assertEquals(1, closed, "the client that reads nothing was not closed for its backlog");
                // the gateway's own answers within the bound (plus Netty's 96 bytes per queued write); nothing
                // relayed: the broker holds the pulls longer than the gateway waits
                assertTrue(largest <= MAX_PENDING_WRITE_BYTES + MAX_PENDING_WRITES * 96L,
                    "queued to one connection " + largest);
                assertTrue(sent.get() > 0, "the producer sent nothing");
                assertEquals(0, failures.get(), "the healthy producer failed: " + firstFailure.get());
            } finally {
                stop.set(true);
                sender.join(30_000);
                producer.shutdown();
            }
        }
    }

    /** {@link #PULLS} long-polling pulls of queue 0 from offset 0, suspended 60 s at the broker. */
    private static byte[] pulls(String topic, String group) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int i = 0; i < PULLS; i++) {
            PullMessageRequestHeader h = new PullMessageRequestHeader();
            h.setConsumerGroup(group);
            h.setTopic(topic);
            h.setQueueId(0);
            h.setQueueOffset(0L);
            h.setMaxMsgNums(32);
            h.setSysFlag(PullSysFlag.buildSysFlag(false, true, true, false));
            h.setCommitOffset(0L);
            h.setSuspendTimeoutMillis(60_000L);
            h.setSubscription("*");
            h.setSubVersion(0L);
            h.setExpressionType(ExpressionType.TAG);
            RemotingCommand request = RemotingCommand.createRequestCommand(RequestCode.PULL_MESSAGE, h);
            request.setOpaque(1_000_000 + i);
            ByteBuffer encoded = request.encode();
            byte[] bytes = new byte[encoded.remaining()];
            encoded.get(bytes);
            all.writeBytes(bytes);
        }
        return all.toByteArray();
    }

    private static double gauge(GatewayMetrics metrics, String name) {
        Gauge g = metrics.registry().find(name).gauge();
        return g == null ? 0 : g.value();
    }

    /** Reads until the gateway's close arrives; the bytes read. */
    private static long readUntilClosed(Socket s) throws IOException {
        s.setSoTimeout(30_000);
        InputStream in = s.getInputStream();
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                total += n;
            }
        } catch (SocketException reset) {
            // closed with data still queued: a reset is a close too
        }
        return total;
    }
}
