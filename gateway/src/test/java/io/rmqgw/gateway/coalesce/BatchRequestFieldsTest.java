package io.rmqgw.gateway.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.gateway.config.UpstreamAclConfig;
import io.rmqgw.gateway.core.RequestSigner;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A batch's SendMessageRequestHeaderV2 fields: the queue's shared ones, then the born timestamp. */
class BatchRequestFieldsTest {

    private static final CoalescedSend.BatchFields FIRST =
        new CoalescedSend.BatchFields("pg", "TBW102", 8, 3, "broker-a");

    @Test
    void theFieldsOfABatchInOrderTheBornTimestampLast() {
        BatchRequestFields.Shared shared = new BatchRequestFields.Shared("Orders", 5, FIRST);
        Map<String, String> fields = new BatchRequestFields(shared, 1_700_000_000_123L);
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("a", "pg");
        expected.put("b", "Orders");
        expected.put("c", "TBW102");
        expected.put("d", "8");
        expected.put("e", "5");
        expected.put("f", "0");
        expected.put("h", "3");
        expected.put("j", "0");
        expected.put("k", "false");
        expected.put("m", "true");
        expected.put("n", "broker-a");
        expected.put("g", "1700000000123");
        assertEquals(expected, fields);
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(fields.keySet()), "wire order");
        assertEquals("1700000000123", fields.get("g"));
        assertThrows(UnsupportedOperationException.class, () -> fields.put("x", "y"), "read-only");
        assertEquals(expected, new BatchRequestFields(shared, 1_700_000_000_123L), "another batch, the same shared part");
    }

    @Test
    void absentFirstMessageFieldsAreLeftOutOrDefaulted() {
        Map<String, String> fields = new BatchRequestFields(new BatchRequestFields.Shared("Orders", 0,
            new CoalescedSend.BatchFields(null, null, 4, 0, null)), 1L);
        assertFalse(fields.containsKey("a"));
        assertFalse(fields.containsKey("n"));
        assertEquals("TBW102", fields.get("c"));
        assertEquals(10, fields.size(), "the twelve fields but a and n");
    }

    @Test
    void sharedFieldsServeBatchesWhoseFirstMessageHasTheSameFields() {
        BatchRequestFields.Shared shared = new BatchRequestFields.Shared("Orders", 5, FIRST);
        assertTrue(shared.fits(new CoalescedSend.BatchFields("pg", "TBW102", 8, 3, "broker-a")));
        assertFalse(shared.fits(new CoalescedSend.BatchFields("other", "TBW102", 8, 3, "broker-a")));
        assertFalse(shared.fits(new CoalescedSend.BatchFields("pg", "TBW102", 8, 0, "broker-a")));
    }

    @Test
    void signedAsTheSameFieldsInAnOrdinaryMap() {
        RequestSigner signer = new RequestSigner(new UpstreamAclConfig("ak", "sk"));
        Map<String, String> fields = new BatchRequestFields(new BatchRequestFields.Shared("Orders", 5, FIRST), 42L);
        ByteBuf body = Unpooled.copiedBuffer("batch body", StandardCharsets.UTF_8);
        try {
            Map<String, String> signed = signer.sign(fields, body);
            assertEquals(signer.sign(new LinkedHashMap<>(fields), body), signed);
            assertEquals("ak", signed.get("AccessKey"));
            assertTrue(signed.containsKey("Signature"));
        } finally {
            body.release();
        }
    }
}
