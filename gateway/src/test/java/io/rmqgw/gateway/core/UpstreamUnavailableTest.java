package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.metrics.GatewayMetrics.UpstreamFailure;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * No name server reachable (dead, or named by a host name that does not resolve): the gateway answers in the client's
 * own encoding, then hangs up; failover finds a live one.
 */
class UpstreamUnavailableTest {

    private static final int GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206;
    /** Bounds a silent DNS server (resolver query timeout, 5 s by default, and its retries); a hang would pass it. */
    private static final Duration RESOLVE_BOUND = Duration.ofSeconds(30);

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private TestGateway gateway;
    private ScriptedPeer namesrv;

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void unreachableNameServerIsAnsweredWithSystemErrorInTheRequestsEncodingAndRetriesAreAnsweredToo(SerializeType type)
        throws Exception {
        int dead = TestGateway.deadPort();
        gateway = resources.add(TestGateway.builder().namesrv("127.0.0.1:" + dead).start());

        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(4711).type(type).bytes());
            Wire.Frame answer = client.read();

            assertEquals(type.getCode(), answer.serializeTypeByte(), "answer encoded as the request was");
            assertTrue(answer.isResponse(), "response flag set: " + answer);
            assertEquals(4711, answer.opaque());
            assertEquals(Wire.SYSTEM_ERROR, answer.code());
            assertNotNull(answer.remark());
            assertTrue(answer.remark().contains("127.0.0.1:" + dead), "remark names the upstream: " + answer.remark());
            // a client retries on the same connection at once: the retry is answered, not lost to a close
            client.send(Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(4712).type(type).bytes());
            Wire.Frame retry = client.read();
            assertEquals(4712, retry.opaque());
            assertEquals(Wire.SYSTEM_ERROR, retry.code());
        }
        assertTrue(MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.CONNECT_FAILED) >= 1);
    }

    @Test
    void routeRequestWithNothingCachedIsAnsweredWithSystemErrorNamingEveryNameServer() throws Exception {
        int dead1 = TestGateway.deadPort();
        int dead2 = TestGateway.deadPort();
        gateway = resources.add(TestGateway.builder().namesrv("127.0.0.1:" + dead1, "127.0.0.1:" + dead2).start());

        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(105).opaque(12).ext("topic", "TopicNeverSeen").bytes());
            Wire.Frame answer = client.read();
            assertEquals(12, answer.opaque());
            assertEquals(Wire.SYSTEM_ERROR, answer.code());
            assertTrue(answer.remark().contains("127.0.0.1:" + dead1) && answer.remark().contains("127.0.0.1:" + dead2),
                "remark names both name servers: " + answer.remark());
            client.send(Wire.request(105).opaque(13).ext("topic", "TopicNeverSeen").bytes());
            assertEquals(13, client.read().opaque(), "the connection stays open and keeps answering");
        }
    }

    @Test
    void onewayRequestWithoutUpstreamIsNotAnsweredAndTheConnectionCloses() throws Exception {
        gateway = resources.add(TestGateway.builder().namesrv("127.0.0.1:" + TestGateway.deadPort()).start());
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(5).oneway().bytes());
            client.assertClosedBy();
        }
    }

    @Test
    void failsOverWhenTheNameServerInUseDies() throws Exception {
        ScriptedPeer first = ScriptedPeer.start(ScriptedPeer.Script.ECHO);
        namesrv = resources.add(ScriptedPeer.start(ScriptedPeer.Script.ECHO));
        try {
            gateway = resources.add(TestGateway.builder().namesrv(first.address(), namesrv.address()).start());
            try (RawClient client = RawClient.connect(gateway.port())) {
                client.send(Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(1).bytes());
                assertEquals(1, first.awaitFrame(RawClient.WAIT).frame().opaque());
                assertEquals(Wire.SUCCESS, client.read().code());
                first.close();
                client.assertClosedBy();
            }
            try (RawClient client = RawClient.connect(gateway.port())) {
                client.send(Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(2).bytes());
                assertEquals(2, namesrv.awaitFrame(RawClient.WAIT).frame().opaque(), "the second name server took over");
                Wire.Frame answer = client.read();
                assertEquals(2, answer.opaque());
                assertEquals(Wire.SUCCESS, answer.code());
            }
        } finally {
            first.close();
        }
    }

    @Test
    void failsOverToTheNextNameServerWhenTheFirstIsDead() throws Exception {
        namesrv = resources.add(ScriptedPeer.start(ScriptedPeer.Script.ECHO));
        int dead = TestGateway.deadPort();
        gateway = resources.add(TestGateway.builder().namesrv("127.0.0.1:" + dead, namesrv.address()).start());

        for (int round = 0; round < 2; round++) {
            try (RawClient client = RawClient.connect(gateway.port())) {
                byte[] request = Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(100 + round).bytes();
                client.send(request);
                ScriptedPeer.Received got = namesrv.awaitFrame(RawClient.WAIT);
                assertArrayEquals(request, got.frame().bytes(), "the live name server got the request unchanged");

                Wire.Frame answer = client.read();
                assertEquals(100 + round, answer.opaque());
                assertEquals(Wire.SUCCESS, answer.code());
                assertEquals("echo " + GET_ALL_TOPIC_LIST_FROM_NAMESERVER, answer.remark());
            }
        }
    }

    @Test
    void aNameServerNamedLocalhostIsResolvedWhenDialedAndServesRequests() throws Exception {
        // resolved by the dialer's non-blocking resolver, which reads the hosts file before asking DNS
        namesrv = resources.add(ScriptedPeer.start(ScriptedPeer.Script.ECHO));
        gateway = resources.add(TestGateway.builder().namesrv("localhost:" + namesrv.port()).start());

        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(31).bytes());
            assertEquals(31, namesrv.awaitFrame(RawClient.WAIT).frame().opaque(), "the request reached localhost");
            Wire.Frame answer = client.read();
            assertEquals(31, answer.opaque());
            assertEquals(Wire.SUCCESS, answer.code(), "remark: " + answer.remark());
        }
        assertEquals(0, MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.CONNECT_FAILED));
    }

    @Test
    void aNameServerNameThatDoesNotResolveIsAnsweredAsUnreachableSayingSo() throws Exception {
        String unresolvable = "no-such-host.invalid:9876";
        gateway = resources.add(TestGateway.builder().namesrv(unresolvable).start());

        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(GET_ALL_TOPIC_LIST_FROM_NAMESERVER).opaque(32).bytes());
            Wire.Frame answer = client.read(RESOLVE_BOUND);
            assertEquals(32, answer.opaque());
            assertEquals(Wire.SYSTEM_ERROR, answer.code());
            // "name server no-such-host.invalid:9876 unreachable: Failed to resolve 'no-such-host.invalid'
            // [A(1), AAAA(28)] after 2 queries"; a silent DNS server gives the same words after its query timeout
            assertTrue(answer.remark().contains("name server " + unresolvable + " unreachable"), answer.remark());
            assertTrue(answer.remark().contains("Failed to resolve 'no-such-host.invalid'"), answer.remark());
        }
        assertTrue(MeterReadings.of(gateway.metrics()).upstreamFailures(UpstreamFailure.CONNECT_FAILED) >= 1);
    }
}
