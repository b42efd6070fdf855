package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A peer that stops reading makes the gateway stop reading the other side (so its memory stays
 * bounded), and everything flows again, complete and in order, once it reads.
 */
class BackpressureTest {

    private static final int NOTIFY_CONSUMER_IDS_CHANGED = 40;
    private static final int FRAME_BODY = 32 * 1024;
    private static final int FRAMES = 1536; // 48 MiB
    private static final long TOTAL = (long) FRAMES * FRAME_BODY;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;
    private final CountDownLatch brokerMayRead = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker((c, f) -> {
            if (f.opaque() == 0) {
                // the first frame of the client-to-broker test: stop reading until told
                brokerMayRead.await(30, TimeUnit.SECONDS);
            }
        }).gateway(g -> g.maxFrameLength(64 * 1024)).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    @AfterEach
    void tearDown() {
        brokerMayRead.countDown();
    }

    private static byte[] frame(int seq, boolean fromBroker) {
        byte[] body = new byte[FRAME_BODY];
        body[0] = (byte) (seq >>> 8);
        body[1] = (byte) seq;
        Wire.Builder b = Wire.request(fromBroker ? NOTIFY_CONSUMER_IDS_CHANGED : 4600).opaque(seq).oneway();
        return b.body(body).bytes();
    }

    /** Waits until {@code progress} stops moving for 300 ms (bounded by 20 s); returns where it stopped. */
    private static int awaitStall(AtomicInteger progress, Thread writer) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        int last = -1;
        long stableSince = System.nanoTime();
        while (System.nanoTime() - deadline < 0) {
            int now = progress.get();
            if (now != last) {
                last = now;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > Duration.ofMillis(300).toNanos() || !writer.isAlive()) {
                return now;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the writer never stalled nor finished");
    }

    @Test
    void slowClientStopsTheGatewayReadingTheBroker() throws Exception {
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            ScriptedPeer.Connection upstream = broker.awaitDialBy(client, RawClient.WAIT);
            AtomicInteger written = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < FRAMES; i++) {
                        upstream.send(frame(i, true));
                        written.incrementAndGet();
                    }
                } catch (IOException | RuntimeException e) {
                    failure.set(e);
                }
            }, "broker-writer");
            writer.setDaemon(true);
            writer.start();

            int stalledAt = awaitStall(written, writer);
            assertTrue((long) stalledAt * FRAME_BODY < TOTAL / 2,
                "the broker could write " + stalledAt + " frames (" + (stalledAt * (long) FRAME_BODY >> 20)
                    + " MiB) to a client that reads nothing: the gateway keeps reading");

            for (int i = 0; i < FRAMES; i++) {
                Wire.Frame f = client.read(Duration.ofSeconds(10));
                assertEquals(i, f.opaque(), "in order, none lost");
                assertEquals(FRAME_BODY, f.body().length);
            }
            writer.join(RawClient.WAIT.toMillis());
            assertEquals(null, failure.get());
            assertEquals(FRAMES, written.get());
        }
    }

    @Test
    void slowBrokerStopsTheGatewayReadingTheClient() throws Exception {
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            AtomicInteger written = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < FRAMES; i++) {
                        client.send(frame(i, false));
                        written.incrementAndGet();
                    }
                } catch (IOException | RuntimeException e) {
                    failure.set(e);
                }
            }, "client-writer");
            writer.setDaemon(true);
            writer.start();

            int stalledAt = awaitStall(written, writer);
            assertTrue((long) stalledAt * FRAME_BODY < TOTAL / 2,
                "the client could write " + stalledAt + " frames (" + (stalledAt * (long) FRAME_BODY >> 20)
                    + " MiB) to a broker that reads nothing: the gateway keeps reading");

            brokerMayRead.countDown();
            for (int i = 0; i < FRAMES; i++) {
                ScriptedPeer.Received r = broker.awaitFrame(Duration.ofSeconds(10));
                assertEquals(i, r.frame().opaque(), "in order, none lost");
            }
            writer.join(RawClient.WAIT.toMillis());
            assertEquals(null, failure.get());
        }
    }
}
