package io.rmqgw.codec.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.Unpooled;
import io.rmqgw.codec.json.JsonScanner.Stop;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RocketMQSerializable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The envelope schema: top-level names as fastjson writes them and in general, languages, binary places. */
class EnvelopeFieldsTest {

    private final JsonScanner s = new JsonScanner();
    private final byte[] free = new byte[256];

    private void load(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        s.load(Unpooled.wrappedBuffer(b), 0, b.length);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "code|1", "extFields|2", "flag|3", "language|4", "opaque|5", "remark|6", "version|7",
    })
    void namesAsFastjsonWritesThemAreMatchedAsWords(String name, int field) {
        load("\"" + name + "\":0}");
        assertEquals(field, EnvelopeFields.known(s, 0));
        assertEquals(name.length() + 3, s.p, "past the colon");
        // and the general way agrees, whitespace before the colon included
        load("\"" + name + "\" \t:0}");
        assertEquals(-1, EnvelopeFields.known(s, 0));
        assertEquals(field, EnvelopeFields.named(s, 0, free, 0));
        assertEquals(name.length() + 5, s.p);
    }

    @Test
    void theSerializeTypeIsMatchedWithItsValue() {
        load("\"serializeTypeCurrentRPC\":\"JSON\",\"version\":1}");
        assertEquals(EnvelopeFields.DONE, EnvelopeFields.known(s, 0));
        assertEquals(32, s.p);
        load("\"serializeTypeCurrentRPC\":\"ROCKETMQ\"}");
        assertEquals(-1, EnvelopeFields.known(s, 0));
        assertEquals(EnvelopeFields.OTHER, EnvelopeFields.named(s, 0, free, 0));
        assertEquals(26, s.p, "its value is the scan's to step over");
    }

    @Test
    void otherNamesAreOtherAndNearMissesAreNotKnown() {
        for (String name : new String[] {"codes", "cod", "Code", "foo", "a_b", "x1", "\u4e2d", ""}) {
            load("\"" + name + "\":1}");
            assertEquals(-1, EnvelopeFields.known(s, 0), name);
            assertEquals(EnvelopeFields.OTHER, EnvelopeFields.named(s, 0, free, 0), name);
            assertEquals(name.getBytes(StandardCharsets.UTF_8).length + 3, s.p, name);
        }
    }

    @Test
    void anEscapedNameIsLeftToTheGeneralReader() {
        load("\"c\\u006fde\":1}"); // spells "code"
        assertEquals(-1, EnvelopeFields.named(s, 0, free, 0));
        assertEquals(Stop.ESCAPED_NAME, s.stop());
        assertEquals(0, s.stopAt());
        load("\"code\" 1}");
        assertEquals(-1, EnvelopeFields.named(s, 0, free, 0));
        assertEquals(Stop.EXPECTED_COLON, s.stop());
        assertEquals(7, s.stopAt());
    }

    @Test
    void languagesAreReadAsTheirWireCodes() {
        for (LanguageCode language : LanguageCode.values()) {
            load("\"" + language.name() + "\",");
            assertEquals(language.getCode() & 0xFF, EnvelopeFields.language(s), language.name());
            assertEquals(language.name().length() + 2, s.p);
        }
        load("\"KOTLIN\"}");
        assertEquals(LanguageCode.OTHER.getCode(), EnvelopeFields.language(s), "a name no LanguageCode has");
        for (String notPlain : new String[] {"\"J\\u0041VA\"", "\"J\u00c4VA\"", "0", "null"}) {
            load(notPlain + "}");
            assertEquals(-1, EnvelopeFields.language(s), notPlain);
            assertEquals(Stop.LANGUAGE_NOT_PLAIN, s.stop());
            assertEquals(0, s.stopAt());
        }
    }

    /** The binary places, against rocketmq-remoting's own encoder. */
    @Test
    void theBinaryPlacesAreRocketmqRemotingsOwn() {
        RemotingCommand cmd = RemotingCommand.createResponseCommand(0x1234, "r\u00e9");
        cmd.setLanguage(LanguageCode.GO);
        cmd.setVersion(0x0567);
        cmd.setOpaque(0x01020304);
        cmd.setFlag(0x0A0B0C0D);
        byte[] theirs = RocketMQSerializable.rocketMQProtocolEncode(cmd);
        byte[] ours = new byte[EnvelopeFields.FIXED_LENGTH];
        BinaryHeaderWriter.putFixedFields(ours, 0, cmd.getCode(), cmd.getLanguage().getCode(), cmd.getVersion(),
            cmd.getOpaque(), cmd.getFlag());
        assertEquals(java.util.Arrays.toString(java.util.Arrays.copyOf(theirs, EnvelopeFields.FIXED_LENGTH)),
            java.util.Arrays.toString(ours));
        assertEquals(3, theirs[EnvelopeFields.REMARK_LENGTH_AT + 3], "the remark's length: 3 UTF-8 bytes");
        assertEquals('r', theirs[EnvelopeFields.REMARK_AT]);
        assertEquals(EnvelopeFields.MIN_LENGTH + 3, theirs.length, "no extFields: a zero length after the remark");
    }
}
