package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Gauge;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics.CloseReason;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client that sends and never reads, over real loopback sockets: the gateway's own answers queued to
 * it stay within {@code downstream.max-pending-writes}/{@code -bytes} and it is closed (counted
 * {@code write_backlog}); relayed answers stop its reads and it is closed after
 * {@code downstream.unwritable-timeout} (counted {@code unwritable}); another client is served meanwhile.
 */
class SlowReaderTest {

    private static final int BIG = 60 * 1024;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;

    private void start(ScriptedPeer.Script brokerScript, TestGateway.Builder settings) throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker(brokerScript).gateway(settings).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    private double closed(CloseReason reason) {
        return MeterReadings.of(gateway.metrics()).connectionsClosed("broker", reason);
    }

    private double largestQueued() {
        Gauge g = gateway.metrics().registry().find("rmqgw.downstream.queued.max.bytes").gauge();
        return g == null ? -1 : g.value();
    }

    /** A socket with a small receive buffer that the test never reads from (until it checks the close). */
    private Socket nonReading(int port) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        return s;
    }

    /** Reads what arrives until the gateway closes the connection; fails if it is still open after {@code timeout}. */
    private static long readUntilClosed(Socket s, Duration timeout) throws IOException {
        s.setSoTimeout((int) timeout.toMillis());
        InputStream in = s.getInputStream();
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                total += n;
            }
        } catch (SocketException reset) {
            // closed with unread data on the gateway side: a reset is a close too
        }
        return total;
    }

    @Test
    void gatewayAnswersQueuedToAClientThatNeverReadsAreBoundedAndTheConnectionClosed() throws Exception {
        int maxWrites = 500;
        int maxBytes = 64 * 1024;
        // pulls are held (never answered), so every one ends in the gateway's own timeout answer
        start((c, f) -> {
                if (!f.isResponse() && !f.isOneway() && f.code() != RequestCode.PULL_MESSAGE) {
                    c.send(Wire.response(Wire.SUCCESS, f.opaque()).bytes());
                }
            },
            TestGateway.builder().longPollTimeout(Duration.ofSeconds(1)).requestTimeout(Duration.ofSeconds(10))
                .writeBounds(maxBytes, maxWrites, Duration.ZERO));
        int port = gateway.brokerPort(broker.address());
        // more answers than the sockets' kernel buffers take (about 3 MB on loopback here)
        int pulls = 40_000;
        ByteArrayOutputStream pipelined = new ByteArrayOutputStream();
        for (int i = 0; i < pulls; i++) {
            pipelined.write(Wire.request(RequestCode.PULL_MESSAGE).opaque(i).ext("topic", "TopicA")
                .ext("consumerGroup", "cg").ext("queueId", "0").bytes());
        }
        AtomicLong largest = new AtomicLong();
        try (Socket silent = nonReading(port); RawClient healthy = RawClient.connect(port)) {
            byte[] all = pipelined.toByteArray();
            Thread writer = new Thread(() -> {
                try {
                    silent.getOutputStream().write(all);
                } catch (IOException closedMeanwhile) {
                    // the gateway stopped reading, then closed the connection before all was sent
                }
            }, "silent-writer");
            writer.setDaemon(true);
            writer.start();
            int answered = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (closed(CloseReason.WRITE_BACKLOG) == 0 && System.nanoTime() < deadline) {
                healthy.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(answered).bytes());
                Wire.Frame a = healthy.read();
                assertEquals(Wire.SUCCESS, a.code(), "the other client is served meanwhile: " + a);
                answered++;
                largest.accumulateAndGet((long) largestQueued(), Math::max);
                Thread.sleep(20);
            }
            assertEquals(1, closed(CloseReason.WRITE_BACKLOG), "the non-reading client was not closed for its backlog");
            long read = readUntilClosed(silent, Duration.ofSeconds(10));
            System.err.println("[test] " + pulls + " pipelined pulls: closed for its backlog; the healthy client got "
                + answered + " answers meanwhile; largest queue to one connection seen " + largest.get()
                + " bytes; the silent client then read " + read + " bytes before the close");
            assertTrue(answered > 0);
            // the gateway's own answers within the bound, on top of nothing relayed (pulls are never answered)
            assertTrue(largest.get() <= maxBytes + maxWrites * 96L, "queued " + largest.get());
            assertEquals(0, closed(CloseReason.UNWRITABLE));
            writer.join(10_000);
        }
    }

    @Test
    void aClientThatStaysUnwritableIsClosedAfterTheTimeoutAndItsReadsStopMeanwhile() throws Exception {
        byte[] big = new byte[BIG];
        start(ScriptedPeer.answering(r -> {
                RemotingCommand answer = RemotingCommand.createResponseCommand(Wire.SUCCESS, "big");
                answer.setBody(big);
                return answer;
            }),
            // answers relayed, not timed out, however slow the scripted broker is on a loaded machine
            TestGateway.builder().requestTimeout(Duration.ofSeconds(30)).writeBounds(null, null, Duration.ofSeconds(2)));
        int port = gateway.brokerPort(broker.address());
        try (Socket silent = nonReading(port); RawClient healthy = RawClient.connect(port)) {
            // 400 requests x 60 KiB answers: far more than the gateway's high water mark (1 MiB)
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < 400; i++) {
                        silent.getOutputStream().write(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(i).bytes());
                    }
                } catch (IOException closedMeanwhile) {
                    // the gateway stopped reading, then closed the connection
                }
            }, "silent-writer");
            writer.setDaemon(true);
            writer.start();
            long largest = 0;
            int answered = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (closed(CloseReason.UNWRITABLE) == 0 && System.nanoTime() < deadline) {
                healthy.send(Wire.request(RequestCode.GET_MAX_OFFSET).opaque(answered).bytes());
                assertEquals(Wire.SUCCESS, healthy.read().code());
                answered++;
                largest = Math.max(largest, (long) largestQueued());
                Thread.sleep(20);
            }
            assertEquals(1, closed(CloseReason.UNWRITABLE), "the client that reads nothing is still open");
            int requestsSeen = (int) broker.codes().stream().filter(c -> c == RequestCode.GET_MAX_OFFSET).count();
            System.err.println("[test] unwritable client closed; the broker saw " + requestsSeen
                + " requests (of 400 sent by the silent client + " + answered + " by the healthy one);"
                + " largest queue to one connection seen " + largest + " bytes");
            // its reads stopped: relayed answers queued stay within the high water mark (1 MiB), plus what the
            // upstream read loop in progress brings (16 reads of at most 64 KiB), plus the frame that straddles it
            assertTrue(largest <= 1024 * 1024 + 16 * 64 * 1024 + BIG + 1024, "queued " + largest);
            assertTrue(requestsSeen < 400 + answered, "the silent client was read to the end: " + requestsSeen);
            readUntilClosed(silent, Duration.ofSeconds(10));
            writer.join(10_000);
        }
    }
}
