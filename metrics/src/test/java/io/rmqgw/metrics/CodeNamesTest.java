package io.rmqgw.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.Test;

class CodeNamesTest {

    @Test
    void knownCodesByNameOthersBucketed() {
        assertEquals("SEND_MESSAGE_V2", CodeNames.REQUESTS.label(RequestCode.SEND_MESSAGE_V2));
        assertEquals("GET_ROUTEINFO_BY_TOPIC", CodeNames.REQUESTS.label(RequestCode.GET_ROUTEINFO_BY_TOPIC));
        assertEquals("POP_MESSAGE", CodeNames.REQUESTS.label(RequestCode.POP_MESSAGE));
        assertEquals("other", CodeNames.REQUESTS.label(-7));
        assertEquals("other", CodeNames.REQUESTS.label(Integer.MAX_VALUE));
        // inherited RemotingSysResponseCode constants are there too
        assertEquals("SUCCESS", CodeNames.RESPONSES.label(ResponseCode.SUCCESS));
        assertEquals("SYSTEM_BUSY", CodeNames.RESPONSES.label(ResponseCode.SYSTEM_BUSY));
        assertEquals("PULL_NOT_FOUND", CodeNames.RESPONSES.label(ResponseCode.PULL_NOT_FOUND));
        assertEquals("other", CodeNames.RESPONSES.label(99_999));
        assertTrue(CodeNames.REQUESTS.size() > 100, "RequestCode constants: " + CodeNames.REQUESTS.size());
    }

    @Test
    void indexesAreDense() {
        CodeNames names = CodeNames.of(Map.of(300, "C", 10, "A", 20, "B"));
        assertEquals(4, names.size());
        assertEquals(0, names.index(10));
        assertEquals(2, names.index(300));
        assertEquals(3, names.index(11));
        assertEquals(names.otherIndex(), names.index(-1));
        assertEquals("B", names.name(1));
        assertEquals("other", names.name(3));
    }

    @Test
    void theTableAndTheSearchAgreeOnBothSidesOfItsEnd() {
        int end = CodeNames.DIRECT_CODES;
        CodeNames names = CodeNames.of(Map.of(-5, "NEG", 0, "ZERO", end - 1, "LAST", end, "FIRST_SEARCHED", 5000, "FAR"));
        Map<Integer, String> expected = Map.of(-5, "NEG", 0, "ZERO", end - 1, "LAST", end, "FIRST_SEARCHED", 5000, "FAR");
        for (int code = -10; code < 2 * end + 5000; code++) {
            assertEquals(expected.getOrDefault(code, "other"), names.label(code), "code " + code);
        }
        assertEquals("other", names.label(Integer.MIN_VALUE));
        assertEquals("other", names.label(Integer.MAX_VALUE));
    }
}
