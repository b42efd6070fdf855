package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedGateway;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.Admin;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.UniqueNames;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.Test;

/**
 * Half-sent large frames against a gateway in its own JVM at {@code -Xmx512m
 * -XX:MaxDirectMemorySize=512m} in front of the real 5.4.0 cluster (issue 17.2: 40 connections each
 * sent 15 MiB of a ~16 MB frame and stopped; 8 got OutOfMemoryError reserving direct memory). What
 * all connections hold in incomplete frames stays within {@code downstream.incomplete-frame-budget}
 * (by default a quarter of the direct memory limit: 128 MiB here), the connections over it are closed
 * with their reason counted, the stalled ones within it are closed by {@code downstream.frame-timeout},
 * no OutOfMemoryError or leak anywhere, and a producer sending through the gateway all along loses
 * nothing. With the default {@code downstream.max-incomplete-frame-bytes} (8 MiB) the same frames are
 * refused on their length alone. Figures are printed for docs/RELIABILITY.md.
 */
@RocketMqCluster
class HalfSentFramesIT {

    private static final List<String> JVM = List.of("-Xmx512m", "-XX:MaxDirectMemorySize=512m", "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Dio.netty.leakDetection.level=PARANOID");
    private static final int CONNECTIONS = 40;
    private static final int DECLARED_LENGTH = 16_000_000;
    private static final int SENT = 15 * 1024 * 1024;
    private static final Duration FRAME_TIMEOUT = Duration.ofSeconds(10);

    /** What a stalled connection writes: the length of a ~16 MB frame, a send header, then zeros up to 15 MiB. */
    private static final byte[] HALF_FRAME = halfFrame();

    private static byte[] halfFrame() {
        byte[] header = ("{\"code\":310,\"flag\":0,\"language\":\"JAVA\",\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\","
            + "\"version\":453,\"extFields\":{\"a\":\"pg\",\"b\":\"TopicA\"}}").getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(SENT);
        b.putInt(DECLARED_LENGTH).putInt(header.length).put(header);
        return b.array();
    }

    /** Peaks of what the gateway reports, sampled every 100 ms. */
    static final class Peaks implements AutoCloseable {
        final AtomicLong incomplete = new AtomicLong();
        final AtomicLong directBuffers = new AtomicLong();
        final AtomicLong pooledDirect = new AtomicLong();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;

        Peaks(ForkedGateway gateway) {
            thread = new Thread(() -> {
                while (running.get()) {
                    try {
                        String s = gateway.scrape();
                        incomplete.accumulateAndGet((long) ForkedGateway.sample(s, "rmqgw_incomplete_frame_bytes"), Math::max);
                        directBuffers.accumulateAndGet(
                            (long) ForkedGateway.sample(s, "jvm_buffer_memory_used_bytes{id=\"direct\"}"), Math::max);
                        pooledDirect.accumulateAndGet(
                            (long) ForkedGateway.sample(s, "rmqgw_netty_pooled_memory_used_bytes{memory=\"direct\"}"), Math::max);
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // a scrape while the gateway is busy may time out: the next one counts
                    }
                }
            }, "peaks");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(5000);
        }
    }

    /** A producer sending through the gateway until stopped. */
    static final class Producer implements AutoCloseable {
        final AtomicInteger ok = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final List<String> failures = new ArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final DefaultMQProducer producer;
        private final Thread thread;

        Producer(String namesrv, String topic) throws Exception {
            this(namesrv, topic, 0);
        }

        /**
         * A producer sending {@code perSecond} messages a second (0: as fast as it can), one at a time; behind its pace
         * it catches up for at most a second's worth.
         */
        Producer(String namesrv, String topic, int perSecond) throws Exception {
            producer = new DefaultMQProducer(UniqueNames.group("halfsent"));
            producer.setNamesrvAddr(namesrv);
            producer.setInstanceName(UniqueNames.instance("halfsent"));
            producer.setRetryTimesWhenSendFailed(0);
            producer.start();
            long interval = perSecond == 0 ? 0 : TimeUnit.SECONDS.toNanos(1) / perSecond;
            thread = new Thread(() -> {
                byte[] body = new byte[1024];
                long next = System.nanoTime();
                while (running.get()) {
                    if (interval > 0) {
                        long now = System.nanoTime();
                        if (next - now > 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(next - now);
                        } else if (now - next > TimeUnit.SECONDS.toNanos(1)) {
                            next = now;
                        }
                        next += interval;
                    }
                    try {
                        SendResult r = producer.send(new Message(topic, body), 5000);
                        if (r.getSendStatus() == SendStatus.SEND_OK) {
                            ok.incrementAndGet();
                        } else {
                            failed.incrementAndGet();
                        }
                    } catch (Exception e) {
                        failed.incrementAndGet();
                        synchronized (failures) {
                            failures.add(e.toString());
                        }
                    }
                }
            }, "healthy-producer");
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(10_000);
            producer.shutdown();
        }
    }

    /** The gateway's address for the shared broker, from a route answered through it. */
    static InetSocketAddress brokerListener(String brokerAddress, String brokerName, ForkedGateway gateway,
                                            String topic) throws Exception {
        Admin.createTopic(brokerAddress, topic, 4);
        Admin.awaitRoute(gateway.namesrvAddress(), topic, brokerName, Duration.ofSeconds(30));
        TopicRouteData route = Admin.route(gateway.namesrvAddress(), topic);
        Map<Long, String> addrs = route.getBrokerDatas().get(0).getBrokerAddrs();
        String a = addrs.get(0L);
        int colon = a.lastIndexOf(':');
        return new InetSocketAddress(a.substring(0, colon), Integer.parseInt(a.substring(colon + 1)));
    }

    /** Connects and writes the half frame; returns the socket (still open unless the gateway refused during the write). */
    private static Socket halfSend(InetSocketAddress target, AtomicInteger refusedWhileWriting) throws IOException {
        Socket s = new Socket();
        s.connect(target, 5000);
        try {
            s.getOutputStream().write(HALF_FRAME);
            s.getOutputStream().flush();
        } catch (IOException e) {
            refusedWhileWriting.incrementAndGet();
        }
        return s;
    }

    /** Waits until the gateway closed {@code s} (EOF or reset); false if it is still open after {@code timeout}. */
    private static boolean closedBy(Socket s, Duration timeout) throws IOException {
        s.setSoTimeout((int) timeout.toMillis());
        InputStream in = s.getInputStream();
        try {
            return in.read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true; // reset
        }
    }

    private static double closed(String scrape, String reason) {
        return ForkedGateway.sample(scrape, "rmqgw_connections_closed_total{reason=\"" + reason + "\",role=\"broker\"}");
    }

    private static List<Socket> sendAll(InetSocketAddress target, AtomicInteger refusedWhileWriting) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Socket>> sockets = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                sockets.add(pool.submit(() -> halfSend(target, refusedWhileWriting)));
            }
            List<Socket> out = new ArrayList<>();
            for (Future<Socket> f : sockets) {
                out.add(f.get(120, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void assertNoOutOfMemoryOrLeak(ForkedGateway gateway, String scrape) throws IOException {
        String log = gateway.log();
        assertTrue(log.contains("io.rmqgw"), "the gateway logs to " + gateway.logFile());
        assertFalse(log.contains("OutOfMemoryError"), "OutOfMemoryError in " + gateway.logFile());
        assertFalse(log.contains("LEAK:"), "leak report in " + gateway.logFile());
        assertEquals(0, closed(scrape, "internal_error"), "no connection closed for an internal error");
        assertTrue(gateway.isAlive());
    }

    @Test
    void fortyHalfSentFramesStayWithinTheBudgetAndGoAtTheFrameTimeout(ClusterUnderTest cluster) throws Exception {
        // frames up to 16 MiB may be buffered here, so the budget is what bounds them
        try (ForkedGateway gateway = GatewayFixture.on(cluster).forked(UniqueNames.workDir("half-sent-budget"))
            .jvmOptions(JVM).downstreamYaml("  frame-timeout: " + FRAME_TIMEOUT.toSeconds()
                + "s\n  max-incomplete-frame-bytes: 16777216\n").start()) {
            String topic = UniqueNames.topic("halfsent");
            InetSocketAddress broker = brokerListener(cluster.brokerAddress(), cluster.brokerName(), gateway, topic);
            long budget = (long) ForkedGateway.sample(gateway.scrape(), "rmqgw_incomplete_frame_budget_bytes");
            assertEquals(128L * 1024 * 1024, budget, "a quarter of 512 MiB direct memory");

            AtomicInteger refusedWhileWriting = new AtomicInteger();
            List<Socket> sockets;
            long t0 = System.nanoTime();
            try (Peaks peaks = new Peaks(gateway); Producer producer = new Producer(gateway.namesrvAddress(), topic)) {
                Await.until("the producer sends", Duration.ofSeconds(60), () -> producer.ok.get() > 10);
                sockets = sendAll(broker, refusedWhileWriting);
                long sentAt = System.nanoTime();
                int closedConnections = 0;
                for (Socket s : sockets) {
                    if (closedBy(s, FRAME_TIMEOUT.plusSeconds(15))) {
                        closedConnections++;
                    }
                    s.close();
                }
                long allClosedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt);
                Await.until("incomplete frames given back", Duration.ofSeconds(10),
                    () -> ForkedGateway.sample(gateway.scrape(), "rmqgw_incomplete_frame_bytes") == 0);
                int okBefore = producer.ok.get();
                Await.until("the producer still sends", Duration.ofSeconds(30), () -> producer.ok.get() > okBefore + 10);
                producer.close();
                peaks.close();

                String scrape = gateway.scrape();
                double byBudget = closed(scrape, "incomplete_frame_budget");
                double byTimeout = closed(scrape, "frame_timeout");
                System.out.printf("HalfSentFramesIT budget: %d connections x %d bytes of %d; budget %d; closed by budget %.0f"
                        + " (%d refused while writing), by frame timeout %.0f, all closed %d ms after the writes"
                        + " (%d s in all); peak incomplete-frame bytes %d, peak JVM direct buffers %d, peak pooled direct %d;"
                        + " producer %d ok, %d failed%n",
                    CONNECTIONS, SENT, DECLARED_LENGTH, budget, byBudget, refusedWhileWriting.get(), byTimeout,
                    allClosedMillis, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0), peaks.incomplete.get(),
                    peaks.directBuffers.get(), peaks.pooledDirect.get(), producer.ok.get(), producer.failed.get());

                assertEquals(CONNECTIONS, closedConnections, "every stalled connection closed by the gateway");
                assertEquals(CONNECTIONS, byBudget + byTimeout, "each closed with its reason counted");
                assertTrue(byBudget >= 1 && byTimeout >= 1, "both bounds acted: budget " + byBudget + ", timeout " + byTimeout);
                assertTrue(peaks.incomplete.get() <= budget, "peak " + peaks.incomplete.get() + " within " + budget);
                assertEquals(0, producer.failed.get(), "the healthy producer: " + producer.failures);
                assertNoOutOfMemoryOrLeak(gateway, scrape);
            }
        }
    }

    @Test
    void withTheDefaultConnectionBoundTheSameFramesAreRefusedOnTheirLength(ClusterUnderTest cluster) throws Exception {
        try (ForkedGateway gateway = GatewayFixture.on(cluster).forked(UniqueNames.workDir("half-sent-default"))
            .jvmOptions(JVM).start()) {
            String topic = UniqueNames.topic("halfsent_default");
            InetSocketAddress broker = brokerListener(cluster.brokerAddress(), cluster.brokerName(), gateway, topic);
            AtomicInteger refusedWhileWriting = new AtomicInteger();
            try (Peaks peaks = new Peaks(gateway); Producer producer = new Producer(gateway.namesrvAddress(), topic)) {
                Await.until("the producer sends", Duration.ofSeconds(60), () -> producer.ok.get() > 10);
                List<Socket> sockets = sendAll(broker, refusedWhileWriting);
                for (Socket s : sockets) {
                    assertTrue(closedBy(s, Duration.ofSeconds(10)), "closed at once");
                    s.close();
                }
                int okBefore = producer.ok.get();
                Await.until("the producer still sends", Duration.ofSeconds(30), () -> producer.ok.get() > okBefore + 10);
                producer.close();
                peaks.close();
                String scrape = gateway.scrape();
                double tooLong = ForkedGateway.sample(scrape, "rmqgw_decode_errors_total{reason=\"frame_too_long\"}");
                System.out.printf("HalfSentFramesIT default bound: %d connections refused as frame_too_long (%d while writing);"
                        + " peak incomplete-frame bytes %d, peak JVM direct buffers %d; producer %d ok, %d failed%n",
                    (int) tooLong, refusedWhileWriting.get(), peaks.incomplete.get(), peaks.directBuffers.get(),
                    producer.ok.get(), producer.failed.get());
                assertEquals(CONNECTIONS, tooLong);
                assertEquals(CONNECTIONS, closed(scrape, "malformed_frame"));
                assertEquals(0, producer.failed.get(), "the healthy producer: " + producer.failures);
                assertNoOutOfMemoryOrLeak(gateway, scrape);
            }
        }
    }
}
