package io.rmqgw.codec.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The facade: the top-level object, why a header is left to the general reader, and the result's stamp. */
class JsonToBinaryTest {

    private static boolean transcode(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return JsonToBinary.get().transcode(Unpooled.wrappedBuffer(b), 0, b.length);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "[1]|EXPECTED_OBJECT|0",
        "\uFEFF{\"code\":1}|EXPECTED_OBJECT|0",
        "{code:1}|EXPECTED_NAME|1",
        "{\"code\":1,}|EXPECTED_NAME|10",
        "{\"code\":1 \"flag\":0}|EXPECTED_COMMA_OR_END|10",
        "{\"code\":1} {}|TRAILING_CONTENT|11",
        "{\"opaque\":1}|NO_CODE|0",
        "{}|NO_CODE|0",
        "{\"code\":\"10\"}|NOT_AN_INT|8",
        "{\"code\":1,\"w\":{}}|NESTED_VALUE|14",
        "{\"code\":1,\"extFields\":[]}|BAD_LITERAL|22",
        "{\"code\":1,\"remark\":7}|BAD_LITERAL|19",
        "{\"code\":1,\"language\":\"J\\u0041VA\"}|LANGUAGE_NOT_PLAIN|21",
        "{\"code\":1,\"c\\u006fde\":2}|ESCAPED_NAME|10",
        "{\"code\":1,\"extFields\":{\"k\":\"v\\q\"}}|BAD_ESCAPE|29",
        "{\"code\":1,\"extFields\":{\"k\":\"v||",
    })
    void whatIsLeftToTheGeneralReaderSaysWhyAndWhere(String json, String why, Integer at) {
        assertFalse(transcode(json));
        JsonScanner s = JsonToBinary.get().scanner();
        if (why == null) { // cut short
            assertEquals(JsonScanner.Stop.END_OF_INPUT, s.stop());
            assertEquals(json.length(), s.stopAt());
            return;
        }
        assertEquals(why, s.stop().name());
        assertEquals(at.intValue(), s.stopAt());
    }

    @Test
    void anAcceptedHeaderHasNoStop() {
        assertFalse(transcode(" { \"flag\" : 1 , \"code\":310,\"serializeTypeCurrentRPC\":\"JSON\", \"x\":[] } "));
        assertTrue(transcode(" { \"flag\" : 1 , \"code\":310,\"serializeTypeCurrentRPC\":\"JSON\", \"x\":-1.5e3 } "));
        JsonToBinary t = JsonToBinary.get();
        assertEquals(JsonScanner.Stop.NONE, t.scanner().stop());
        assertEquals(310, t.code());
        assertEquals(1, t.flag());
        assertFalse(t.languageGiven());
    }

    @Test
    void eachResultHasItsOwnStampHeldOnlyOnItsThread() throws Exception {
        JsonToBinary t = JsonToBinary.get();
        assertTrue(transcode("{\"code\":1}"));
        long first = t.stamp();
        assertTrue(t.holds(first));
        assertFalse(CompletableFuture.supplyAsync(() -> t.holds(first)).get(), "another thread's ask: never held");
        assertFalse(transcode("{\"code\":"));
        long failed = t.stamp();
        assertNotEquals(first, failed, "a transcode that fails starts a new result too");
        assertFalse(t.holds(first));
        assertTrue(transcode("{\"code\":2}"));
        long second = t.stamp();
        t.forget();
        assertFalse(t.holds(second));
    }
}
