package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.BlackHole;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.Wire;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Name servers whose connects never complete (accept queues full): what the gateway answers alone (the fan-out
 * topic's route) is answered on a fresh connection without waiting for the dial it does not need; what needs a
 * name server gets SYSTEM_ERROR naming each one once its connect timed out.
 */
class BlackHoledNameServerTest {

    private static final String FANOUT = FanoutConfig.DEFAULT_TOPIC;
    /** Far past every read bound below: an answer held by the dial would come too late for them. */
    private static final Duration LONG_CONNECT = Duration.ofSeconds(30);

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private BlackHole hole;
    private BlackHole secondHole;
    private TestGateway gateway;

    private TestGateway gatewayBehind(Duration connectTimeout, String... namesrv) throws Exception {
        // the holes still hang up here: the start-up discovery fails at once
        TestGateway started = TestGateway.builder().namesrv(namesrv).connectTimeout(connectTimeout)
            .fanout(new FanoutConfig(true, null, null, null, null, null)).start();
        for (BlackHole h : new BlackHole[] {hole, secondHole}) {
            if (h != null) {
                h.fill();
            }
        }
        return started;
    }

    @Test
    void theFanoutRouteOnAFreshConnectionIsAnsweredWithoutWaitingForTheNameServer() throws Exception {
        hole = resources.add(BlackHole.listen());
        gateway = resources.add(gatewayBehind(LONG_CONNECT, hole.address()));
        String fanoutBroker = gateway.gateway().fanout().listenerNow();

        try (RawClient client = RawClient.connect(gateway.port())) {
            // the first request of the connection: before the fix it waited for the name-server dial (30 s)
            client.send(Routes.request(FANOUT, 453).opaque(1).bytes());
            Wire.Frame answer = client.read(RawClient.WAIT);
            assertEquals(1, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code(), "remark: " + answer.remark());
            assertTrue(answer.bodyText().contains(fanoutBroker), answer.bodyText());

            client.send(Routes.request(FANOUT, 399).opaque(2).bytes());
            Wire.Frame again = client.read(RawClient.WAIT);
            assertEquals(2, again.opaque());
            assertEquals(Wire.SUCCESS, again.code());
        }
    }

    @Test
    void aRouteThatNeedsTheNameServerGetsItsErrorAfterTheConnectTimeoutAndDoesNotHoldBackTheFanoutRoute()
        throws Exception {
        hole = resources.add(BlackHole.listen());
        gateway = resources.add(gatewayBehind(Duration.ofSeconds(1), hole.address()));

        try (RawClient client = RawClient.connect(gateway.port())) {
            // pipelined in one write: the first needs the name server, the second does not
            ByteArrayOutputStream both = new ByteArrayOutputStream();
            both.write(Routes.request("TopicA", 453).opaque(11).bytes());
            both.write(Routes.request(FANOUT, 453).opaque(12).bytes());
            client.send(both.toByteArray());

            Wire.Frame first = client.read(RawClient.WAIT);
            assertEquals(12, first.opaque(), "the fan-out route is answered while TopicA's dial is under way");
            assertEquals(Wire.SUCCESS, first.code());

            // bounded by upstream.connect-timeout (1 s) per name server
            Wire.Frame second = client.read(RawClient.WAIT);
            assertEquals(11, second.opaque());
            assertEquals(Wire.SYSTEM_ERROR, second.code());
            assertTrue(second.remark().contains("name server " + hole.address() + " unreachable"), second.remark());
        }
    }

    @Test
    void everyBlackHoledNameServerIsTriedOnceThenTheErrorNamesEach() throws Exception {
        hole = resources.add(BlackHole.listen());
        secondHole = resources.add(BlackHole.listen());
        gateway = resources.add(gatewayBehind(Duration.ofSeconds(1), hole.address(), secondHole.address()));

        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicA", 453).opaque(21).bytes());
            // bounded by 2 x upstream.connect-timeout: each name server is dialed once, in turn
            Wire.Frame answer = client.read(RawClient.WAIT);
            assertEquals(21, answer.opaque());
            assertEquals(Wire.SYSTEM_ERROR, answer.code());
            assertTrue(answer.remark().contains(hole.address()) && answer.remark().contains(secondHole.address()),
                answer.remark());
        }
    }
}
