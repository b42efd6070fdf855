package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static io.rmqgw.codec.header.HeaderFixtures.UNICODE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.SendMessageResponseHeader;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The answers made from a batch answer: in each encoding, what rocketmq-remoting (5.4.0 and 4.9.7) reads is
 * the broker's code, remark and fields with each send's own opaque, rewritten id and offset; the binary form
 * is byte for byte what the map-built answer it replaces was.
 */
class SendResponseTemplateTest {

    private static final int BROKER = StoreHostMapper.ipv4(10, 0, 0, 1);
    private static final int GATEWAY = StoreHostMapper.ipv4(127, 0, 0, 1);
    private static final StoreHostMapper MAPPER = (ip, port) ->
        ip == BROKER && port == 10911 ? StoreHostMapper.pack(GATEWAY, 30911) : StoreHostMapper.UNKNOWN;
    private static final int COUNT = 3;

    /** The batch answer as a broker writes it in {@code type}. */
    private static RemotingFrame brokerAnswer(SerializeType type, int code, String remark) {
        SendMessageResponseHeader h = new SendMessageResponseHeader();
        StringBuilder ids = new StringBuilder();
        for (int i = 0; i < COUNT; i++) {
            ids.append(i == 0 ? "" : ",").append(MessageIds.create(BROKER, 10911, 5000L + 100 * i));
        }
        h.setMsgId(ids.toString());
        h.setQueueId(2);
        h.setQueueOffset(4242L);
        h.setBatchUniqId("batch-1");
        RemotingCommand cmd = RemotingCommand.createResponseCommand(code, remark);
        cmd.writeCustomHeader(h);
        cmd.setOpaque(78);
        cmd.setVersion(453);
        cmd.addExtField("MSG_REGION", "DefaultRegion");
        cmd.addExtField("TRACE_ON", "true");
        cmd.addExtField("x-unicode", UNICODE);
        return HeaderFixtures.frame(cmd, type);
    }

    @ParameterizedTest
    @CsvSource({"ROCKETMQ,0,", "JSON,0,", "ROCKETMQ,10,unicode", "JSON,10,unicode", "ROCKETMQ,0,empty", "JSON,0,empty"})
    void eachAnswerReadsAsTheBrokersWithItsOwnOpaqueIdAndOffset(SerializeType brokerEncoding, int code, String remarkKind)
        throws Exception {
        String remark = remarkKind == null ? null : remarkKind.equals("unicode") ? UNICODE : "";
        RemotingFrame frame = brokerAnswer(brokerEncoding, code, remark);
        SendResponseTemplate template;
        Map<String, String> others = new LinkedHashMap<>();
        try {
            CommandHeader header = HeaderTranscoder.decodeResponse(frame, RequestCode.SEND_BATCH_MESSAGE);
            try {
                template = SendResponseTemplate.of(code, (SendResponseHeader) header, MAPPER);
                others.putAll(header.extFields());
            } finally {
                header.release();
            }
        } finally {
            frame.release();
        }
        others.keySet().removeAll(List.of("msgId", "queueOffset", "batchUniqId"));
        assertEquals(COUNT, template.count());
        assertEquals(4242L, template.baseOffset());
        // a broker's binary zero-length remark is none; JSON keeps ""
        String expectedRemark = remark != null && remark.isEmpty() && brokerEncoding == SerializeType.ROCKETMQ ? null
            : remark;
        for (int i = 0; i < COUNT; i++) {
            String id = MessageIds.create(GATEWAY, 30911, 5000L + 100 * i);
            Map<String, String> expected = new HashMap<>(others);
            expected.put("msgId", id);
            expected.put("queueOffset", Long.toString(4242L + i));
            for (SerializeType clientEncoding : SerializeType.values()) {
                int opaque = i == 1 ? -7 : 1000 + i;
                ByteBuf answer = template.encode(ALLOC, clientEncoding, opaque, i);
                try {
                    byte[] bytes = HeaderFixtures.bytes(answer);
                    assertEquals(clientEncoding.getCode(), bytes[4], "the client's encoding");
                    RemotingCommand read = HeaderFixtures.decodeWithRocketMq(bytes);
                    assertEquals(code, read.getCode());
                    assertEquals(opaque, read.getOpaque());
                    assertTrue(read.isResponseType());
                    assertEquals(LanguageCode.JAVA, read.getLanguage());
                    assertEquals(expected, read.getExtFields(), clientEncoding + " answer " + i);
                    if (clientEncoding == SerializeType.JSON || expectedRemark == null || !expectedRemark.isEmpty()) {
                        assertEquals(expectedRemark, read.getRemark());
                    } else {
                        assertNull(read.getRemark(), "binary: an empty remark reads as none");
                    }
                    Legacy497.Fields legacy = Legacy497.decode(bytes);
                    assertEquals(opaque, legacy.opaque());
                    assertEquals(expected, legacy.ext(), "4.9.7 reads the same");
                    if (clientEncoding == SerializeType.ROCKETMQ) {
                        Map<String, String> ordered = new LinkedHashMap<>();
                        ordered.put("msgId", id);
                        ordered.put("queueOffset", Long.toString(4242L + i));
                        ordered.putAll(others);
                        ByteBuf mapBuilt = Frames.encode(ALLOC, RemotingHeader.response(opaque, code, expectedRemark)
                            .withExtFields(ordered), SerializeType.ROCKETMQ, null);
                        try {
                            assertArrayEquals(HeaderFixtures.bytes(mapBuilt), bytes, "byte for byte the map-built answer");
                        } finally {
                            mapBuilt.release();
                        }
                    }
                } finally {
                    answer.release();
                }
            }
        }
        assertThrows(IndexOutOfBoundsException.class, () -> template.encode(ALLOC, SerializeType.JSON, 1, COUNT));
    }

    @ParameterizedTest
    @CsvSource({"ROCKETMQ", "JSON"})
    void anAnswerWithoutIdsOrOffsetHasNone(SerializeType brokerEncoding) throws Exception {
        RemotingCommand cmd = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
        cmd.addExtField("MSG_REGION", "DefaultRegion");
        RemotingFrame frame = HeaderFixtures.frame(cmd, brokerEncoding);
        try {
            CommandHeader header = HeaderTranscoder.decodeResponse(frame, RequestCode.SEND_BATCH_MESSAGE);
            try {
                SendResponseTemplate template = SendResponseTemplate.of(0, (SendResponseHeader) header, MAPPER);
                assertEquals(0, template.count());
                assertEquals(CommandHeader.ABSENT_LONG, template.baseOffset());
            } finally {
                header.release();
            }
        } finally {
            frame.release();
        }
    }
}
