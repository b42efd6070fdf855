package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.UpstreamTlsConfig;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.ForkedGateway;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.GatewayClients;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.TestCerts;
import io.rmqgw.testing.TestCerts.Cert;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code upstream.tls.cert-file} / {@code key-file} against a real 5.4.0 name server and broker (own JVM) that speak
 * TLS only and require a client certificate they trust ({@code tls.server.need.client.auth=require},
 * {@code tls.server.authClient=true}; they trust certificate A, their own registration's, and B, the gateway's):
 * through a gateway presenting B, plain clients produce and consume; a gateway presenting none is refused by the
 * servers, and says why in its log and in the answer its client gets.
 */
@ExtendWith(SharedClusterExtension.class)
class UpstreamClientCertIT {

    @RegisterExtension
    static final Closer CLOSER = Closer.allTests();
    static ForkedBroker broker;
    static GatewayFixture presenting;
    static ForkedGateway withoutCertificate;
    static SharedCluster shared;

    @BeforeAll
    static void setUp(SharedCluster cluster) throws Exception {
        shared = cluster;
        Path dir = cluster.dir().resolve("upstream-client-cert");
        Path serverCert = dir.resolve("broker.crt");
        Path serverKey = dir.resolve("broker.key");
        Path gatewayCert = dir.resolve("gateway.crt");
        Path gatewayKey = dir.resolve("gateway.key");
        TestCerts.write(Cert.A, serverCert, serverKey);
        TestCerts.write(Cert.B, gatewayCert, gatewayKey);
        Path trustedClients = dir.resolve("trusted-clients.pem");
        Files.writeString(trustedClients, Files.readString(serverCert) + Files.readString(gatewayCert));
        broker = CLOSER.add(ForkedBroker.create(dir.resolve("broker"), null, "ItClientCertCluster", "it-client-cert-a")
            .systemProperty("tls.server.mode", "enforcing")
            .systemProperty("tls.enable", "true")
            .systemProperty("tls.test.mode.enable", "false")
            .systemProperty("tls.server.need.client.auth", "require")
            .systemProperty("tls.server.authClient", "true")
            .systemProperty("tls.server.trustCertPath", trustedClients.toString())
            .systemProperty("tls.server.certPath", serverCert.toString())
            .systemProperty("tls.server.keyPath", serverKey.toString())
            // the broker's own registration with its name server presents A
            .systemProperty("tls.client.certPath", serverCert.toString())
            .systemProperty("tls.client.keyPath", serverKey.toString())
            .start());
        System.err.println("[it] " + broker + " (TLS, client certificates required) started in "
            + broker.lastStartTime().toMillis() + " ms");
        UpstreamTlsConfig tls = new UpstreamTlsConfig(true, serverCert.toString())
            .withClientCertificate(gatewayCert.toString(), gatewayKey.toString());
        presenting = CLOSER.add(GatewayFixture.startWith(broker.namesrvAddress(), HeaderEncoding.ROCKETMQ,
            c -> c.withUpstream(c.upstream().withTls(tls))));
        withoutCertificate = CLOSER.add(ForkedGateway.startWithUpstream(dir.resolve("gateway-without"),
            broker.namesrvAddress(), "  tls:\n    enabled: true\n    trust-cert: " + serverCert + "\n"));
    }

    @Test
    void withTheClientCertificateTrafficFlows() throws Exception {
        String topic = shared.topic("client_cert");
        Set<String> sent = new TreeSet<>();
        DefaultMQProducer producer = GatewayClients.producer(shared, presenting, "client_cert");
        try {
            for (int i = 0; i < 5; i++) {
                String key = "cc-" + i;
                SendResult r = producer.send(new Message(topic, "t", key, new byte[] {(byte) i}));
                assertEquals(SendStatus.SEND_OK, r.getSendStatus(), r::toString);
                sent.add(key);
            }
        } finally {
            producer.shutdown();
        }
        assertEquals(sent, new TreeSet<>(GatewayClients.receive(shared, presenting, topic, 5, Duration.ofSeconds(30))
            .keySet()));
        RemotingCommand info = clusterInfo(presenting.namesrvAddress());
        assertEquals(0, info.getCode(), info::getRemark);
    }

    @Test
    void withoutOneTheServersRefuseTheGatewayWhichSaysWhy() throws Exception {
        RemotingCommand answer = clusterInfo(withoutCertificate.namesrvAddress());
        System.err.println("[it] gateway without a client certificate answered: code " + answer.getCode() + " "
            + answer.getRemark());
        assertTrue(answer.getCode() != 0, "refused, not answered");
        assertTrue(String.valueOf(answer.getRemark()).contains("certificate"), answer::getRemark);
        // the reason is in the gateway's log too (WARN), naming the server and the alert
        String log = "";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline && !log.contains("certificate")) {
            log = withoutCertificate.log();
            TimeUnit.MILLISECONDS.sleep(100);
        }
        String warned = log.lines().filter(l -> l.contains("WARN") && l.contains(broker.namesrvAddress())
            && l.contains("certificate")).findFirst().orElse(null);
        System.err.println("[it] gateway log: " + warned);
        assertTrue(warned != null, log);
    }

    private static RemotingCommand clusterInfo(String namesrv) throws Exception {
        return Admin.invoke(namesrv, RemotingCommand.createRequestCommand(RequestCode.GET_BROKER_CLUSTER_INFO, null),
            Duration.ofSeconds(10));
    }
}
