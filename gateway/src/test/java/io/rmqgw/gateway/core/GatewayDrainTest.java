package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code Gateway.close(drain)}: stop accepting at once, let requests in flight finish, then close. */
class GatewayDrainTest {

    private static final int SLOW = 4500;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private TestGateway gateway;
    private ScriptedPeer namesrv;
    private ScriptedPeer broker;
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void tearDown() {
        release.countDown();
    }

    /** Answers SLOW requests 200 ms after the test lets it (so the test can look at the gateway meanwhile). */
    private final ScriptedPeer.Script slow = (c, f) -> {
        if (f.code() == SLOW && !f.isResponse()) {
            if (!release.await(10, TimeUnit.SECONDS)) {
                return;
            }
            Thread.sleep(200);
            c.send(Wire.response(Wire.SUCCESS, f.opaque()).remark("slow answer").bytes());
        }
    };

    @Test
    void closeStopsAcceptingAtOnceAndLetsTheRequestInFlightFinish() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().nameServer(brokers -> slow)
            .gateway(g -> g.drainTimeout(Duration.ofSeconds(5))).start(resources);
        namesrv = cluster.namesrv();
        broker = cluster.broker();
        gateway = cluster.gateway();
        int listenPort = gateway.port();
        int brokerPort = gateway.brokerPort(broker.address());

        try (RawClient client = RawClient.connect(listenPort)) {
            client.send(Wire.request(SLOW).opaque(61).bytes());
            namesrv.awaitFrame(f -> f.opaque() == 61, RawClient.WAIT);

            Thread closer = new Thread(() -> gateway.gateway().close(Duration.ofSeconds(5)), "gateway-close");
            closer.start();
            TestGateway.await(() -> refuses(listenPort), RawClient.WAIT, "the listen port refusing connections");
            TestGateway.await(() -> refuses(brokerPort) && refuses(brokerPort - 2), RawClient.WAIT,
                "the broker ports refusing connections");
            assertTrue(closer.isAlive(), "close() is still draining while the request is in flight");

            long released = System.nanoTime();
            release.countDown();
            Wire.Frame answer = client.read();
            assertEquals(61, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code(), "the upstream's answer, not a gateway error: " + answer);
            assertEquals("slow answer", answer.remark());
            assertTrue(System.nanoTime() - released >= Duration.ofMillis(200).toNanos());

            closer.join(RawClient.WAIT.toMillis());
            assertFalse(closer.isAlive(), "close() returned once the request finished");
            client.assertClosedBy();
        }
    }

    @Test
    void closeGivesUpAfterTheDrainTimeout() throws Exception {
        namesrv = resources.add(ScriptedPeer.start(slow));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address())
            .requestTimeout(Duration.ofSeconds(30)).start());
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(SLOW).opaque(62).bytes());
            namesrv.awaitFrame(f -> f.opaque() == 62, RawClient.WAIT);
            long start = System.nanoTime();
            gateway.gateway().close(Duration.ofMillis(300));
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMillis >= 300 && tookMillis < 3000, "close took " + tookMillis + " ms");
            client.assertClosedBy();
        }
    }

    @Test
    void brokerNamedByARouteAnsweredDuringTheDrainGetsNoAcceptingListener() throws Exception {
        CountDownLatch releaseSecond = new CountDownLatch(1);
        broker = resources.add(ScriptedPeer.start(ScriptedPeer.Script.ECHO));
        String route = Routes.body("broker-late", broker.address(), false);
        namesrv = resources.add(ScriptedPeer.start((c, f) -> {
            if (f.isResponse()) {
                return;
            }
            if (f.code() == Routes.GET_ROUTEINFO_BY_TOPIC) {
                if (release.await(10, TimeUnit.SECONDS)) {
                    Thread.sleep(200);
                    c.send(Wire.response(Wire.SUCCESS, f.opaque()).body(route).bytes());
                }
            } else if (f.code() == SLOW && releaseSecond.await(10, TimeUnit.SECONDS)) {
                c.send(Wire.response(Wire.SUCCESS, f.opaque()).remark("second").bytes());
            }
        }));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address())
            .drainTimeout(Duration.ofSeconds(5)).start());
        Thread closer = new Thread(() -> gateway.gateway().close(Duration.ofSeconds(5)), "gateway-close");
        try (RawClient routeClient = RawClient.connect(gateway.port()); RawClient other = RawClient.connect(gateway.port())) {
            routeClient.send(Routes.request("TopicLate", 453).opaque(71).bytes());
            other.send(Wire.request(SLOW).opaque(72).bytes());
            // two connections: the two requests may arrive in either order
            int first = namesrv.awaitFrame(f -> f.opaque() == 71 || f.opaque() == 72, RawClient.WAIT).frame().opaque();
            namesrv.awaitFrame(f -> f.opaque() == 143 - first, RawClient.WAIT);

            closer.start();
            TestGateway.await(() -> refuses(gateway.port()), RawClient.WAIT, "the listen port refusing connections");

            release.countDown();
            Wire.Frame answer = routeClient.read();
            assertEquals(71, answer.opaque());
            assertTrue(closer.isAlive(), "still draining: the other request is in flight");
            String advertised = gateway.gateway().brokerListeners().get(broker.address());
            if (advertised != null) {
                int port = Integer.parseInt(advertised.substring(advertised.indexOf(':') + 1));
                assertTrue(refuses(port), "a stopping gateway accepts connections on " + advertised
                    + ", a listener bound during the drain for the route answered with " + answer);
                assertTrue(refuses(port - 2), "VIP port " + (port - 2) + " accepts during the drain");
            }
        } finally {
            releaseSecond.countDown();
            closer.join(RawClient.WAIT.toMillis());
        }
    }

    private static boolean refuses(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            return false;
        } catch (ConnectException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void closeIsIdempotent() throws Exception {
        namesrv = resources.add(ScriptedPeer.start(ScriptedPeer.Script.ECHO));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).start());
        int port = gateway.port();
        gateway.gateway().close(Duration.ZERO);
        gateway.gateway().close(Duration.ZERO);
        assertThrows(ConnectException.class, () -> RawClient.connect(port).close());
    }
}
