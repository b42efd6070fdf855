package io.rmqgw.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

class RunOffsetStoreTest {

    private final MessageQueue q0 = new MessageQueue("t", "b", 0);
    private final MessageQueue q1 = new MessageQueue("t", "b", 1);
    private final MessageQueue other = new MessageQueue("u", "b", 0);

    @Test
    void nothingIsEverReadFromTheStoreSoTheConsumerStartsAtTheQueueEnd() {
        RunOffsetStore store = new RunOffsetStore();
        assertEquals(-1, store.readOffset(q0, ReadOffsetType.READ_FROM_STORE));
        assertEquals(-1, store.readOffset(q0, ReadOffsetType.MEMORY_FIRST_THEN_STORE));
        store.updateOffset(q0, 42, false);
        assertEquals(-1, store.readOffset(q0, ReadOffsetType.READ_FROM_STORE));
        assertEquals(42, store.readOffset(q0, ReadOffsetType.READ_FROM_MEMORY));
        assertEquals(42, store.readOffset(q0, ReadOffsetType.MEMORY_FIRST_THEN_STORE));
    }

    @Test
    void increaseOnlyFreezeRemoveAndClone() {
        RunOffsetStore store = new RunOffsetStore();
        store.updateOffset(q0, 10, true);
        store.updateOffset(q0, 5, true);
        assertEquals(10, store.readOffset(q0, ReadOffsetType.READ_FROM_MEMORY));
        store.updateOffset(q0, 5, false);
        assertEquals(5, store.readOffset(q0, ReadOffsetType.READ_FROM_MEMORY));
        store.updateAndFreezeOffset(q1, 7);
        store.updateOffset(other, 1, false);
        assertEquals(Map.of(q0, 5L, q1, 7L), store.cloneOffsetTable("t"));
        store.removeOffset(q0);
        assertEquals(-1, store.readOffset(q0, ReadOffsetType.READ_FROM_MEMORY));
        store.persistAll(null);
        store.persist(q1);
        store.updateConsumeOffsetToBroker(q1, 9, true);
        assertEquals(7, store.readOffset(q1, ReadOffsetType.READ_FROM_MEMORY));
    }
}
