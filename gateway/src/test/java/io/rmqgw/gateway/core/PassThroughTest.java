package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Codes the gateway does not know (admin tools use many) reach the upstream, and come back, byte for byte. */
class PassThroughTest {

    private static final String UNICODE = "h\u00e9llo \u2713 \uD83D\uDE80 \"q\" back\\slash\ttab \u0001\u0002";

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private TestGateway gateway;
    private ScriptedPeer namesrv;
    /** What the scripted name server answers to the next request: exact bytes with the opaque patched in. */
    private final List<byte[]> answers = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        namesrv = resources.add(ScriptedPeer.start((c, f) -> {
            if (!f.isResponse() && !f.isOneway()) {
                byte[] answer;
                synchronized (answers) {
                    answer = answers.isEmpty() ? Wire.response(Wire.SUCCESS, f.opaque()).bytes() : answers.remove(0);
                }
                c.send(answer);
            }
        }));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).start());
    }

    static Stream<Arguments> unknownRequests() {
        byte[] body = new byte[3000];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 31);
        }
        return Stream.of(
            Arguments.of("JSON, ext fields, remark, body", Wire.request(60001).opaque(901).type(SerializeType.JSON)
                .language(LanguageCode.GO).version(317).remark(UNICODE).ext("x-unknown", UNICODE).ext("topic", "T%RETRY%g")
                .body(body).bytes()),
            Arguments.of("ROCKETMQ, ext fields, remark, body", Wire.request(60002).opaque(902).type(SerializeType.ROCKETMQ)
                .language(LanguageCode.RUST).remark(UNICODE).ext("x-unknown", UNICODE).ext("empty", "").body(body).bytes()),
            Arguments.of("JSON written by hand: spacing, field order, unknown fields", Wire.rawFrame(0, Wire.utf8(
                "{ \"extFields\" : {\"b\":\"2\", \"a\":\"1\"},\n \"opaque\":903, \"custom\":[1,{\"x\":null}],"
                    + " \"code\" : 60003, \"flag\":0, \"language\":\"NODE_JS\", \"version\":0 }"), Wire.utf8("body"))),
            Arguments.of("negative code and opaque", Wire.request(-7).opaque(-904).bytes()),
            Arguments.of("admin code the gateway does not treat (UPDATE_AND_CREATE_TOPIC 17)",
                Wire.request(17).opaque(905).ext("topic", "NewTopic").ext("readQueueNums", "8").bytes()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unknownRequests")
    void requestAndAnswerPassByteForByte(String what, byte[] request) throws Exception {
        Wire.Frame parsed = Wire.parse(request);
        int opaque = parsed.opaque();
        // answered in the request's own encoding: mirroring then leaves the answer's bytes alone
        byte[] answer = parsed.serializeType() == SerializeType.ROCKETMQ
            ? Wire.response(12345, opaque).type(SerializeType.ROCKETMQ).remark("r\u00e9ponse").ext("z", "last")
                .ext("a", "first").body("{\"answer\":[1,2,3]}").bytes()
            : Wire.rawFrame(0, Wire.utf8("{\"code\":12345,\"flag\":1, \"opaque\":" + opaque
                + ",\"remark\":\"" + "r\\u00e9ponse" + "\",\"extFields\":{\"z\":\"last\",\"a\":\"first\"},\"more\":true}"),
                Wire.utf8("{\"answer\":[1,2,3]}"));
        synchronized (answers) {
            answers.add(answer);
        }
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(request);
            ScriptedPeer.Received got = namesrv.awaitFrame(RawClient.WAIT);
            assertArrayEquals(request, got.frame().bytes(), "the upstream got the client's bytes");
            assertArrayEquals(answer, client.readBytes(RawClient.WAIT), "the client got the upstream's bytes");
        }
    }

    @Test
    void binaryAnswerToAJsonRequestReachesTheClientAsJson() throws Exception {
        // a responder answers in its own JVM's encoding; downstream.response-encoding mirror gives the
        // client the encoding it spoke, every field kept
        byte[] answer = Wire.response(Wire.SUCCESS, 906).type(SerializeType.ROCKETMQ).remark("done").ext("k", "v")
            .body("b").bytes();
        synchronized (answers) {
            answers.add(answer);
        }
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(Wire.request(60004).opaque(906).type(SerializeType.JSON).bytes());
            Wire.Frame got = client.read();
            assertEquals(SerializeType.JSON, got.serializeType());
            assertEquals(906, got.opaque());
            assertEquals(Wire.SUCCESS, got.code());
            assertEquals("done", got.remark());
            assertEquals(java.util.Map.of("k", "v"), got.ext());
            assertEquals("b", got.bodyText());
        }
    }

    @Test
    void requestWrittenOneByteAtATimeIsRelayedWhole() throws Exception {
        byte[] request = Wire.request(60006).opaque(907).ext("topic", "Slow").body("drip").bytes();
        try (RawClient client = RawClient.connect(gateway.port())) {
            for (byte b : request) {
                client.send(new byte[] {b});
            }
            assertArrayEquals(request, namesrv.awaitFrame(RawClient.WAIT).frame().bytes());
            assertEquals(907, client.read().opaque());
        }
    }

    @Test
    void manyRequestsInOneWriteAreAllRelayedInOrder() throws Exception {
        byte[][] requests = new byte[20][];
        int length = 0;
        for (int i = 0; i < requests.length; i++) {
            requests[i] = Wire.request(60005).opaque(1000 + i).type(i % 2 == 0 ? SerializeType.JSON : SerializeType.ROCKETMQ)
                .ext("i", String.valueOf(i)).bytes();
            length += requests[i].length;
        }
        byte[] all = new byte[length];
        int at = 0;
        for (byte[] r : requests) {
            System.arraycopy(r, 0, all, at, r.length);
            at += r.length;
        }
        try (RawClient client = RawClient.connect(gateway.port())) {
            client.send(all);
            for (int i = 0; i < requests.length; i++) {
                assertArrayEquals(requests[i], namesrv.awaitFrame(RawClient.WAIT).frame().bytes(), "request " + i);
            }
            for (int i = 0; i < requests.length; i++) {
                assertEquals(1000 + i, client.read().opaque());
            }
        }
    }
}
