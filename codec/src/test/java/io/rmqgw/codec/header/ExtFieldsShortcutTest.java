package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static io.rmqgw.codec.header.HeaderFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.MalformedReason;
import io.rmqgw.codec.frame.RemotingFrame;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A JSON frame's typed decode reads only the extFields object when the envelope noted where it starts
 * ({@link RemotingFrame#jsonExtFieldsOffset()}); it must read exactly what a decode of the whole header
 * reads, and the envelope must not note it where that would not hold.
 */
class ExtFieldsShortcutTest {

    static final String EXT = "\"extFields\":{\"a\":\"g\",\"b\":\"TopicTest\",\"x\":\"é\\u0001\",\"e\":3,\"k\":false,\"q\":null}";

    /** Headers the shortcut applies to. */
    @ParameterizedTest
    @ValueSource(strings = {
        "{\"code\":310," + EXT + ",\"flag\":0,\"language\":\"JAVA\",\"opaque\":7,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":401}",
        "{" + EXT + ",\"code\":310,\"language\":\"GO\",\"opaque\":7}",
        "{\"code\":310,\"language\":\"COBOL\",\"remark\":null,\"w\":[{\"extFields\":{\"z\":\"1\"}}]," + EXT + "}",
        " \n{ \"language\" : \"CPP\" , \"code\" : 310 ,\n\t\"extFields\" :\n {\"b\":\"T\"} , \"flag\":2 } \n",
        "{\"code\":310,\"language\":\"JAVA\",\"extFields\":{}}",
        "\uFEFF{\"code\":310,\"language\":\"JAVA\"," + EXT + "}",
    })
    void readsWhatTheWholeHeaderReads(String json) {
        assertSame(json, true);
    }

    /** Headers a decode must read whole: a remark, no language, no or two extFields objects. */
    @ParameterizedTest
    @ValueSource(strings = {
        "{\"code\":310," + EXT + ",\"language\":\"JAVA\",\"remark\":\"r\"}",
        "{\"code\":310,\"remark\":\"r\",\"language\":\"JAVA\"," + EXT + "}",
        "{\"code\":310," + EXT + ",\"opaque\":7}",
        "{\"code\":310,\"language\":\"JAVA\"," + EXT + ",\"extFields\":{\"c\":\"d\"}}",
        "{\"code\":310,\"language\":\"JAVA\",\"extFields\":null}",
        "{\"code\":310,\"language\":\"JAVA\"}",
    })
    void otherwiseReadsTheWholeHeader(String json) {
        assertSame(json, false);
    }

    @Test
    void whatRocketMqWritesTakesTheShortcut() {
        RemotingFrame frame = HeaderFixtures.frame(HeaderFixtures.sendV2Request(), SerializeType.JSON);
        try {
            int at = frame.jsonExtFieldsOffset();
            assertTrue(at > 0, "offset " + at);
            assertEquals('{', frame.headerSlice().getByte(at));
            assertEquals("\"extFields\":", frame.headerSlice().toString(at - 12, 12, java.nio.charset.StandardCharsets.UTF_8));
        } finally {
            frame.release();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"code\":310,\"language\":\"JAVA\",\"extFields\":{\"a\":{\"b\":\"c\"}}}",
        "{\"code\":310,\"language\":\"JAVA\",\"extFields\":{\"b\":\"T\",\"i\":[1]}}",
        "{\"code\":310,\"language\":\"JAVA\",\"extFields\":{\"k\":\"v\",\"LONG_KEY\":\"v\"}}"})
    void refusesWhatTheWholeHeaderDecodeRefuses(String template) {
        String json = template.replace("LONG_KEY", "y".repeat(40_000));
        RemotingFrame frame = HeaderFixtures.frame(HeaderFixtures.rawFrame(SerializeType.JSON, utf8(json), new byte[0]));
        try {
            assertTrue(frame.jsonExtFieldsOffset() > 0);
            MalformedFrameException viaFrame = assertThrows(MalformedFrameException.class,
                () -> HeaderTranscoder.decode(frame, HeaderKind.SEND_V2));
            MalformedFrameException whole = assertThrows(MalformedFrameException.class,
                () -> HeaderTranscoder.decode(SerializeType.JSON, frame.headerSlice(), HeaderKind.SEND_V2, ALLOC));
            assertEquals(MalformedReason.INVALID_JSON, viaFrame.reason());
            assertEquals(whole.getMessage(), viaFrame.getMessage());
            HeaderReaderTest.assertValidStillDecodes();
        } finally {
            frame.release();
        }
    }

    static void assertSame(String json, boolean shortcut) {
        RemotingFrame frame = HeaderFixtures.frame(HeaderFixtures.rawFrame(SerializeType.JSON, utf8(json), utf8("body")));
        try {
            assertEquals(shortcut, frame.jsonExtFieldsOffset() >= 0, json);
            for (HeaderKind kind : HeaderKind.values()) {
                for (int round = 0; round < 2; round++) { // the second round reads with learned key guesses
                    CommandHeader viaFrame = HeaderTranscoder.decode(frame, kind);
                    CommandHeader whole = HeaderTranscoder.decode(SerializeType.JSON, frame.headerSlice(), kind, ALLOC);
                    try {
                        String what = kind + " " + json;
                        assertEquals(whole.code(), viaFrame.code(), what);
                        assertEquals(whole.languageCode(), viaFrame.languageCode(), what);
                        assertEquals(whole.version(), viaFrame.version(), what);
                        assertEquals(whole.opaque(), viaFrame.opaque(), what);
                        assertEquals(whole.flag(), viaFrame.flag(), what);
                        assertEquals(whole.remark(), viaFrame.remark(), what);
                        assertEquals(whole.hasExtFields(), viaFrame.hasExtFields(), what);
                        assertEquals(whole.entryCount(), viaFrame.entryCount(), what);
                        for (int i = 0; i < whole.entryCount(); i++) {
                            assertEquals(whole.key(i), viaFrame.key(i), what);
                            assertEquals(whole.value(i), viaFrame.value(i), what);
                        }
                        for (int slot = 0; slot < whole.slots.length; slot++) {
                            assertEquals(whole.string(slot), viaFrame.string(slot), what + " slot " + slot);
                        }
                        assertArrayEquals(encoded(whole, SerializeType.ROCKETMQ), encoded(viaFrame, SerializeType.ROCKETMQ), what);
                        assertArrayEquals(encoded(whole, SerializeType.JSON), encoded(viaFrame, SerializeType.JSON), what);
                    } finally {
                        viaFrame.release();
                        whole.release();
                    }
                }
            }
        } finally {
            frame.release();
        }
    }

    static byte[] encoded(CommandHeader h, SerializeType type) {
        ByteBuf out = ALLOC.heapBuffer();
        try {
            h.encode(type, out);
            return HeaderFixtures.bytes(out);
        } finally {
            out.release();
        }
    }
}
