package io.rmqgw.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DeliveryLedgerTest {

    @Test
    void countsLossAndDuplicatesOfAcknowledgedSendsOnly() {
        DeliveryLedger ledger = new DeliveryLedger();
        ledger.sent("a");
        ledger.sent("b");
        ledger.sent("c");
        ledger.received("a");
        ledger.receivedAll(List.of("a", "a", "b", "unacknowledged-but-stored"));

        assertEquals(Set.of("c"), ledger.missing());
        assertEquals(2, ledger.duplicates(), "a three times: two past its first");
        assertEquals(1, ledger.duplicatedKeys());
        assertEquals(5, ledger.deliveries());
    }

    @Test
    void sendsOnlyKeepsTheSendsAndAddMergesReceipts() {
        DeliveryLedger inJvm = new DeliveryLedger();
        inJvm.sent("a");
        inJvm.sent("b");
        inJvm.received("a");
        DeliveryLedger all = inJvm.sendsOnly();
        assertEquals(Set.of("a", "b"), all.missing());
        all.add(inJvm);
        all.receivedAll(List.of("a", "b"));

        assertEquals(Set.of(), all.missing());
        assertEquals(1, all.duplicates());
        assertEquals(1, inJvm.deliveries(), "the source is left as it was");
    }
}
