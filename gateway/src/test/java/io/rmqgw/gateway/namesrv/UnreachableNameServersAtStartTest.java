package io.rmqgw.gateway.namesrv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.BlackHole;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Start-up against name servers that never answer, listed before the one that does: one whose connects never
 * complete and one that takes connections and reads nothing. The gateway asks them all at once, so it starts
 * (and is ready) as soon as the good one answered, and with none answering it waits about one connect plus
 * request timeout in all, not one per name server.
 */
@Timeout(60)
class UnreachableNameServersAtStartTest {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);
    /** What start-up waits for one name server at worst; asking in turn, it waited this for each bad one. */
    private static final Duration ONE_NAME_SERVER = CONNECT_TIMEOUT.plus(REQUEST_TIMEOUT);

    /** A code RocketMQ does not use: the gateway relays it unread. */
    private static final int RELAYED_AS_IS = 4700;

    private BlackHole hole;
    private BlackHole secondHole;
    private ServerSocket silent;
    private ScriptedPeer broker;
    private ScriptedPeer good;
    private TestGateway gateway;

    @BeforeEach
    void start() throws IOException {
        hole = BlackHole.open();
        // never accept()ed: the kernel completes connects into its backlog, and nobody reads or answers
        silent = new ServerSocket();
        silent.bind(new InetSocketAddress("127.0.0.1", 0), 50);
        broker = ScriptedPeer.start(ScriptedPeer.Script.ECHO);
        good = ScriptedPeer.nameServer(broker.address());
    }

    @AfterEach
    void stop() throws IOException {
        if (gateway != null) {
            gateway.close();
        }
        good.close();
        broker.close();
        silent.close();
        hole.close();
        if (secondHole != null) {
            secondHole.close();
        }
    }

    private String silentAddress() {
        return "127.0.0.1:" + silent.getLocalPort();
    }

    private TestGateway startBehind(String... namesrv) throws InterruptedException {
        return TestGateway.builder().namesrv(namesrv).connectTimeout(CONNECT_TIMEOUT).requestTimeout(REQUEST_TIMEOUT)
            .start();
    }

    @Test
    void theGoodNameServerListedLastMakesTheGatewayReadyWithoutWaitingForTheOthers() throws Exception {
        long started = System.nanoTime();
        gateway = startBehind(hole.address(), silentAddress(), good.address());
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        // in turn it took at least 2 x ONE_NAME_SERVER; at once, about as long as the good one takes to answer
        assertTrue(took.compareTo(ONE_NAME_SERVER) < 0, "start-up took " + took.toMillis() + " ms");
        assertTrue(gateway.gateway().readiness().isReady(), gateway.gateway().readiness().notReadyReason());
        assertEquals(1, MeterReadings.of(gateway.metrics()).namesrvHealth(good.address()));

        // the listener bound from the good name server's cluster relays to its broker
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(RELAYED_AS_IS).opaque(41).bytes());
            Wire.Frame answer = client.read(RawClient.WAIT);
            assertEquals(41, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code(), answer.toString());
            assertEquals("echo " + RELAYED_AS_IS, answer.remark());
        }

        // the two that never answered are reported once their own timeout passed, after start-up returned
        TestGateway.await(() -> MeterReadings.of(gateway.metrics()).namesrvHealth(hole.address()) == 0
                && MeterReadings.of(gateway.metrics()).namesrvHealth(silentAddress()) == 0,
            ONE_NAME_SERVER.plus(RawClient.WAIT), "both silent name servers reported down");
    }

    @Test
    void aNameServerGivenByHostNameGivesTheClusterAtStart() throws Exception {
        String byName = "localhost:" + good.address().substring(good.address().lastIndexOf(':') + 1);
        gateway = startBehind(byName);
        assertTrue(gateway.gateway().readiness().isReady(), gateway.gateway().readiness().notReadyReason());
        assertEquals(1, MeterReadings.of(gateway.metrics()).namesrvHealth(byName));
        assertFalse(gateway.gateway().brokerListeners().isEmpty(), "a listener bound from the cluster at start");
    }

    @Test
    void withNoNameServerAnsweringStartUpWaitsOneTimeoutInAllAndStartsNotReady() throws Exception {
        secondHole = BlackHole.open();
        long started = System.nanoTime();
        gateway = startBehind(hole.address(), silentAddress(), secondHole.address());
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        // in turn it took at least 3 x ONE_NAME_SERVER
        assertTrue(took.compareTo(ONE_NAME_SERVER.multipliedBy(2)) < 0, "start-up took " + took.toMillis() + " ms");
        assertFalse(gateway.gateway().readiness().isReady());
        assertEquals("no upstream name server answered yet", gateway.gateway().readiness().notReadyReason());
        for (String address : new String[] {hole.address(), silentAddress(), secondHole.address()}) {
            assertEquals(0, MeterReadings.of(gateway.metrics()).namesrvHealth(address), address + " reported down before start returned");
        }
        assertTrue(gateway.gateway().brokerListeners().isEmpty(), gateway.gateway().brokerListeners().toString());
    }
}
