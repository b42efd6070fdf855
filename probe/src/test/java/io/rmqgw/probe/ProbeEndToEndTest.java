package io.rmqgw.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rmqgw.embedded.EmbeddedCluster;
import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.config.AdminRequestsConfig;
import io.rmqgw.gateway.config.EmbeddedConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.PortRange;
import io.rmqgw.gateway.config.RouteCacheConfig;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rmqgw probe} for real: an in-process Apache RocketMQ 5.4.0 name server and broker, a real
 * gateway in front, and the probe's own clients pointed at the gateway. The broker takes about 20 s to
 * start; the probes themselves take a few seconds each.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 150)
class ProbeEndToEndTest {

    private static final String TOPIC = "rmqgw_probe_it";

    @TempDir
    static Path dir;

    private EmbeddedCluster cluster;
    private Gateway gateway;
    private GatewayMetrics metrics;

    @BeforeAll
    void start() throws Exception {
        int namesrvPort = freePort();
        int brokerPort = freeBrokerPort();
        cluster = EmbeddedCluster.start(dir.resolve("store"), namesrvPort, brokerPort, "ProbeCluster", "probe-broker");
        int listen = freePort();
        int block = freeBlock();
        metrics = GatewayMetrics.inMemory();
        GatewayConfig config = new GatewayConfig(new HostPort("127.0.0.1", listen), null, new PortRange(block, block + 2),
            new UpstreamConfig(List.of(HostPort.parse("namesrv", cluster.namesrvAddress())), null, null, null),
            new RouteCacheConfig(null), null, Duration.ofSeconds(1), EmbeddedConfig.DISABLED)
            // the probe deletes its group and retry topic: admin codes the gateway refuses unless the probe's
            // address is allowed
            .withAdminRequests(new AdminRequestsConfig(null, List.of("127.0.0.1"), null));
        gateway = Gateway.start(config, metrics);
    }

    @AfterAll
    void stop() {
        if (gateway != null) {
            gateway.close(Duration.ZERO);
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private String gatewayAddress() {
        InetSocketAddress a = gateway.listenAddress();
        return a.getHostString() + ":" + a.getPort();
    }

    @Test
    void probeThroughTheGatewayLosesNothingThenSecondRunReusesTheTopic() throws Exception {
        // first run: the topic is new, so the probe auto-creates it with a warm-up message
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        long t0 = System.nanoTime();
        int code = ProbeCommandTest.execute(new ProbeCommand(), new PrintWriter(out, true), new PrintWriter(err, true),
            "--namesrv", gatewayAddress(), "--topic", TOPIC, "--count", "60", "--rate", "40",
            "--timeout", "10s", "--latency-budget", "p99<=5s", "--json");
        long firstMillis = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, code, () -> "stdout:\n" + out + "\nstderr:\n" + err);
        JsonNode report = new ObjectMapper().readTree(out.toString()); // stdout is the JSON object and nothing else
        assertEquals("ok", report.get("status").asText(), out::toString);
        assertEquals(60, report.get("sent").asInt());
        assertEquals(60, report.get("received").asInt());
        assertEquals(0, report.get("lost").asInt());
        assertEquals(0, report.get("sendErrors").asInt());
        assertEquals(60, report.get("latencyMs").get("samples").asInt());
        assertTrue(report.get("latencyMs").get("p99").asLong() <= 5_000, out::toString);
        assertTrue(report.get("budget").get(0).get("ok").asBoolean(), out::toString);
        assertEquals("ok", report.get("groupCleanup").asText(), out::toString);

        // the sends went through the gateway's broker listener
        assertTrue(MeterReadings.of(metrics).requests(RequestCode.SEND_MESSAGE_V2, ResponseCode.SUCCESS)
            + MeterReadings.of(metrics).requests(RequestCode.SEND_MESSAGE, ResponseCode.SUCCESS) >= 60, "sends relayed by the gateway");
        // the run's consumer group and its retry topic are gone from the broker
        String group = report.get("group").asText();
        assertTrue(group.startsWith("rmqgw_probe_"), group);
        assertFalse(cluster.brokerController().getSubscriptionGroupManager().getSubscriptionGroupTable()
            .containsKey(group), "group " + group + " deleted");
        assertFalse(cluster.brokerController().getTopicConfigManager().getTopicConfigTable()
            .containsKey(MixAll.getRetryTopic(group)), "retry topic of " + group + " deleted");

        // second run, text output: the topic exists now; messages of the first run are ignored if seen
        StringWriter out2 = new StringWriter();
        StringWriter err2 = new StringWriter();
        long t1 = System.nanoTime();
        int code2 = ProbeCommandTest.execute(new ProbeCommand(), new PrintWriter(out2, true), new PrintWriter(err2, true),
            "--namesrv", gatewayAddress(), "--topic", TOPIC, "--count", "100", "--rate", "100",
            "--size", "2048");
        long secondMillis = (System.nanoTime() - t1) / 1_000_000;
        assertEquals(0, code2, () -> "stdout:\n" + out2 + "\nstderr:\n" + err2);
        String[] lines = out2.toString().strip().split("\\R");
        assertEquals("OK", lines[lines.length - 1], out2::toString);
        assertTrue(out2.toString().contains("sent       100 of 100 at 100/s, 2048 bytes each"), out2::toString);
        assertTrue(out2.toString().contains("received   100; lost 0, duplicates 0"), out2::toString);
        System.out.println("probe runs through the gateway: first (auto-create, JSON) " + firstMillis + " ms, second "
            + secondMillis + " ms\n" + out + out2);
    }

    // ------------------------------------------------------------------ ports, as the OS hands them out

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        }
    }

    private static boolean bindable(int port) {
        if (port < 1024 || port > 65535) {
            return false;
        }
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A free port p whose VIP port p - 2 is free too (the embedded broker binds both). */
    private static int freeBrokerPort() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int p = freePort();
            if (bindable(p - 2)) {
                return p;
            }
        }
        throw new IllegalStateException("no free broker port p with p - 2 free");
    }

    /** Three consecutive free ports (a gateway broker-listener block). */
    private static int freeBlock() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int p = freePort();
            if (bindable(p + 1) && bindable(p + 2)) {
                return p;
            }
        }
        throw new IllegalStateException("no three consecutive free ports");
    }
}
