package io.rmqgw.probe;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.consumer.store.OffsetStore;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * The probe consumer's offsets, kept in memory for one run and never read back from a broker: the
 * consumer starts every queue at its current end (CONSUME_FROM_LAST_OFFSET with no stored offset asks
 * the broker for the queue's max offset).
 *
 * <p>Why not the broker's offsets: a broker answers a query for a group it has no offset for with 0
 * when the queue's messages are still in memory, so a brand-new group would first re-read every earlier
 * probe message on the topic (all ignored, but they cost time and delay this run's messages). The
 * client's pulls may still commit offsets to the broker as usual; the run's own group is deleted with
 * them afterwards.
 */
final class RunOffsetStore implements OffsetStore {

    private final Map<MessageQueue, Long> offsets = new ConcurrentHashMap<>();

    @Override
    public void load() {
        // nothing stored between runs
    }

    @Override
    public void updateOffset(MessageQueue mq, long offset, boolean increaseOnly) {
        if (mq == null) {
            return;
        }
        offsets.merge(mq, offset, (old, now) -> increaseOnly ? Math.max(old, now) : now);
    }

    @Override
    public void updateAndFreezeOffset(MessageQueue mq, long offset) {
        if (mq != null) {
            offsets.put(mq, offset);
        }
    }

    /** The offset consumed so far in this run; -1 when none, and always -1 for {@link ReadOffsetType#READ_FROM_STORE}. */
    @Override
    public long readOffset(MessageQueue mq, ReadOffsetType type) {
        if (mq == null || type == ReadOffsetType.READ_FROM_STORE) {
            return -1;
        }
        return offsets.getOrDefault(mq, -1L);
    }

    @Override
    public void persistAll(Set<MessageQueue> mqs) {
        // in memory only
    }

    @Override
    public void persist(MessageQueue mq) {
        // in memory only
    }

    @Override
    public void removeOffset(MessageQueue mq) {
        if (mq != null) {
            offsets.remove(mq);
        }
    }

    @Override
    public Map<MessageQueue, Long> cloneOffsetTable(String topic) {
        Map<MessageQueue, Long> copy = new HashMap<>();
        offsets.forEach((mq, offset) -> {
            if (topic == null || topic.isEmpty() || topic.equals(mq.getTopic())) {
                copy.put(mq, offset);
            }
        });
        return copy;
    }

    @Override
    public void updateConsumeOffsetToBroker(MessageQueue mq, long offset, boolean isOneway) {
        // offsets are not committed by the probe itself
    }
}
