package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.ClientVersion;
import io.rmqgw.it.support.ScenarioProcess;
import io.rmqgw.it.support.ScenarioResult;
import io.rmqgw.it.support.ScenarioRunner;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.RawRemoting;
import io.rmqgw.testing.UniqueNames;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bytes that are no remoting frame, sent from raw sockets to the gateway's name-server port and to
 * its port for the shared broker: each offending connection is closed by the gateway and counted
 * by reason, while a real client sending through the same gateway all along, and an idle
 * well-behaved connection on each port, are not disturbed.
 */
@RocketMqCluster
class BadInputIT {

    private static final Duration CLOSE_WITHIN = Duration.ofSeconds(5);

    static ClusterUnderTest cluster;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        gateway = shared.closeAfterClass(GatewayFixture.on(shared).start());
    }

    /** One malformed input and the reason label the gateway must count it under. */
    record BadInput(String name, String reason, byte[] bytes) {
    }

    static Map<String, BadInput> badInputs() {
        Map<String, BadInput> inputs = new LinkedHashMap<>();
        // 0xDEADBEEF read as the signed length it is on the wire: negative
        byte[] garbage = concat(new byte[] {(byte) 0xDE, (byte) 0xAD, (byte) 0xBE, (byte) 0xEF},
            "garbage, not a frame\r\n".getBytes(StandardCharsets.US_ASCII));
        inputs.put("garbage", new BadInput("garbage bytes", "bad_length", garbage));
        // just the length of a ~2 GiB frame and a few bytes: refused on the length alone
        inputs.put("oversized", new BadInput("length 0x7FFFFFF0 (over the 16 MiB default)", "frame_too_long",
            concat(new byte[] {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xF0}, new byte[64])));
        // a complete 12-byte frame whose binary header claims 100 bytes
        inputs.put("header-past-frame", new BadInput("binary header length past the frame", "header_past_frame",
            ByteBuffer.allocate(16).putInt(12).putInt((1 << 24) | 100).putLong(0).array()));
        // a 21-byte binary header (the fixed fields) whose remark length runs past it
        ByteBuffer remark = ByteBuffer.allocate(4 + 4 + 21);
        remark.putInt(4 + 21).putInt((1 << 24) | 21);
        remark.putShort((short) RequestCode.GET_MAX_OFFSET).put((byte) 0).putShort((short) 1).putInt(7).putInt(0);
        remark.putInt(1000).putInt(0);
        inputs.put("remark-past-header", new BadInput("binary remark length past the header",
            "truncated_binary_field", remark.array()));
        // a well-formed JSON request whose serialize type byte says 7
        byte[] unknownType = RawRemoting.frame(maxOffsetRequest("it_no_such_topic"), SerializeType.JSON);
        unknownType[4] = 7;
        inputs.put("unknown-serialize-type", new BadInput("serialize type 7", "unknown_serialize_type", unknownType));
        // JSON header that is not JSON
        byte[] notJson = "{this is not json".getBytes(StandardCharsets.US_ASCII);
        inputs.put("invalid-json", new BadInput("JSON header that does not parse", "invalid_json",
            ByteBuffer.allocate(8 + notJson.length).putInt(4 + notJson.length).putInt(notJson.length).put(notJson)
                .array()));
        return inputs;
    }

    static RemotingCommand maxOffsetRequest(String topic) {
        GetMaxOffsetRequestHeader h = new GetMaxOffsetRequestHeader();
        h.setTopic(topic);
        h.setQueueId(0);
        return RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, h);
    }

    static RemotingCommand routeRequest(String topic) {
        GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
        h.setTopic(topic);
        return RemotingCommand.createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, h);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }

    static RemotingCommand sendRequest(String topic, String body) {
        SendMessageRequestHeader h = new SendMessageRequestHeader();
        h.setProducerGroup(cluster.group("garbage_after"));
        h.setTopic(topic);
        h.setDefaultTopic("TBW102");
        h.setDefaultTopicQueueNums(4);
        h.setQueueId(0);
        h.setSysFlag(0);
        h.setBornTimestamp(System.currentTimeMillis());
        h.setFlag(0);
        h.setProperties("");
        RemotingCommand send = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE, h);
        send.setBody(body.getBytes(StandardCharsets.UTF_8));
        return send;
    }

    /**
     * A good request and garbage in one TCP write, on each port: the request reaches the real name server
     * or broker and its answer comes back before the gateway closes the connection (issue 16.2).
     */
    @Test
    void aGoodRequestBeforeGarbageInOneWriteIsAnswered() throws Exception {
        String topic = UniqueNames.topic("garbage_after");
        cluster.createTopic(topic, 4);
        byte[] garbage = badInputs().get("garbage").bytes();
        double before = MeterReadings.of(gateway.metrics()).decodeErrors("bad_length");
        for (SerializeType encoding : SerializeType.values()) {
            try (RawRemoting client = RawRemoting.connect(gateway.listenPort(), Duration.ofSeconds(10))) {
                RemotingCommand route = routeRequest(topic);
                client.write(concat(RawRemoting.frame(route, encoding), garbage));
                RawRemoting.Answer answer = client.readFrame();
                assertEquals(route.getOpaque(), answer.command().getOpaque());
                assertEquals(ResponseCode.SUCCESS, answer.code(), answer::toString);
                assertTrue(new String(answer.command().getBody(), StandardCharsets.UTF_8).contains(cluster.brokerName()),
                    "the route from the name server");
                assertNotNull(client.awaitClosed(CLOSE_WITHIN));
            }
            try (RawRemoting client = RawRemoting.connect(gateway.brokerPort(cluster.brokerAddress()), Duration.ofSeconds(10))) {
                RemotingCommand send = sendRequest(topic, "before the garbage " + encoding);
                client.write(concat(RawRemoting.frame(send, encoding), garbage));
                RawRemoting.Answer answer = client.readFrame();
                assertEquals(send.getOpaque(), answer.command().getOpaque());
                assertEquals(ResponseCode.SUCCESS, answer.code(), answer::toString);
                assertNotNull(answer.ext("msgId"), "stored by the broker: " + answer);
                assertNotNull(client.awaitClosed(CLOSE_WITHIN));
            }
        }
        assertEquals(before + 4, MeterReadings.of(gateway.metrics()).decodeErrors("bad_length"), "each connection's garbage counted once");
    }

    @Test
    void malformedInputClosesOnlyThatConnection() throws Exception {
        String topic = UniqueNames.topic("bad_input");
        int namesrvPort = gateway.listenPort();
        int brokerPort = gateway.brokerPort(cluster.brokerAddress());
        Map<String, BadInput> inputs = badInputs();
        Map<String, Double> before = new LinkedHashMap<>();
        for (BadInput in : inputs.values()) {
            before.put(in.reason(), MeterReadings.of(gateway.metrics()).decodeErrors(in.reason()));
        }

        // A real client keeps sending through the gateway the whole time: 50 sync sends 100 ms apart.
        try (ScenarioProcess sender = ScenarioRunner.scenario(ClientVersion.V4_9_7, "sync-send")
            .namesrv(gateway.namesrvAddress()).topic(topic).count(50).arg("interval-ms", 100)
            .timeout(Duration.ofSeconds(60)).start();
             RawRemoting idleNamesrv = RawRemoting.connect(namesrvPort, Duration.ofSeconds(10));
             RawRemoting idleBroker = RawRemoting.connect(brokerPort, Duration.ofSeconds(10))) {
            assertNotNull(sender.awaitLine("sent", Duration.ofSeconds(30)),
                () -> "the sender never sent: " + sender.linesSoFar());
            // well-behaved connections opened before the bad input, used before and after it
            assertEquals(ResponseCode.SUCCESS, idleNamesrv.invoke(routeRequest(topic), SerializeType.JSON).code());
            assertEquals(ResponseCode.SUCCESS, idleBroker.invoke(maxOffsetRequest(topic), SerializeType.ROCKETMQ).code());

            long t0 = System.nanoTime();
            for (Map.Entry<String, Integer> port : Map.of("name-server port", namesrvPort, "broker port", brokerPort)
                .entrySet()) {
                for (BadInput in : inputs.values()) {
                    try (RawRemoting bad = RawRemoting.connect(port.getValue(), Duration.ofSeconds(10))) {
                        long s = System.nanoTime();
                        bad.write(in.bytes());
                        RawRemoting.Closed how = bad.awaitClosed(CLOSE_WITHIN);
                        System.err.println("[it] " + in.name() + " on the " + port.getKey() + " " + port.getValue()
                            + ": closed by the gateway (" + how + ") after " + (System.nanoTime() - s) / 1_000_000
                            + " ms");
                    }
                }
            }
            long badMillis = (System.nanoTime() - t0) / 1_000_000;
            // the sender was running throughout (50 sends 100 ms apart take 5 s at least)
            assertTrue(sender.isAlive(), "the sender finished before the bad input did: not concurrent");
            System.err.println("[it] " + 2 * inputs.size() + " bad connections handled in " + badMillis + " ms; sender "
                + (sender.isAlive() ? "still running" : "done"));

            for (BadInput in : inputs.values()) {
                Await.until(() -> in.reason() + " counted twice (once per port): "
                        + (MeterReadings.of(gateway.metrics()).decodeErrors(in.reason()) - before.get(in.reason())),
                    Duration.ofSeconds(5), Duration.ofMillis(20),
                    () -> MeterReadings.of(gateway.metrics()).decodeErrors(in.reason()) - before.get(in.reason()) == 2.0);
            }

            assertEquals(ResponseCode.SUCCESS, idleNamesrv.invoke(routeRequest(topic), SerializeType.JSON).code(),
                "the idle name-server connection still works");
            assertEquals(ResponseCode.SUCCESS, idleBroker.invoke(maxOffsetRequest(topic), SerializeType.ROCKETMQ).code(),
                "the idle broker connection still works");

            ScenarioResult r = sender.await();
            System.err.println("[it] concurrent " + r);
            r.assertOk();
            assertEquals(50, r.summaryLong("sent"), r::describe);
            assertEquals(0, r.lines("send-error").size(), r::describe);
            Set<Integer> unexpected = new TreeSet<>(r.remotePorts());
            unexpected.removeAll(gateway.clientPorts());
            assertTrue(unexpected.isEmpty(), () -> "sender connected to " + unexpected + ": " + r.connections());
        }
    }
}
