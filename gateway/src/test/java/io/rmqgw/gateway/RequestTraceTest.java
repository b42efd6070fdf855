package io.rmqgw.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.FreePorts;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntFunction;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Not a check: a measurement, skipped unless {@code -Drmqgw.trace} is set and the JaCoCo agent runs in the test JVM
 * ({@code bench/trace-requests.sh} does both). A gateway with every default setting (only its ports and name server
 * set) fronts a scripted broker and name server; on an established, warmed-up client connection (the same request
 * relayed before on it) each traced request runs between a reset of the agent's probes and a dump of them taken as
 * soon as the answer's last byte is read by the client, and again {@value #SETTLE_MS} ms later (what the gateway still
 * ran after writing the answer). The dumps land in {@code rmqgw.trace.dir} (default target/trace) as
 * {@code <request>-<n>.exec} and {@code <request>-<n>.settled.exec}; bench/trace/TraceReport.java counts them.
 */
class RequestTraceTest {

    private static final int WARMUPS = 3;
    private static final int REPEATS = 5;
    private static final long SETTLE_MS = 200;
    private static final String TOPIC = "TopicTest";
    /** As a 5.4.0 Java client writes it. */
    private static final int CLIENT_VERSION = MQVersion.CURRENT_VERSION;
    private static final long COMMIT_LOG_OFFSET = 0x0000_0012_3456_789AL;

    @RegisterExtension
    final Closer resources = Closer.eachTest();

    private int opaque = 1000;

    @Test
    void traceSendPullAndRoute() throws Exception {
        assumeTrue(System.getProperty("rmqgw.trace") != null, "a measurement: run bench/trace-requests.sh");
        Agent agent = Agent.find();
        Path dir = Path.of(System.getProperty("rmqgw.trace.dir", "target/trace"));
        Files.createDirectories(dir);

        ScriptedPeer broker = resources.add(ScriptedPeer.start(ScriptedPeer.Script.SILENT));
        String brokerAddress = broker.address();
        InetSocketAddress brokerSocket = new InetSocketAddress("127.0.0.1", broker.port());
        broker.script((c, f) -> {
            if (f.isResponse() || f.isOneway()) {
                return;
            }
            Wire.Builder answer = switch (f.code()) {
                case RequestCode.SEND_MESSAGE_V2 -> Wire.response(ResponseCode.SUCCESS, f.opaque())
                    .ext("msgId", MessageDecoder.createMessageId(brokerSocket, COMMIT_LOG_OFFSET))
                    .ext("queueId", f.ext().get("e")).ext("queueOffset", "42");
                case RequestCode.PULL_MESSAGE -> Wire.response(ResponseCode.PULL_NOT_FOUND, f.opaque())
                    .ext("nextBeginOffset", "0").ext("minOffset", "0").ext("maxOffset", "0")
                    .ext("suggestWhichBrokerId", "0");
                default -> Wire.response(ResponseCode.SUCCESS, f.opaque());
            };
            c.send(answer.type(f.serializeType()).bytes());
        });
        ScriptedPeer namesrv = resources.add(ScriptedPeer.start(
            Routes.nameServer(Map.of(TOPIC, Map.of(ScriptedCluster.BROKER_A, brokerAddress)))));
        namesrv.clusterInfo(ScriptedPeer.clusterInfoNaming(ScriptedCluster.BROKER_A, brokerAddress));

        // every default but the ports and the name server (the admin port is on by default: a free port here)
        int brokerBase = FreePorts.range(9);
        GatewayConfig config = ConfigLoader.defaults(Map.of(
            "listen", "127.0.0.1:" + FreePorts.port(),
            "broker-ports", brokerBase + "-" + (brokerBase + 8),
            "upstream.namesrv", List.of(namesrv.address()),
            "admin.listen", "127.0.0.1:" + FreePorts.port(),
            "embedded.enabled", false));
        Gateway gateway = resources.add(Gateway.start(config, GatewayMetrics.prometheus()));
        String advertised = gateway.brokerListeners().get(brokerAddress);
        int brokerPort = Integer.parseInt(advertised.substring(advertised.lastIndexOf(':') + 1));

        int namesrvPort = gateway.listenAddress().getPort();
        for (SerializeType encoding : List.of(SerializeType.ROCKETMQ, SerializeType.JSON)) {
            String suffix = "-" + encoding.name().toLowerCase(Locale.ROOT);
            trace(agent, dir, "send" + suffix, brokerPort, ResponseCode.SUCCESS, op -> send(op, encoding));
            trace(agent, dir, "pull" + suffix, brokerPort, ResponseCode.PULL_NOT_FOUND, op -> pull(op, encoding));
            trace(agent, dir, "route" + suffix, namesrvPort, ResponseCode.SUCCESS,
                op -> Routes.request(TOPIC, CLIENT_VERSION).opaque(op).type(encoding).bytes());
        }
    }

    /** A SEND_MESSAGE_V2 as a 4.9.x/5.x Java producer writes it. */
    private static byte[] send(int op, SerializeType encoding) {
        return Wire.request(RequestCode.SEND_MESSAGE_V2).version(CLIENT_VERSION).opaque(op).type(encoding)
            .ext("a", "please_rename_unique_group_name").ext("b", TOPIC).ext("c", "TBW102").ext("d", "4").ext("e", "1")
            .ext("f", "0").ext("g", "1700000000000").ext("h", "0")
            .ext("i", "UNIQ_KEY\u0001AC11000100002A9F0000000000000" + op + "\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002")
            .ext("j", "0").ext("k", "false").ext("m", "false")
            .body("Hello RocketMQ " + op).bytes();
    }

    /** A PULL_MESSAGE as a 4.9.x/5.x Java push consumer writes it. */
    private static byte[] pull(int op, SerializeType encoding) {
        return Wire.request(RequestCode.PULL_MESSAGE).version(CLIENT_VERSION).opaque(op).type(encoding)
            .ext("consumerGroup", "cg_1").ext("topic", TOPIC).ext("queueId", "1").ext("queueOffset", "0")
            .ext("maxMsgNums", "32").ext("sysFlag", "2").ext("commitOffset", "0").ext("suspendTimeoutMillis", "15000")
            .ext("subscription", "*").ext("subVersion", "1700000000000").ext("expressionType", "TAG").bytes();
    }

    /** On a new connection to {@code port}: {@link #WARMUPS} requests, then {@link #REPEATS} traced ones. */
    private void trace(Agent agent, Path dir, String name, int port, int expectedCode, IntFunction<byte[]> request)
        throws Exception {
        try (RawClient client = RawClient.connect(port)) {
            trace(agent, dir, name, client, expectedCode, request);
        }
    }

    private void trace(Agent agent, Path dir, String name, RawClient client, int expectedCode, IntFunction<byte[]> request)
        throws Exception {
        for (int i = 0; i < WARMUPS; i++) {
            assertEquals(expectedCode, exchange(client, request.apply(opaque++)).code(), name + " warm-up");
        }
        for (int n = 1; n <= REPEATS; n++) {
            byte[] bytes = request.apply(opaque++);
            agent.reset();
            client.send(bytes);
            byte[] answer = client.readBytes(RawClient.WAIT);
            byte[] executed = agent.dump();
            Thread.sleep(SETTLE_MS);
            byte[] settled = agent.dump();
            Files.write(dir.resolve(name + "-" + n + ".exec"), executed);
            Files.write(dir.resolve(name + "-" + n + ".settled.exec"), settled);
            assertEquals(expectedCode, Wire.parse(answer).code(), name + " answer");
        }
    }

    private static Wire.Frame exchange(RawClient client, byte[] request) throws IOException {
        client.send(request);
        return client.read(Duration.ofSeconds(5));
    }

    /** The JaCoCo agent's runtime API ({@code org.jacoco.agent.rt.RT}), through reflection: no compile dependency. */
    private record Agent(Object agent, Method resetMethod, Method dumpMethod) {

        static Agent find() throws ReflectiveOperationException {
            Class<?> rt;
            try {
                rt = Class.forName("org.jacoco.agent.rt.RT");
            } catch (ClassNotFoundException e) {
                throw new AssertionError("-Drmqgw.trace needs the JaCoCo agent: -javaagent:org.jacoco.agent-runtime.jar"
                    + "=output=none (bench/trace-requests.sh)", e);
            }
            Class<?> api = Class.forName("org.jacoco.agent.rt.IAgent");
            return new Agent(rt.getMethod("getAgent").invoke(null), api.getMethod("reset"),
                api.getMethod("getExecutionData", boolean.class));
        }

        void reset() throws ReflectiveOperationException {
            resetMethod.invoke(agent);
        }

        byte[] dump() throws ReflectiveOperationException {
            return (byte[]) dumpMethod.invoke(agent, false);
        }
    }
}
