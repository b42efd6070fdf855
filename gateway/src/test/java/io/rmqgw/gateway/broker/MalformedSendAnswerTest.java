package io.rmqgw.gateway.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A send answer whose JSON header has a valid envelope but an extFields entry the full header
 * decoder refuses. The broker role decodes the whole header of send answers (to rewrite msgId), so
 * this is where such a header is read past its envelope. The client must still get an answer for its
 * request, and nothing may leak (the class fails in afterAll on a Netty leak report).
 */
class MalformedSendAnswerTest {

    private static final int SEND_MESSAGE_V2 = 310;

    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer broker;
    private TestGateway gateway;

    @BeforeEach
    void start() throws Exception {
        ScriptedCluster cluster = ScriptedCluster.options().broker((c, f) -> {
            if (!f.isResponse()) {
                String header = "{\"code\":0,\"flag\":1,\"opaque\":" + f.opaque() + ",\"language\":\"JAVA\",\"version\":453,"
                    + "\"extFields\":{\"msgId\":\"7F00000100002A9F0000000000001000\",\"queueId\":\"1\",\"odd\":{\"n\":1}}}";
                c.send(Wire.rawFrame(0, Wire.utf8(header), new byte[0]));
            }
        }).start(resources);
        broker = cluster.broker();
        gateway = cluster.gateway();
    }

    @Test
    void clientGetsAnAnswerForItsOpaqueAndNothingLeaks() throws Exception {
        try (RawClient client = RawClient.connect(gateway.brokerPort(broker.address()))) {
            client.send(Wire.request(SEND_MESSAGE_V2).opaque(66).ext("b", "TopicA").body("m").bytes());
            broker.awaitFrame(RawClient.WAIT);
            byte[] answer = client.readBytes(RawClient.WAIT);
            // either the broker's answer passed on as it came, or the gateway's own error: read its envelope only
            RemotingFrame frame = FrameDecoder.parse(Unpooled.wrappedBuffer(answer));
            try {
                assertTrue(frame.isResponse());
                assertEquals(66, frame.opaque(), "an answer to the client's request");
            } finally {
                frame.release();
            }
        }
    }
}
