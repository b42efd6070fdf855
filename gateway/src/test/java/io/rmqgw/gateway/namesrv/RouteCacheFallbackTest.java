package io.rmqgw.gateway.namesrv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** With no name server reachable, routes answered before are served from the cache while fresh. */
class RouteCacheFallbackTest {

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private ScriptedPeer namesrv;
    private TestGateway gateway;

    private String start(Duration ttl) throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().noClusterInfo()
            .nameServer(brokers -> Routes.nameServer(Map.of("TopicCached", brokers)))
            .gateway(g -> g.routeTtl(ttl)).start(resources);
        broker = cluster.broker();
        namesrv = cluster.namesrv();
        gateway = cluster.gateway();

        String rewritten;
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicCached", 453).opaque(1).bytes());
            Wire.Frame answer = client.read();
            assertEquals(Wire.SUCCESS, answer.code());
            rewritten = answer.bodyText();
            assertTrue(rewritten.contains("127.0.0.1:" + gateway.brokerPort(broker.address())), rewritten);

            namesrv.close();
            // the session's upstream is gone: the gateway hangs up on this client
            client.assertClosedBy();
        }
        return rewritten;
    }

    @Test
    void cachedRouteIsServedWhileNoNameServerIsReachable() throws Exception {
        String rewritten = start(Duration.ofSeconds(60));

        for (SerializeType type : SerializeType.values()) {
            try (RawClient client = RawClient.connect(gateway.port())) {
                client.send(Routes.request("TopicCached", 453).opaque(40 + type.getCode()).type(type).bytes());
                Wire.Frame cached = client.read();
                assertTrue(cached.isResponse());
                assertEquals(40 + type.getCode(), cached.opaque());
                assertEquals(Wire.SUCCESS, cached.code());
                assertEquals(type.getCode(), cached.serializeTypeByte(), "answered in the request's encoding");
                assertEquals(rewritten, cached.bodyText(), "the rewritten route, as first answered");

                // the same connection stays usable for another cached route
                client.send(Routes.request("TopicCached", 460).opaque(50).type(type).bytes());
                assertEquals(rewritten, client.read().bodyText());
            }
        }
        assertEquals(4.0, servedFromCache());

        // the route still leads to a working broker listener
        try (RawClient toBroker = RawClient.connect(gateway.brokerPort(broker.address()))) {
            toBroker.send(Wire.request(34).opaque(3).bytes());
            assertEquals("echo 34", toBroker.read().remark());
        }
    }

    @Test
    void topicNeverSeenGetsSystemErrorNamingTheNameServers() throws Exception {
        start(Duration.ofSeconds(60));
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Routes.request("TopicNeverSeen", 453).opaque(8).bytes());
            Wire.Frame error = client.read();
            assertEquals(8, error.opaque());
            assertEquals(Wire.SYSTEM_ERROR, error.code());
            assertTrue(error.remark().contains(namesrv.address()), "remark names the name server: " + error.remark());
            client.send(Routes.request("TopicNeverSeen", 453).opaque(9).bytes());
            Wire.Frame again = client.read();
            assertEquals(9, again.opaque(), "the connection stays open and keeps answering");
            assertEquals(Wire.SYSTEM_ERROR, again.code());
        }
    }

    @Test
    void routeCachedInOneDialectIsNotServedInTheOther() throws Exception {
        start(Duration.ofSeconds(60));
        try (RawClient client = RawClient.connect(gateway.port())) {
            // an old client could not parse the standard-JSON body that is cached
            client.send(Routes.request("TopicCached", 317).opaque(9).bytes());
            Wire.Frame error = client.read();
            assertEquals(9, error.opaque());
            assertEquals(Wire.SYSTEM_ERROR, error.code());
        }
    }

    @Test
    void expiredRouteIsNoLongerServed() throws Exception {
        start(Duration.ofMillis(300));
        long cachedAt = System.nanoTime();
        // poll with fresh connections until the entry expires; bounded
        int lastCode = -1;
        for (int attempt = 0; attempt < 100 && lastCode != Wire.SYSTEM_ERROR; attempt++) {
            try (RawClient client = RawClient.connect(gateway.port())) {
                client.send(Routes.request("TopicCached", 453).opaque(attempt).bytes());
                lastCode = client.read().code();
            }
            if (lastCode != Wire.SYSTEM_ERROR) {
                assertTrue(System.nanoTime() - cachedAt < Duration.ofSeconds(5).toNanos(), "still served after 5 s");
                Thread.sleep(50);
            }
        }
        assertEquals(Wire.SYSTEM_ERROR, lastCode);
        assertTrue(System.nanoTime() - cachedAt >= Duration.ofMillis(300).toNanos() - Duration.ofMillis(50).toNanos());
    }

    private double servedFromCache() {
        Counter c = gateway.metrics().registry().find("rmqgw.route.cache.served").counter();
        return c == null ? 0 : c.count();
    }
}
