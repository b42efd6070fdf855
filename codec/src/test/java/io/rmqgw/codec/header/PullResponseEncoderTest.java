package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingHeader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The virtual queues' pull answers, written straight: byte for byte the frame the map-built header through
 * {@link Frames#encode} was (VirtualConsumer's answers before), in both encodings, and what rocketmq-remoting reads.
 */
class PullResponseEncoderTest {

    private static final String NOT_FOUND = "no new message on the virtual queue";

    /** What VirtualConsumer wrote before: a HashMap of the four fields, encoded by the general header encoder. */
    private static ByteBuf mapBuilt(SerializeType type, int opaque, int code, String remark, long next, ByteBuf body) {
        Map<String, String> ext = new HashMap<>();
        ext.put("suggestWhichBrokerId", "0");
        ext.put("nextBeginOffset", Long.toString(next));
        ext.put("minOffset", "0");
        ext.put("maxOffset", Long.toString(next));
        return Frames.encode(ALLOC, RemotingHeader.response(opaque, code, remark).withExtFields(ext), type, body);
    }

    private static ByteBuf body() {
        return ALLOC.buffer().writeBytes("stored records".getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] bytesOf(ByteBuf frame) {
        try {
            return ByteBufUtil.getBytes(frame);
        } finally {
            frame.release();
        }
    }

    @ParameterizedTest
    @CsvSource({
        "ROCKETMQ,0,0", "JSON,0,0", "ROCKETMQ,1,9", "JSON,1,10", "ROCKETMQ,-7,4611686018427387904",
        "JSON,-7,4611686018427387904", "ROCKETMQ,2147483647,9223372036854775807", "JSON,-2147483648,123456789",
        "JSON,2147483647,-1", "ROCKETMQ,42,-9223372036854775808", "JSON,42,-9223372036854775808"})
    void aFoundAnswerIsTheMapBuiltFrameByteForByte(SerializeType type, int opaque, long next) {
        byte[] expected = bytesOf(mapBuilt(type, opaque, ResponseCode.SUCCESS, null, next, body()));
        byte[] actual = bytesOf(PullResponseEncoder.encode(ALLOC, type, opaque, ResponseCode.SUCCESS, null, next, body()));
        assertArrayEquals(expected, actual, () -> new String(actual, StandardCharsets.ISO_8859_1));
    }

    @ParameterizedTest
    @CsvSource({"ROCKETMQ,''", "JSON,''", "ROCKETMQ," + NOT_FOUND, "JSON," + NOT_FOUND})
    void aNotFoundAnswerWithItsRemarkAndNoBodyIsTheMapBuiltFrameByteForByte(SerializeType type, String remark) {
        byte[] expected = bytesOf(mapBuilt(type, 77, ResponseCode.PULL_NOT_FOUND, remark, 31, null));
        assertArrayEquals(expected, bytesOf(PullResponseEncoder.encode(ALLOC, type, 77, ResponseCode.PULL_NOT_FOUND,
            remark, 31, null)));
        ByteBuf empty = ALLOC.buffer(); // an empty body is released and left out, as Frames.encode does
        assertArrayEquals(expected, bytesOf(PullResponseEncoder.encode(ALLOC, type, 77, ResponseCode.PULL_NOT_FOUND,
            remark, 31, empty)));
        assertEquals(0, empty.refCnt());
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void rocketmqRemotingReadsTheFieldsAndTheBody(SerializeType type) throws Exception {
        byte[] frame = bytesOf(PullResponseEncoder.encode(ALLOC, type, 5, ResponseCode.SUCCESS, null, 1234, body()));
        RemotingCommand cmd = RemotingCommand.decode(java.nio.ByteBuffer.wrap(java.util.Arrays.copyOfRange(frame, 4, frame.length)));
        assertEquals(ResponseCode.SUCCESS, cmd.getCode());
        assertEquals(5, cmd.getOpaque());
        assertEquals(Map.of("suggestWhichBrokerId", "0", "nextBeginOffset", "1234", "minOffset", "0",
            "maxOffset", "1234"), cmd.getExtFields());
        assertEquals("stored records", new String(cmd.getBody(), StandardCharsets.US_ASCII));
    }

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void aRemarkJsonWouldEscapeIsRefusedAndTheBodyReleased(SerializeType type) {
        ByteBuf body = body();
        assertThrows(IllegalArgumentException.class, () -> PullResponseEncoder.encode(ALLOC, type, 1,
            ResponseCode.PULL_NOT_FOUND, "a \"quoted\" remark", 0, body));
        assertEquals(0, body.refCnt());
    }
}
