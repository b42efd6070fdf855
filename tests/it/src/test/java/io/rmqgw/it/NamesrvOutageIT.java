package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.embedded.EmbeddedCluster;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.RouteCacheConfig;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.DeliveryLedger;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.testing.FreePorts;
import io.rmqgw.testing.RawRemoting;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The only name server goes away under load (issue 14, faults) and comes back on its port: the gateway serves
 * route requests from its cache while the routes are younger than {@code routes.ttl}, then answers them with
 * SYSTEM_ERROR naming the name server; the broker stays up, so a producer and a consumer that hold the route
 * keep working through the whole outage, and no acknowledged send is lost.
 *
 * <p>The outage lasts {@code rmqgw.it.namesrvOutageSeconds} (10 s by default; the 30 s with
 * {@code -Drmqgw.it.namesrvOutageSeconds=30}) and the route cache lives half of it.
 */
@ExtendWith(SharedClusterExtension.class)
class NamesrvOutageIT {

    private static final Duration OUTAGE = Duration.ofSeconds(Long.getLong("rmqgw.it.namesrvOutageSeconds", 10));
    private static final Duration TTL = OUTAGE.dividedBy(2);

    /** One route request to the gateway on a new connection: when (since the outage began), code, remark. */
    private record Probe(long atMillis, int code, String remark) {
    }

    @Test
    void cachedRoutesServeUntilStaleThenClearErrorsAndNoAcknowledgedSendIsLost(SharedCluster shared) throws Exception {
        Path dir = shared.dir().resolve("namesrv-outage");
        int namesrvPort = FreePorts.port();
        String namesrv = "127.0.0.1:" + namesrvPort;
        String topic = shared.topic("ns_outage");
        DeliveryLedger ledger = new DeliveryLedger();
        NamesrvController nameServer = EmbeddedCluster.startNameServer(dir.resolve("namesrv"), namesrvPort);
        Properties brokerSettings = new Properties();
        // the shortest a broker allows: it registers again this soon after the name server is back
        brokerSettings.setProperty("registerNameServerPeriod", "10000");
        try (ForkedBroker broker = ForkedBroker.create(dir.resolve("broker"), namesrv, "ItNsOutageCluster",
                "it-ns-outage-a", brokerSettings).start();
             GatewayFixture gateway = GatewayFixture.startWith(namesrv, HeaderEncoding.ROCKETMQ,
                 c -> c.withRoutes(new RouteCacheConfig(TTL)))) {
            Admin.createTopic(broker.brokerAddress(), topic, 4);
            Admin.awaitRoute(gateway.namesrvAddress(), topic, broker.brokerName(), Duration.ofSeconds(30));
            try (FaultLoad load = FaultLoad.start(gateway.namesrvAddress(), topic, shared.group("ns_outage"), 1, 20,
                Duration.ofSeconds(3), 2, ledger)) {
                load.awaitMoreAcknowledged(100, Duration.ofSeconds(30));
                Probe before = probe(gateway.listenPort(), topic, System.nanoTime());
                assertEquals(ResponseCode.SUCCESS, before.code(), before::toString);

                int acknowledgedAtStop = load.acknowledged();
                int failedAtStop = load.failed();
                // the name server may still answer during its shutdown (a second or so): the last answer the gateway
                // cached came between these two instants, and probe times count from the second
                long stopping = System.nanoTime();
                nameServer.shutdown();
                long down = System.nanoTime();
                long shutdownMillis = TimeUnit.NANOSECONDS.toMillis(down - stopping);
                List<Probe> probes = new ArrayList<>();
                while (System.nanoTime() - down < OUTAGE.toNanos()) {
                    probes.add(probe(gateway.listenPort(), topic, down));
                    TimeUnit.MILLISECONDS.sleep(500);
                }
                int acknowledgedInOutage = load.acknowledged() - acknowledgedAtStop;
                int failedInOutage = load.failed() - failedAtStop;
                nameServer = startAgain(dir.resolve("namesrv"), namesrvPort);
                long up = System.nanoTime();
                Probe back = awaitRoute(gateway.listenPort(), topic, up, Duration.ofSeconds(40));
                load.awaitMoreAcknowledged(100, Duration.ofSeconds(30));
                load.stopSending();
                load.awaitNothingMissing(Duration.ofSeconds(60));

                long cacheServed = probes.stream().filter(p -> p.code() == ResponseCode.SUCCESS).count();
                long errors = probes.stream().filter(p -> p.code() == ResponseCode.SYSTEM_ERROR).count();
                long firstError = probes.stream().filter(p -> p.code() != ResponseCode.SUCCESS)
                    .mapToLong(Probe::atMillis).min().orElse(-1);
                System.err.println("[it] FAULT namesrv-down " + OUTAGE.toSeconds() + " s (routes.ttl " + TTL.toSeconds()
                    + " s; its shutdown took " + shutdownMillis + " ms): route requests " + probes.size() + ", " + cacheServed + " served from the cache, " + errors
                    + " SYSTEM_ERROR, first error " + firstError + " ms into the outage; sends acknowledged during it "
                    + acknowledgedInOutage + ", failed " + failedInOutage + "; route again " + back.atMillis()
                    + " ms after the restart; in all acknowledged " + ledger.sentCount() + ", failed " + load.failed()
                    + ", lost " + ledger.missing().size() + ", duplicates " + ledger.duplicates() + ", failed but stored "
                    + ledger.receivedUnacknowledged().size());
                probes.forEach(p -> System.err.println("[it]   " + p));

                // a route cached at most shutdownMillis before `down` is fresh until TTL - shutdownMillis; one cached
                // before `down` is stale after TTL
                long freshMillis = TTL.toMillis() - shutdownMillis;
                for (Probe p : probes) {
                    if (p.atMillis() + 300 < freshMillis) {
                        assertEquals(ResponseCode.SUCCESS, p.code(), () -> "not served from the cache while fresh: " + p);
                    }
                    if (p.atMillis() > TTL.toMillis() + 500) {
                        assertEquals(ResponseCode.SYSTEM_ERROR, p.code(), () -> "stale route not refused: " + p);
                        assertTrue(p.remark().contains(namesrv), () -> "the error does not name the name server: " + p);
                    }
                }
                assertTrue(cacheServed > 0 && errors > 0, "both answers seen");
                assertTrue(acknowledgedInOutage > 0, "no send acknowledged while the name server was down");
                assertEquals(0, failedInOutage, () -> "sends failed while the name server was down: " + load.failures());
                assertEquals(Set.of(), ledger.missing(), "acknowledged sends never received");
            }
        } finally {
            nameServer.shutdown();
        }
    }

    /** Starts the name server again on its port (the old socket may linger for a moment). */
    static NamesrvController startAgain(Path dir, int port) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return EmbeddedCluster.startNameServer(dir, port);
            } catch (Exception e) {
                if (attempt == 20) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(250);
            }
        }
    }

    private static Probe awaitRoute(int gatewayPort, String topic, long since, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Probe p = probe(gatewayPort, topic, since);
            if (p.code() == ResponseCode.SUCCESS || System.nanoTime() - deadline > 0) {
                assertEquals(ResponseCode.SUCCESS, p.code(), () -> "no route once the name server was back: " + p);
                return p;
            }
            TimeUnit.MILLISECONDS.sleep(500);
        }
    }

    private static Probe probe(int gatewayPort, String topic, long since) throws Exception {
        GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
        h.setTopic(topic);
        RemotingCommand request = RemotingCommand.createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, h);
        try (RawRemoting raw = RawRemoting.connect(gatewayPort, Duration.ofSeconds(10))) {
            RawRemoting.Answer a = raw.invoke(request, SerializeType.JSON);
            long at = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
            if (a.code() == ResponseCode.SUCCESS) {
                byte[] body = a.command().getBody();
                assertFalse(body == null || body.length == 0, "a route answer without a body");
                assertTrue(new String(body, StandardCharsets.UTF_8).contains("brokerDatas"),
                    () -> "not a route: " + new String(body, StandardCharsets.UTF_8));
            }
            return new Probe(at, a.code(), a.remark());
        }
    }
}
