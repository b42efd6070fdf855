package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.UpstreamTlsConfig;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.GatewayClients;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.TestCerts;
import io.rmqgw.testing.TestCerts.Cert;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code upstream.tls} against a real 5.4.0 name server and broker that speak TLS only
 * ({@code tls.server.mode=enforcing}, in a JVM of their own, with a committed self-signed certificate):
 * plain clients produce and consume through the gateway (relayed connections over TLS), and a fan-out
 * batch reaches both destinations (the gateway's pooled connections, and its route queries, over TLS).
 * The gateway trusts exactly that certificate ({@code trust-cert}); a gateway trusting another one
 * cannot reach the cluster.
 */
@ExtendWith(SharedClusterExtension.class)
class UpstreamTlsIT {

    @RegisterExtension
    static final Closer CLOSER = Closer.allTests();
    static ForkedBroker broker;
    static GatewayFixture gateway;
    static GatewayFixture distrusting;
    /** upstream.tls without trust-cert: any server certificate, as RocketMQ clients by default. */
    static GatewayFixture trustingAny;
    static SharedCluster shared;

    @BeforeAll
    static void setUp(SharedCluster cluster) throws Exception {
        shared = cluster;
        Path dir = cluster.dir().resolve("upstream-tls");
        Path cert = dir.resolve("broker.crt");
        Path key = dir.resolve("broker.key");
        Path other = dir.resolve("other.crt");
        TestCerts.write(Cert.A, cert, key);
        TestCerts.write(Cert.B, other, dir.resolve("other.key"));
        // RocketMQ servers read these at start; tls.enable makes the broker's own client (registration) TLS too
        broker = CLOSER.add(ForkedBroker.create(dir.resolve("broker"), null, "ItTlsCluster", "it-tls-a")
            .systemProperty("tls.server.mode", "enforcing")
            .systemProperty("tls.enable", "true")
            .systemProperty("tls.test.mode.enable", "false")
            .systemProperty("tls.server.need.client.auth", "none")
            .systemProperty("tls.server.certPath", cert.toString())
            .systemProperty("tls.server.keyPath", key.toString())
            .start());
        System.err.println("[it] " + broker + " (TLS enforcing) started in " + broker.lastStartTime().toMillis() + " ms");
        gateway = CLOSER.add(GatewayFixture.startWith(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ, c -> c
            .withUpstream(c.upstream().withTls(new UpstreamTlsConfig(true, cert.toString())))
            .withFanout(new FanoutConfig(true, null, null, null, null, null))));
        distrusting = CLOSER.add(GatewayFixture.startWith(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ, c -> c
            .withUpstream(c.upstream().withTls(new UpstreamTlsConfig(true, other.toString())))));
        trustingAny = CLOSER.add(GatewayFixture.startWith(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ, c -> c
            .withUpstream(c.upstream().withTls(new UpstreamTlsConfig(true, null)))));
    }

    @Test
    void plainClientsAndFanOutReachATlsOnlyClusterThroughTheGateway() throws Exception {
        String a = shared.topic("utls_a");
        String b = shared.topic("utls_b");
        DefaultMQProducer producer = GatewayClients.producer(shared, gateway, "utls");
        try {
            // direct sends first: they create the topics (auto-create) over relayed TLS connections
            for (String topic : List.of(a, b)) {
                SendResult r = producer.send(new Message(topic, "t", topic + "-direct", new byte[] {1}));
                assertEquals(SendStatus.SEND_OK, r.getSendStatus(), r::toString);
                Admin.awaitRoute(gateway.namesrvAddress(), topic, broker.brokerName(), Duration.ofSeconds(15));
            }
            List<Message> batch = new ArrayList<>();
            String[] destinations = {a, b, a + "," + b};
            for (int i = 0; i < destinations.length; i++) {
                Message m = new Message(FanoutConfig.DEFAULT_TOPIC, "t", "fan-" + i,
                    ("fan " + i).getBytes(StandardCharsets.UTF_8));
                m.putUserProperty(FanoutConfig.DEFAULT_DESTINATION_PROPERTY, destinations[i]);
                batch.add(m);
            }
            SendResult fanned = producer.send(batch);
            assertEquals(SendStatus.SEND_OK, fanned.getSendStatus(), fanned::toString);
        } finally {
            producer.shutdown();
        }
        Duration wait = Duration.ofSeconds(30);
        assertEquals(Set.of(a + "-direct", "fan-0", "fan-2"),
            GatewayClients.receive(shared, gateway, a, 3, wait).keySet());
        assertEquals(Set.of(b + "-direct", "fan-1", "fan-2"),
            GatewayClients.receive(shared, gateway, b, 3, wait).keySet());
        assertTrue(MeterReadings.of(gateway.metrics()).fanoutRequests("success") >= 1, "the fan-out went over the pool");
    }

    @Test
    void theClusterRefusesPlainTcp() {
        // what makes the test above mean something: without upstream.tls nothing would get through
        for (String address : List.of(broker.namesrvAddress(), broker.brokerAddress())) {
            assertThrows(java.io.IOException.class, () -> Admin.invoke(address,
                org.apache.rocketmq.remoting.protocol.RemotingCommand.createRequestCommand(
                    org.apache.rocketmq.remoting.protocol.RequestCode.GET_BROKER_CLUSTER_INFO, null),
                Duration.ofSeconds(5)), address + " answered plain TCP");
        }
    }

    @Test
    void withoutTrustCertAnyServerCertificateIsAccepted() throws Exception {
        var answer = clusterInfo(trustingAny);
        assertEquals(0, answer.getCode(), answer::getRemark);
        assertTrue(new String(answer.getBody(), StandardCharsets.UTF_8).contains(broker.brokerName()),
            "the cluster as the TLS-only name server describes it");
    }

    @Test
    void aGatewayTrustingAnotherCertificateCannotReachTheCluster() throws Exception {
        var answer = clusterInfo(distrusting);
        System.err.println("[it] distrusting gateway answered: code " + answer.getCode() + " " + answer.getRemark());
        assertTrue(answer.getCode() != 0, "refused, not answered");
        assertTrue(String.valueOf(answer.getRemark()).contains("TLS handshake with " + broker.namesrvAddress()
            + " failed"), answer::getRemark);
    }

    /** What {@code via}'s name-server port answers GET_BROKER_CLUSTER_INFO. */
    private static org.apache.rocketmq.remoting.protocol.RemotingCommand clusterInfo(GatewayFixture via)
        throws Exception {
        return Admin.invoke(via.namesrvAddress(), org.apache.rocketmq.remoting.protocol.RemotingCommand
            .createRequestCommand(org.apache.rocketmq.remoting.protocol.RequestCode.GET_BROKER_CLUSTER_INFO, null),
            Duration.ofSeconds(10));
    }
}
