package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.embedded.EmbeddedCluster;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.routing.NamesrvAddresses;
import io.rmqgw.testing.BlackHole;
import io.rmqgw.testing.FreePorts;
import io.rmqgw.testing.RawRemoting;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real name server listed after one whose connects never complete (a black hole on loopback): the client request
 * whose dial met the black hole first waits {@code upstream.connect-timeout}, later ones do not, also when the real
 * one was down for a moment (the cursor wraps onto the black hole then), for a client that connects while the first
 * dial still hangs, and after a client that gave up and closed before its dial timed out. Each route request goes on
 * a new client connection, so each is dialed afresh.
 */
@Timeout(120)
class NamesrvFailoverIT {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** A topic nobody created: the real name server answers TOPIC_NOT_EXIST, which no gateway makes up. */
    private static final String TOPIC = "NamesrvFailoverItNoSuchTopic";

    @TempDir
    Path dir;
    private BlackHole hole;
    private int namesrvPort;
    private NamesrvController nameServer;
    private GatewayFixture gateway;

    /** One route request on its own client connection: its answer and how long it took. */
    private record Probe(long millis, int code, String remark) {
    }

    @BeforeEach
    void start() throws Exception {
        hole = BlackHole.listen();
        namesrvPort = FreePorts.port();
        nameServer = EmbeddedCluster.startNameServer(dir.resolve("namesrv"), namesrvPort);
        String real = "127.0.0.1:" + namesrvPort;
        List<HostPort> namesrv = List.of(HostPort.parse("upstream.namesrv", hole.address()),
            HostPort.parse("upstream.namesrv", real));
        gateway = GatewayFixture.startWith(real, HeaderEncoding.ROCKETMQ,
            c -> c.withUpstream(new UpstreamConfig(namesrv, CONNECT_TIMEOUT, null, null, HeaderEncoding.ROCKETMQ)));
        // until now it hung up at once, so the start-up discovery did not wait for it
        hole.fill();
    }

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (nameServer != null) {
            nameServer.shutdown();
        }
        hole.close();
    }

    @Test
    void aNameServerThatFailedIsNotDialedFirstAgainEvenWhenTheCursorWrapsOntoIt() throws Exception {
        Probe first = probe();
        assertAnsweredByTheNameServer(first);
        assertTrue(first.millis() >= CONNECT_TIMEOUT.toMillis() - 500,
            "the first dial went to the black hole and waited for its connect timeout: " + first);

        Probe second = probe();
        assertAnsweredByTheNameServer(second);
        assertTrue(second.millis() < CONNECT_TIMEOUT.toMillis(), "paid the connect timeout again: " + second);

        // the real one goes away: its refusal moves the cursor on, wrapping onto the black hole, dialed next
        nameServer.shutdown();
        nameServer = null;
        Probe down = probe();
        assertEquals(ResponseCode.SYSTEM_ERROR, down.code(), down::toString);
        assertTrue(down.remark().contains("127.0.0.1:" + namesrvPort) && down.remark().contains(hole.address()),
            down::toString);

        nameServer = NamesrvOutageIT.startAgain(dir.resolve("namesrv"), namesrvPort);
        // the cursor stands on the black hole now; it failed after the real one did, so the real one goes first
        Probe back = probe();
        assertAnsweredByTheNameServer(back);
        assertTrue(back.millis() < CONNECT_TIMEOUT.toMillis(), "paid the connect timeout again: " + back);
    }

    @Test
    void aClientArrivingWhileTheFirstDialHangsGoesToTheOtherNameServer() throws Exception {
        try (RawRemoting hanging = RawRemoting.connect(gateway.listenPort(), CONNECT_TIMEOUT.multipliedBy(3))) {
            RemotingCommand request = routeRequest();
            hanging.write(RawRemoting.frame(request, SerializeType.JSON));
            // past the point where a dial that has not connected makes new dials try the others first
            TimeUnit.MILLISECONDS.sleep(NamesrvAddresses.SLOW_DIAL.toMillis() + 300);

            Probe meanwhile = probe();
            assertAnsweredByTheNameServer(meanwhile);
            assertTrue(meanwhile.millis() < CONNECT_TIMEOUT.toMillis(),
                "dialed the black hole too and waited for it: " + meanwhile);

            // the first one still gets its answer, from the real name server once its black-hole dial timed out
            RawRemoting.Answer late = hanging.readFrame();
            assertEquals(request.getOpaque(), late.command().getOpaque());
            assertEquals(ResponseCode.TOPIC_NOT_EXIST, late.code(), late::toString);
        }
    }

    @Test
    void aClientThatGaveUpBeforeTheDialTimedOutStillLeavesTheFailureForTheNext() throws Exception {
        // a RocketMQ client gives up on a route request after 3 s, as long as the default connect timeout, and closes
        try (RawRemoting impatient = RawRemoting.connect(gateway.listenPort(), CONNECT_TIMEOUT)) {
            impatient.write(RawRemoting.frame(routeRequest(), SerializeType.JSON));
        }
        // until the gateway's dial to the black hole timed out (no metric tells: start-up already reported it down)
        TimeUnit.MILLISECONDS.sleep(CONNECT_TIMEOUT.toMillis() + 500);

        Probe next = probe();
        assertAnsweredByTheNameServer(next);
        assertTrue(next.millis() < CONNECT_TIMEOUT.toMillis(), "dialed the black hole first again: " + next);
    }

    private static void assertAnsweredByTheNameServer(Probe p) {
        assertEquals(ResponseCode.TOPIC_NOT_EXIST, p.code(), p::toString);
        assertTrue(p.remark() != null && p.remark().contains(TOPIC), p::toString);
    }

    private Probe probe() throws Exception {
        RemotingCommand request = routeRequest();
        long start = System.nanoTime();
        try (RawRemoting raw = RawRemoting.connect(gateway.listenPort(), CONNECT_TIMEOUT.multipliedBy(3))) {
            RawRemoting.Answer a = raw.invoke(request, SerializeType.JSON);
            return new Probe(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), a.code(), a.remark());
        }
    }

    private static RemotingCommand routeRequest() {
        GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
        h.setTopic(TOPIC);
        return RemotingCommand.createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, h);
    }
}
