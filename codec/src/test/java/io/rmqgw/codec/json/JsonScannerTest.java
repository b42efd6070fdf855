package io.rmqgw.codec.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.rmqgw.codec.json.JsonScanner.Stop;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The lexing of the single pass: each token, what it writes, where it leaves the cursor, and why it refuses. */
class JsonScannerTest {

    private final JsonScanner s = new JsonScanner();
    private final byte[] out = new byte[4096];

    private void load(byte[] input) {
        s.load(Unpooled.wrappedBuffer(input), 0, input.length);
    }

    private void load(String input) {
        load(input.getBytes(StandardCharsets.UTF_8));
    }

    /** The string token in {@code json} (opening quote at 0): its decoded UTF-8 bytes, the cursor past it. */
    private byte[] string(String json) {
        load(json);
        s.p = 1;
        int end = s.string(out, 0);
        assertTrue(end >= 0, () -> json + ": " + s.stop() + " at " + s.stopAt());
        return Arrays.copyOf(out, end);
    }

    private void assertStringStops(byte[] json, Stop why, int at) {
        load(json);
        s.p = 1;
        assertEquals(-1, s.string(out, 0));
        assertEquals(why, s.stop());
        assertEquals(at, s.stopAt());
    }

    private void assertStringStops(String json, Stop why, int at) {
        assertStringStops(json.getBytes(StandardCharsets.UTF_8), why, at);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void plainStringsAreCopiedAndTheCursorLeftPastTheQuote() {
        assertArrayEquals(utf8(""), string("\"\""));
        assertArrayEquals(utf8("TopicTest"), string("\"TopicTest\",\"b\""));
        assertEquals(11, s.p);
        // longer than a word, and ending on each position within one
        for (int n = 1; n <= 40; n++) {
            String v = "x".repeat(n);
            assertArrayEquals(utf8(v), string("\"" + v + "\"}"));
            assertEquals(n + 2, s.p);
        }
        assertEquals(Stop.NONE, s.stop());
    }

    @Test
    void shortEscapesAreDecoded() {
        assertArrayEquals(utf8("a\"b\\c/d\be\ff\ng\rh\ti"), string("\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\""));
    }

    @Test
    void unicodeEscapesAreDecodedToUtf8() {
        assertArrayEquals(utf8("k\u0001v\u0002"), string("\"k\\u0001v\\u0002\"")); // the properties' separators
        assertArrayEquals(utf8("\u00e9"), string("\"\\u00E9\""));
        assertArrayEquals(utf8("\u4e2d\u6587"), string("\"\\u4e2d\\u6587\""));
        assertArrayEquals(utf8("\uD83D\uDE00"), string("\"\\uD83D\\uDE00\"")); // a surrogate pair: one 4-byte sequence
    }

    @Test
    void anUnpairedSurrogateBecomesAQuestionMarkAsStringGetBytesWritesIt() {
        assertArrayEquals(utf8("?x"), string("\"\\uD83Dx\""));
        assertArrayEquals("\uDE00".getBytes(StandardCharsets.UTF_8), string("\"\\uDE00\"")); // "?" too
        assertArrayEquals(utf8("?\u00e9"), string("\"\\uD83D\\u00e9\"")); // a high surrogate followed by no low one
    }

    @Test
    void rawUtf8IsCopiedAsItStands() {
        String v = "caf\u00e9 \u4e2d\u6587 \uD83D\uDE00 end";
        assertArrayEquals(utf8(v), string("\"" + v + "\""));
    }

    @Test
    void malformedStringsStopWithTheReasonAndWhere() {
        assertStringStops("\"abc", Stop.END_OF_INPUT, 4);
        assertStringStops("\"abc\\", Stop.END_OF_INPUT, 4);
        assertStringStops("\"ab\\x\"", Stop.BAD_ESCAPE, 3);
        assertStringStops("\"ab\\u12G4\"", Stop.BAD_UNICODE_ESCAPE, 3);
        assertStringStops("\"ab\\u12\"", Stop.BAD_UNICODE_ESCAPE, 3);
        assertStringStops("\"a\tb\"", Stop.CONTROL_CHARACTER, 2);
        assertStringStops(new byte[] {'"', 'a', 0, 'b', '"'}, Stop.CONTROL_CHARACTER, 2);
        byte[][] invalid = {
            {(byte) 0xC3, 0x28}, {(byte) 0xC0, (byte) 0x80}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
            {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, {(byte) 0xFF}, {(byte) 0xE2, (byte) 0x82},
        };
        for (byte[] bad : invalid) {
            byte[] json = new byte[bad.length + 4];
            json[0] = '"';
            json[1] = 'v';
            System.arraycopy(bad, 0, json, 2, bad.length);
            json[bad.length + 2] = '"';
            json[bad.length + 3] = '}';
            assertStringStops(json, Stop.INVALID_UTF8, 2);
        }
        // a sequence cut by the end of the header
        assertStringStops(new byte[] {'"', (byte) 0xE4, (byte) 0xB8}, Stop.INVALID_UTF8, 1);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "0|0", "7|7", "-7|-7", "1234567|1234567", "12345678|12345678", "2147483647|2147483647",
        "-2147483648|-2147483648", "310,|310", "11}|11",
    })
    void intsAreRead(String json, long value) {
        load(json);
        assertEquals(value, s.intValue());
        assertEquals(json.replaceAll("[,}]$", "").length(), s.p);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "2147483648", "-2147483649", "12345678901", "007", "1.5", "1e3", "1E3", "\"1\"", "-", "x", "''",
    })
    void whatIsNotAnIntIsRefusedWhereItStarts(String json) {
        load(json);
        assertEquals(JsonScanner.BAIL, s.intValue());
        assertEquals(Stop.NOT_AN_INT, s.stop());
        assertEquals(0, s.stopAt());
        assertEquals(0, s.p, "the cursor stays");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "0|0", "-0|-0", "12.50|12.50", "-1e+9|-1e+9", "3E-2|3E-2", "1.5e10,|1.5e10", "01|0",
    })
    void numbersAreCopiedAsTheirText(String json, String text) {
        load(json);
        int end = s.number(out, 0);
        assertEquals(text, new String(out, 0, end, StandardCharsets.US_ASCII));
        assertEquals(text.length(), s.p);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "-|END_OF_INPUT|1", "-x|BAD_NUMBER|1", "1.|END_OF_INPUT|2", "1.x|BAD_NUMBER|2", "1e|END_OF_INPUT|2",
        "1e+}|BAD_NUMBER|3", "{}|NESTED_VALUE|0", "[1]|NESTED_VALUE|0", "x|BAD_NUMBER|0",
    })
    void malformedNumbersStopWithTheReasonAndWhere(String json, Stop why, int at) {
        load(json);
        assertEquals(-1, s.number(out, 0));
        assertEquals(why, s.stop());
        assertEquals(at, s.stopAt());
    }

    @Test
    void aNumberLongerThanJacksonAllowsIsRefused() {
        load("1".repeat(1000) + ",");
        assertEquals(1000, s.number(out, 0));
        load("1".repeat(1001) + ",");
        assertEquals(-1, s.number(out, 0));
        assertEquals(Stop.NUMBER_TOO_LONG, s.stop());
    }

    @Test
    void memberValuesAreWrittenAsTheirText() {
        String[][] cases = {
            {": \"v\"", "v"}, {":true", "true"}, {" : false", "false"}, {":42", "42"}, {":-1.5", "-1.5"},
        };
        for (String[] c : cases) {
            load(c[0]);
            int end = s.memberValue(out, 0);
            assertEquals(c[1], new String(out, 0, end, StandardCharsets.UTF_8), c[0]);
            assertEquals(c[0].length(), s.p, c[0]);
        }
        load(":null}");
        assertEquals(JsonScanner.NULL_VALUE, s.memberValue(out, 0));
        assertEquals(5, s.p);
    }

    @Test
    void malformedMemberValuesStopWithTheReasonAndWhere() {
        load(" \"v\"");
        assertEquals(-1, s.memberValue(out, 0));
        assertEquals(Stop.EXPECTED_COLON, s.stop());
        assertEquals(1, s.stopAt());
        load(": nul");
        assertEquals(-1, s.memberValue(out, 0));
        assertEquals(Stop.BAD_LITERAL, s.stop());
        assertEquals(2, s.stopAt());
        load(":{\"x\":1}");
        assertEquals(-1, s.memberValue(out, 0));
        assertEquals(Stop.NESTED_VALUE, s.stop());
        assertEquals(1, s.stopAt());
    }

    @Test
    void scalarsAreSteppedOver() {
        for (String json : new String[] {"\"x\\\"y\"", "true", "false", "null", "-3.25e1"}) {
            load(json + ",");
            assertTrue(s.skipScalar(out, 0), json);
            assertEquals(json.length(), s.p, json);
        }
        load("[1,2]");
        assertFalse(s.skipScalar(out, 0));
        assertEquals(Stop.NESTED_VALUE, s.stop());
        load("tru");
        assertFalse(s.skipScalar(out, 0));
        assertEquals(Stop.BAD_LITERAL, s.stop());
    }

    @Test
    void whitespaceAndWords() {
        load(" \t\r\n {");
        assertEquals(5, JsonScanner.ws(s.a, 0));
        assertEquals(5, JsonScanner.ws(s.a, 5));
        load("abcdefghij");
        assertEquals(EnvelopeFields.word("abcdefgh", 0), s.word(0));
        assertEquals(EnvelopeFields.word("ij", 0), s.word(8), "past the input: its zero padding");
    }

    @Test
    void aLoadStartsAfreshAndALargeHeaderIsNotKept() {
        load("\"x");
        s.p = 1;
        s.string(out, 0);
        assertEquals(Stop.END_OF_INPUT, s.stop());
        load("\"x\"");
        assertEquals(Stop.NONE, s.stop());
        assertEquals(0, s.p);
        byte[] small = s.a;
        load("\"" + "y".repeat(70_000) + "\"");
        byte[] large = s.a;
        assertTrue(large != small && large.length >= 70_002 + JsonScanner.PAD);
        load("\"z\"");
        assertTrue(s.a == small, "the kept array again: a one-off large one is not kept");
    }
}
