package io.rmqgw.codec.frame;

import io.rmqgw.codec.message.StoredRecordsSeeds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.PullMessageResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.UnregisterClientRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.apache.rocketmq.remoting.protocol.heartbeat.ConsumerData;
import org.apache.rocketmq.remoting.protocol.heartbeat.HeartbeatData;
import org.apache.rocketmq.remoting.protocol.heartbeat.ProducerData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the codec's seed corpora (frames, headers, stored records, message ids) as rocketmq-remoting
 * 5.4.0's own {@link RemotingCommand} and rocketmq-common's MessageDecoder encode them. Not part of a
 * normal run: {@code mvn -pl codec -am test -Dtest=FuzzSeedsWriter -Drmqgw.fuzz.writeSeeds=true
 * -Dsurefire.failIfNoSpecifiedTests=false} rewrites the files under src/test/resources.
 */
class FuzzSeedsWriter {

    private static final Path RESOURCES = Paths.get("src", "test", "resources", "io", "rmqgw", "codec");

    @Test
    @EnabledIfSystemProperty(named = "rmqgw.fuzz.writeSeeds", matches = "true")
    void write() throws Exception {
        Map<String, byte[]> frames = frames();
        Path frameDir = clean(RESOURCES.resolve("frame/FrameDecoderFuzzTestInputs"));
        Path headerDir = clean(RESOURCES.resolve("header/HeaderFuzzTestInputs"));
        for (Map.Entry<String, byte[]> e : frames.entrySet()) {
            Files.write(frameDir.resolve(e.getKey()), e.getValue());
            byte[] frame = e.getValue();
            ByteBuffer b = ByteBuffer.wrap(frame);
            int typeAndLength = b.getInt(4);
            int headerLength = typeAndLength & 0xFFFFFF;
            byte[] header = new byte[1 + headerLength];
            header[0] = (byte) (typeAndLength >>> 24 == SerializeType.ROCKETMQ.getCode() ? 1 : 0);
            System.arraycopy(frame, 8, header, 1, headerLength);
            Files.write(headerDir.resolve(e.getKey()), header);
        }
        Files.write(frameDir.resolve("stream-mixed-encodings"), RemotingFixtures.concat(
            frames.get("pull-request-json"), frames.get("send-v2-rocketmq"), frames.get("heartbeat-json"),
            frames.get("send-response-rocketmq")));
        Files.write(frameDir.resolve("large-send-chained"), largeSend());
        StoredRecordsSeeds.write(RESOURCES.resolve("message/StoredRecordsFuzzTestInputs"));
    }

    private static Map<String, byte[]> frames() throws Exception {
        Map<String, byte[]> out = new LinkedHashMap<>();
        for (SerializeType type : SerializeType.values()) {
            String suffix = type == SerializeType.JSON ? "-json" : "-rocketmq";
            out.put("pull-request" + suffix, encode(RemotingFixtures.pullRequest(type)));
            out.put("send-v2" + suffix, encode(RemotingFixtures.sendRequest(type, body("hello ✓"))));

            SendMessageRequestHeader v1 = new SendMessageRequestHeader();
            v1.setProducerGroup("producer_group");
            v1.setTopic("TopicTest");
            v1.setDefaultTopic("TBW102");
            v1.setDefaultTopicQueueNums(4);
            v1.setQueueId(2);
            v1.setSysFlag(0);
            v1.setBornTimestamp(1_700_000_000_000L);
            v1.setFlag(0);
            v1.setProperties("KEYS\u0001k1\u0002WAIT\u0001true\u0002");
            v1.setReconsumeTimes(0);
            v1.setBatch(false);
            RemotingCommand sendV1 = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE, v1);
            sendV1.setBody(body("v1 body"));
            out.put("send-v1" + suffix, encode(typed(sendV1, type)));

            RemotingCommand sendResponse = RemotingCommand.createResponseCommand(SendMessageResponseHeader.class);
            SendMessageResponseHeader sent = (SendMessageResponseHeader) sendResponse.readCustomHeader();
            sent.setMsgId("7F00000100002A9F0000000000012C40");
            sent.setQueueId(2);
            sent.setQueueOffset(17L);
            sent.setTransactionId("7F000001567818B4AAC20000000A0001");
            sendResponse.setCode(ResponseCode.SUCCESS);
            sendResponse.setOpaque(42);
            out.put("send-response" + suffix, encode(typed(sendResponse, type)));

            RemotingCommand pulled = RemotingCommand.createResponseCommand(PullMessageResponseHeader.class);
            pulled.setCode(ResponseCode.SUCCESS);
            pulled.setOpaque(43);
            PullMessageResponseHeader pulledHeader = (PullMessageResponseHeader) pulled.readCustomHeader();
            pulledHeader.setSuggestWhichBrokerId(0L);
            pulledHeader.setNextBeginOffset(3L);
            pulledHeader.setMinOffset(0L);
            pulledHeader.setMaxOffset(3L);
            pulled.setBody(StoredRecordsSeeds.threeRecords());
            out.put("pull-response" + suffix, encode(typed(pulled, type)));

            HeartbeatData hb = heartbeat();
            RemotingCommand heartbeat = RemotingCommand.createRequestCommand(RequestCode.HEART_BEAT, null);
            heartbeat.setBody(hb.encode());
            out.put("heartbeat" + suffix, encode(typed(heartbeat, type)));

            GetRouteInfoRequestHeader route = new GetRouteInfoRequestHeader();
            route.setTopic("TopicTest");
            out.put("route-request" + suffix,
                encode(typed(RemotingCommand.createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, route), type)));

            UnregisterClientRequestHeader unregister = new UnregisterClientRequestHeader();
            unregister.setClientID("127.0.0.1@4242#1");
            unregister.setProducerGroup("producer_group");
            RemotingCommand oneway = RemotingCommand.createRequestCommand(RequestCode.UNREGISTER_CLIENT, unregister);
            oneway.markOnewayRPC();
            out.put("unregister-oneway" + suffix, encode(typed(oneway, type)));

            RemotingCommand error = RemotingCommand.createResponseCommand(ResponseCode.TOPIC_NOT_EXIST,
                "No topic route info in name server for the topic: TopicTest, see http://rocketmq.apache.org ✓");
            out.put("error-response" + suffix, encode(typed(error, type)));
        }
        // POP_MESSAGE's code does not fit the binary header's 16 bits: clients send it as JSON only
        PopMessageRequestHeader pop = new PopMessageRequestHeader();
        pop.setConsumerGroup("pop_group");
        pop.setTopic("TopicTest");
        pop.setQueueId(-1);
        pop.setMaxMsgNums(32);
        pop.setInvisibleTime(60_000L);
        pop.setPollTime(15_000L);
        pop.setBornTime(1_700_000_000_000L);
        pop.setInitMode(0);
        pop.setExpType("TAG");
        pop.setExp("*");
        out.put("pop-request-json", encode(RemotingCommand.createRequestCommand(RequestCode.POP_MESSAGE, pop)));
        return out;
    }

    private static RemotingCommand typed(RemotingCommand cmd, SerializeType type) {
        cmd.setSerializeTypeCurrentRPC(type);
        cmd.setVersion(453);
        return cmd;
    }

    /** RemotingCommand.encode() for JSON; for ROCKETMQ the NettyEncoder path (fastEncodeHeader) a broker takes. */
    private static byte[] encode(RemotingCommand cmd) {
        return cmd.getSerializeTypeCurrentRPC() == SerializeType.ROCKETMQ
            ? RemotingFixtures.fastEncode(cmd) : RemotingFixtures.encode(cmd);
    }

    private static byte[] largeSend() {
        byte[] body = new byte[40 * 1024];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) ('a' + i % 26);
        }
        return encode(RemotingFixtures.sendRequest(SerializeType.ROCKETMQ, body));
    }

    static HeartbeatData heartbeat() {
        HeartbeatData hb = new HeartbeatData();
        hb.setClientID("127.0.0.1@4242#1707000000000");
        ProducerData producer = new ProducerData();
        producer.setGroupName("producer_group");
        hb.getProducerDataSet().add(producer);
        ConsumerData consumer = new ConsumerData();
        consumer.setGroupName("consumer_group");
        hb.getConsumerDataSet().add(consumer);
        return hb;
    }

    private static byte[] body(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static Path clean(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (var files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    if (Files.isRegularFile(f) && !f.getFileName().toString().startsWith("regression-")) {
                        Files.delete(f);
                    }
                }
            }
        }
        return Files.createDirectories(dir);
    }
}
